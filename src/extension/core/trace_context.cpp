// trace_context.cpp: checking a job's headers (see trace_context.hpp).
#include "core/trace_context.hpp"

namespace {

bool lowercase_hex(const char* text, int length)
{
    for (int i = 0; i < length; i++)
        if (!((text[i] >= '0' && text[i] <= '9') || (text[i] >= 'a' && text[i] <= 'f')))
            return false;
    return true;
}

bool all_zeros(const char* text, int length)
{
    for (int i = 0; i < length; i++)
        if (text[i] != '0')
            return false;
    return true;
}

// W3C Trace Context, version 00's layout: 2 + 1 + 32 + 1 + 16 + 1 + 2 characters. A later version may add
// fields after the flags, each after a '-'.
bool valid_traceparent(const char* text, int length)
{
    if (length < 55 || (length > 55 && text[55] != '-'))
        return false;
    if (text[2] != '-' || text[35] != '-' || text[52] != '-')
        return false;
    if (!lowercase_hex(text, 2) || !lowercase_hex(text + 3, 32) || !lowercase_hex(text + 36, 16) ||
        !lowercase_hex(text + 53, 2))
        return false;
    if (strncmp(text, "ff", 2) == 0 || (strncmp(text, "00", 2) == 0 && length != 55))
        return false;
    return !all_zeros(text + 3, 32) && !all_zeros(text + 36, 16);
}

}  // namespace

namespace pgjq {

void check_headers(const Jsonb* headers, const char* name)
{
    if (!JB_ROOT_IS_OBJECT(headers) || JB_ROOT_IS_SCALAR(headers))
        ereport(ERROR,
                (errcode(ERRCODE_INVALID_PARAMETER_VALUE), errmsg("%s must be a JSON object", name),
                 errdetail("Give its members as strings, as in {\"traceparent\": \"00-...-01\"}.")));
    int size = VARSIZE(headers) - VARHDRSZ;
    if (size > k_max_headers_bytes)
        ereport(ERROR,
                (errcode(ERRCODE_INVALID_PARAMETER_VALUE), errmsg("%s is too large (%d bytes)", name, size),
                 errdetail("A job's headers take at most %d bytes.", k_max_headers_bytes)));
    int members = JsonContainerSize(&headers->root);
    if (members > k_max_headers)
        ereport(ERROR,
                (errcode(ERRCODE_INVALID_PARAMETER_VALUE), errmsg("%s has %d members", name, members),
                 errdetail("A job has at most %d headers.", k_max_headers)));
    JsonbIterator* it = JsonbIteratorInit(const_cast<JsonbContainer*>(&headers->root));
    JsonbValue key, value;
    JsonbIteratorToken token;
    while ((token = JsonbIteratorNext(&it, &key, true)) != WJB_DONE) {
        if (token != WJB_KEY)
            continue;
        char* member = pnstrdup(key.val.string.val, key.val.string.len);
        if (key.val.string.len == 0)
            ereport(ERROR,
                    (errcode(ERRCODE_INVALID_PARAMETER_VALUE), errmsg("%s has a member with an empty name", name)));
        token = JsonbIteratorNext(&it, &value, true);
        if (value.type != jbvString)
            ereport(ERROR,
                    (errcode(ERRCODE_INVALID_PARAMETER_VALUE), errmsg("%s.%s must be a string", name, member),
                     errdetail("Headers are passed on as text, as HTTP headers are.")));
        if (strcmp(member, "traceparent") == 0 && !valid_traceparent(value.val.string.val, value.val.string.len))
            ereport(ERROR,
                    (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                     errmsg("%s.traceparent \"%s\" is not a W3C traceparent", name,
                            pnstrdup(value.val.string.val, value.val.string.len < 80 ? value.val.string.len : 80)),
                     errdetail("A traceparent is version-traceid-parentid-flags in lowercase hex, as in "
                               "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01; neither id may be all "
                               "zeros.")));
    }
}

}  // namespace pgjq
