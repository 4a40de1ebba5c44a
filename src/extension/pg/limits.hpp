// limits.hpp: the domain's rules, each written once: the named limits, and the value checks that every
// path applies (the SQL functions' arguments, INSERT INTO pgjq.jobs, alter_queue). A check raises an
// ERROR whose message names the value, with a SQLSTATE callers can branch on (22023 for a value out of
// range, 54000 for a payload over its limit, 42704 for an unknown queue).
#pragma once

#include "pg/pg.hpp"

namespace pgjq {

// Queue names: 1 to 48 characters from a-z, 0-9, '_', '.', '-'. The same rule stands where it cannot be
// this constant: pgjq.queues' CHECK queue_name_format (for direct writes) and pgjq_router's placements (a
// test holds the router to the nodes); the command line and the client leave it to the server.
constexpr int k_queue_name_max = 48;
// job_type, worker_id, unique_key, current_stage
constexpr int k_max_name_bytes = 200;
// Jobs per claim and per completion call.
constexpr int k_max_batch_size = 10000;
constexpr int32 k_min_priority = 0;
constexpr int32 k_max_priority = 32767;
constexpr int32 k_default_priority = 100;
constexpr int32 k_min_attempts = 1;
constexpr int32 k_max_attempts = 1000;
// Counter rows per queue in pgjq.queue_depth (slots 0 to 15, created with the queue).
constexpr int k_depth_slots = 16;
// A failure's message is kept up to this many bytes (cut on a character boundary and marked beyond).
constexpr int k_max_error_bytes = 8192;
// Failed attempts whose error a job keeps (pgjq.job_errors): the newest ones.
constexpr int k_kept_errors_per_job = 20;
// Jobs one job may depend on (depends_on).
constexpr int k_max_dependencies = 100;
// Workflows (docs/workflows.md): steps per workflow (one call may add them all), steps a step may depend on
// (the children of a join), dependencies one call adds, checkpoints per job. A call's steps array is held to
// pgjq.max_batch_bytes, each step's payload to pgjq.max_payload_bytes.
constexpr int k_max_workflow_steps = 100000;
constexpr int k_max_step_parents = 10000;
constexpr int k_max_edges_per_call = 100000;
constexpr int k_max_checkpoints = 1000;
// Queue settings (pgjq.queues' CHECK constraints say the same for direct writes).
constexpr int32 k_max_group_concurrency = 10000;
constexpr int32 k_max_running = 1000000;
constexpr int32 k_max_rate_limit = 1000000;

// The range of an interval argument, so that the arithmetic on timestamps never overflows. Lengths are
// counted as PostgreSQL compares intervals: a month is 30 days, so "1 year" is 360 days.
struct interval_bounds {
    int64 min_usecs;
    int64 max_usecs;
    const char* min_text;
    const char* max_text;
};
constexpr int64 k_usecs_per_year = INT64CONST(12) * 30 * USECS_PER_DAY;
constexpr interval_bounds k_lease_bounds = {1, k_usecs_per_year, "1 microsecond", "1 year"};
constexpr interval_bounds k_retry_bounds = {0, k_usecs_per_year, "0", "1 year"};  // retry_base, retry_cap, retry_in
constexpr interval_bounds k_retention_bounds = {0, 100 * k_usecs_per_year, "0", "100 years"};   // retention, prune
constexpr interval_bounds k_timeout_bounds = {1, k_usecs_per_year, "1 microsecond", "1 year"};  // timeout, job_timeout
constexpr interval_bounds k_unique_for_bounds = {1, k_usecs_per_year, "1 microsecond", "1 year"};
constexpr interval_bounds k_wait_bounds = {1, k_usecs_per_year, "1 microsecond", "1 year"};  // event waits, keep_for
constexpr interval_bounds k_rate_interval_bounds = {1000, USECS_PER_DAY, "1 millisecond", "1 day"};

void check_queue_name(const char* queue_name);
void check_short_text(const char* value, const char* name);
void check_int_range(int64 value, const char* name, int64 lo, int64 hi);
void check_priority(int32 priority);
void check_max_attempts(int32 max_attempts);
void check_max_pending(int64 max_pending);
void check_run_at(TimestampTz run_at);
void check_json_size(const Jsonb* value, const char* name);
void check_interval(const Interval* value, const char* name, const interval_bounds& bounds);

// 42704, for every call that names a queue that does not exist.
[[noreturn]] void raise_unknown_queue(const char* queue_name);

// An interval's length in microseconds (a month counts 30 days, a day 24 hours), saturated at the ends of
// int64: no interval, however long, comes out as a small or negative number.
int64 interval_usecs(const Interval* value);

// `message` if it fits k_max_error_bytes, else its start cut on a character boundary and marked (palloc'd).
char* capped_error_message(char* message);
Interval* interval_from_usecs(int64 usecs);

}  // namespace pgjq
