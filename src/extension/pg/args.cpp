// args.cpp: the argument readers of args.hpp.
#include "pg/args.hpp"

namespace pgjq {

void require_arg(FunctionCallInfo fcinfo, int argno, const char* name)
{
    if (PG_ARGISNULL(argno))
        ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED), errmsg("%s must not be null", name)));
}

char* queue_name_arg(FunctionCallInfo fcinfo, int argno, const char* name)
{
    require_arg(fcinfo, argno, name);
    char* value = text_to_cstring(PG_GETARG_TEXT_PP(argno));
    check_queue_name(value);
    return value;
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
    check_int_range(value, name, lo, hi);
    return value;
}

int64 job_id_arg(FunctionCallInfo fcinfo, int argno, const char* name)
{
    require_arg(fcinfo, argno, name);
    return PG_GETARG_INT64(argno);
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

Interval* optional_interval_arg(FunctionCallInfo fcinfo, int argno, const char* name, const interval_bounds& bounds)
{
    if (PG_ARGISNULL(argno))
        return nullptr;
    Interval* value = PG_GETARG_INTERVAL_P(argno);
    check_interval(value, name, bounds);
    return value;
}

}  // namespace pgjq
