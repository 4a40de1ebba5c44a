// args.hpp: reading the SQL functions' arguments. Each reader checks its value with the rules of
// limits.hpp and returns it palloc'd or by value; a required argument that is NULL is refused with 22004.
#pragma once

#include "pg/limits.hpp"

namespace pgjq {

void require_arg(FunctionCallInfo fcinfo, int argno, const char* name);

// Required arguments.
char* queue_name_arg(FunctionCallInfo fcinfo, int argno, const char* name = "queue_name");
char* short_text_arg(FunctionCallInfo fcinfo, int argno, const char* name);
int32 int_arg_in_range(FunctionCallInfo fcinfo, int argno, const char* name, int32 lo, int32 hi);
int64 job_id_arg(FunctionCallInfo fcinfo, int argno, const char* name = "job_id");
Jsonb* json_arg(FunctionCallInfo fcinfo, int argno, const char* name);

// Optional arguments: nullptr when NULL.
char* optional_short_text_arg(FunctionCallInfo fcinfo, int argno, const char* name);
Interval* optional_interval_arg(FunctionCallInfo fcinfo, int argno, const char* name, const interval_bounds& bounds);
Jsonb* optional_json_arg(FunctionCallInfo fcinfo, int argno, const char* name);

}  // namespace pgjq
