// pgjq_router.cpp: pgjq_router.so, the router database's one C function: the keywords of a node's conninfo
// as libpq reads them (PQconninfoParse), so that the router judges the string PL/Proxy will hand to libpq,
// not a regex's idea of it (libpq needs no blank after a quoted value: dbname='x'user=y sets user). The
// policy (which keywords a node may set) is the SQL's, pgjq_router.checked_conninfo. A module of its own: the
// router database must never load pgjq.so, whose _PG_init registers pgjq's hooks.
#include <libpq-fe.h>

#include "pg/boundary.hpp"

extern "C" {
PG_MODULE_MAGIC;
}

namespace {

// libpq reads a string that starts with one of its URI designators as a URI (fe-connect.c,
// uri_prefix_length), anything else as keyword=value pairs.
bool is_uri(const char* conninfo)
{
    return strncmp(conninfo, "postgresql://", strlen("postgresql://")) == 0 ||
        strncmp(conninfo, "postgres://", strlen("postgres://")) == 0;
}

// libpq's messages end in a newline; PostgreSQL's do not.
void chomp(char* message)
{
    size_t length = strlen(message);
    while (length > 0 && (message[length - 1] == '\n' || message[length - 1] == '\r'))
        message[--length] = '\0';
}

}  // namespace

// conninfo_keywords(conninfo text) -> text[]: the keywords the conninfo sets, in libpq's order. 22023 when
// libpq cannot parse it, or when it is a URI: PL/Proxy appends " user='...'" to a node's conninfo, which
// only the keyword=value form takes.
PGJQ_FUNCTION(conninfo_keywords)
{
    char* conninfo = text_to_cstring(PG_GETARG_TEXT_PP(0));
    if (is_uri(conninfo))
        ereport(ERROR,
                (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                 errmsg("pgjq: a node's conninfo must be keyword=value pairs, not a URI"),
                 errdetail("PL/Proxy appends the user to the conninfo, which a URI cannot take.")));

    char* parse_error = nullptr;
    PQconninfoOption* options = PQconninfoParse(conninfo, &parse_error);
    if (options == nullptr) {
        // libpq's memory is malloc'd: copy the message out and free it before raising.
        char message[512];
        strlcpy(message, parse_error != nullptr ? parse_error : "out of memory", sizeof message);
        bool out_of_memory = parse_error == nullptr;
        PQfreemem(parse_error);
        chomp(message);
        ereport(ERROR,
                (errcode(out_of_memory ? ERRCODE_OUT_OF_MEMORY : ERRCODE_INVALID_PARAMETER_VALUE),
                 errmsg("pgjq: invalid conninfo: %s", message)));
    }

    ArrayType* keywords = nullptr;
    PG_TRY();
    {
        int count = 0;
        for (PQconninfoOption* option = options; option->keyword != nullptr; ++option)
            if (option->val != nullptr)
                ++count;
        if (count == 0) {
            keywords = construct_empty_array(TEXTOID);
        } else {
            Datum* elements = static_cast<Datum*>(palloc(sizeof(Datum) * count));
            int i = 0;
            for (PQconninfoOption* option = options; option->keyword != nullptr; ++option)
                if (option->val != nullptr)
                    elements[i++] = PointerGetDatum(cstring_to_text(option->keyword));
            keywords = construct_array(elements, count, TEXTOID, -1, false, TYPALIGN_INT);
        }
    }
    PG_FINALLY();
    {
        PQconninfoFree(options);
    }
    PG_END_TRY();
    PG_RETURN_ARRAYTYPE_P(keywords);
}
