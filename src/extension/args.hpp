// args.hpp: argument checks shared by the SQL functions. Each raises an ERROR whose message names the
// argument and the bad value, with a SQLSTATE callers can branch on (22004 for NULL, 22023 otherwise).
#pragma once

#include "pg.hpp"

namespace pgjq {

extern int max_payload_bytes;  // GUC pgjq.max_payload_bytes

constexpr int k_max_name_bytes = 200;       // job_type, worker_id, unique_key, current_stage
constexpr int k_max_batch_size = 10000;
constexpr int k_default_priority = 100;

void require_arg(FunctionCallInfo fcinfo, int argno, const char* name);
void check_queue_name(const char* queue_name);

// Required arguments, checked and returned as palloc'd C strings / values.
char* queue_name_arg(FunctionCallInfo fcinfo, int argno, const char* name = "queue_name");
char* short_text_arg(FunctionCallInfo fcinfo, int argno, const char* name);
int32 int_arg_in_range(FunctionCallInfo fcinfo, int argno, const char* name, int32 lo, int32 hi);
int64 job_id_arg(FunctionCallInfo fcinfo, int argno, const char* name = "job_id");
Jsonb* json_arg(FunctionCallInfo fcinfo, int argno, const char* name);

// Optional arguments: return nullptr when NULL.
char* optional_short_text_arg(FunctionCallInfo fcinfo, int argno, const char* name);
Interval* optional_interval_arg(FunctionCallInfo fcinfo, int argno, const char* name, bool allow_zero);
Jsonb* optional_json_arg(FunctionCallInfo fcinfo, int argno, const char* name);

void check_json_size(const Jsonb* value, const char* name);
void check_short_text(const char* value, const char* name);

// An interval's length in microseconds (a month counts 30 days, a day 24 hours).
int64 interval_usecs(const Interval* value);
Interval* interval_from_usecs(int64 usecs);

} // namespace pgjq
