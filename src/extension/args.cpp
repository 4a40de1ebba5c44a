// args.cpp: argument checks shared by the SQL functions (see args.hpp).
#include "args.hpp"

namespace pgjq {

int max_payload_bytes = 1024 * 1024;

void require_arg(FunctionCallInfo fcinfo, int argno, const char* name)
{
    if (PG_ARGISNULL(argno))
        ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED), errmsg("%s must not be null", name)));
}

void check_queue_name(const char* queue_name)
{
    size_t len = strlen(queue_name);
    bool ok = len >= 1 && len <= 48;
    for (size_t i = 0; ok && i < len; i++) {
        char c = queue_name[i];
        ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-';
    }
    if (!ok)
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("invalid queue name \"%s\"", queue_name),
                        errdetail("A queue name is 1 to 48 characters from a-z, 0-9, '_', '.' and '-'.")));
}

char* queue_name_arg(FunctionCallInfo fcinfo, int argno, const char* name)
{
    require_arg(fcinfo, argno, name);
    char* value = text_to_cstring(PG_GETARG_TEXT_PP(argno));
    check_queue_name(value);
    return value;
}

void check_short_text(const char* value, const char* name)
{
    size_t len = strlen(value);
    if (len == 0)
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE), errmsg("%s must not be empty", name)));
    if (len > static_cast<size_t>(k_max_name_bytes))
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("%s is too long (%zu bytes)", name, len),
                        errdetail("The limit is %d bytes.", k_max_name_bytes)));
}

char* short_text_arg(FunctionCallInfo fcinfo, int argno, const char* name)
{
    require_arg(fcinfo, argno, name);
    char* value = text_to_cstring(PG_GETARG_TEXT_PP(argno));
    check_short_text(value, name);
    return value;
}

char* optional_short_text_arg(FunctionCallInfo fcinfo, int argno, const char* name)
{
    if (PG_ARGISNULL(argno))
        return nullptr;
    char* value = text_to_cstring(PG_GETARG_TEXT_PP(argno));
    check_short_text(value, name);
    return value;
}

int32 int_arg_in_range(FunctionCallInfo fcinfo, int argno, const char* name, int32 lo, int32 hi)
{
    require_arg(fcinfo, argno, name);
    int32 value = PG_GETARG_INT32(argno);
    if (value < lo || value > hi)
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("%s %d is out of range", name, value),
                        errdetail("%s must be between %d and %d.", name, lo, hi)));
    return value;
}

int64 job_id_arg(FunctionCallInfo fcinfo, int argno, const char* name)
{
    require_arg(fcinfo, argno, name);
    return PG_GETARG_INT64(argno);
}

void check_json_size(const Jsonb* value, const char* name)
{
    int size = VARSIZE(value) - VARHDRSZ;
    if (size > max_payload_bytes)
        ereport(ERROR, (errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
                        errmsg("%s is too large (%d bytes)", name, size),
                        errdetail("The limit set by pgjq.max_payload_bytes is %d bytes.", max_payload_bytes),
                        errhint("Store large data elsewhere and enqueue a reference to it.")));
}

Jsonb* json_arg(FunctionCallInfo fcinfo, int argno, const char* name)
{
    require_arg(fcinfo, argno, name);
    Jsonb* value = PG_GETARG_JSONB_P(argno);
    check_json_size(value, name);
    return value;
}

Jsonb* optional_json_arg(FunctionCallInfo fcinfo, int argno, const char* name)
{
    if (PG_ARGISNULL(argno))
        return nullptr;
    return json_arg(fcinfo, argno, name);
}

int64 interval_usecs(const Interval* value)
{
    return value->time + (static_cast<int64>(value->day) + static_cast<int64>(value->month) * DAYS_PER_MONTH)
                             * USECS_PER_DAY;
}

Interval* interval_from_usecs(int64 usecs)
{
    Interval* result = static_cast<Interval*>(palloc0(sizeof(Interval)));
    result->time = usecs;
    return result;
}

Interval* optional_interval_arg(FunctionCallInfo fcinfo, int argno, const char* name, bool allow_zero)
{
    if (PG_ARGISNULL(argno))
        return nullptr;
    Interval* value = PG_GETARG_INTERVAL_P(argno);
    int64 usecs = interval_usecs(value);
    if (usecs < 0 || (!allow_zero && usecs == 0))
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("%s must be %s, got %s", name, allow_zero ? "zero or positive" : "positive",
                               DatumGetCString(DirectFunctionCall1(interval_out, IntervalPGetDatum(value))))));
    return value;
}

} // namespace pgjq
