// schedules.cpp: periodic jobs. schedule (create or replace), unschedule, pause_schedule, resume_schedule,
// next_firings (a preview of an expression's firings) and fire_schedules (what the maintenance worker does,
// by hand). Firing itself is maintenance/schedules.cpp's.
//
// Who may do what: a producer of a queue schedules jobs into it, and the jobs are enqueued as its role; the
// role that set a schedule (or a member of it) and the admins of its queue replace, pause, resume and remove
// it; pgjq.schedules shows a schedule to the workers, admins and observers of its queue and to the producer
// whose role set it (as pgjq.jobs shows jobs). To anyone else a schedule does not exist, except that names
// are shared by every role of the database: replacing another role's schedule is refused (42501).
//
// A change waits for a firing transaction that holds the schedule's row, and computes the next firing from
// the clock after that: a firing is never enqueued twice because the schedule was replaced meanwhile.
#include "maintenance/schedules.hpp"
#include "core/api_function.hpp"
#include "core/deadlines.hpp"
#include "core/schedule_clock.hpp"
#include "pg/args.hpp"
#include "pg/spi.hpp"

namespace {

using namespace pgjq;

SPIPlanPtr s_lock, s_queue_exists, s_insert, s_replace, s_delete, s_set_paused;

// clang-format off
const plan_text k_lock = {
    "SELECT queue_name, scheduled_by::oid, cron, time_zone, paused FROM pgjq.schedules"
    " WHERE schedule_name = $1 FOR UPDATE",
    1, {TEXTOID}};
const plan_text k_queue_exists = {
    "SELECT 1 FROM pgjq.queues WHERE queue_name = $1 FOR KEY SHARE", 1, {TEXTOID}};
#define SCHEDULE_TYPES                                                                                 \
    {TEXTOID, TEXTOID, TEXTOID, TEXTOID, JSONBOID, TEXTOID, INT4OID, INT4OID, TEXTOID, BOOLOID, REGROLEOID, \
     TIMESTAMPTZOID}
const plan_text k_insert = {
    "INSERT INTO pgjq.schedules (schedule_name, cron, time_zone, job_type, payload, queue_name, priority,"
    "   max_attempts, missed, paused, scheduled_by, next_run)"
    " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)"
    " ON CONFLICT (schedule_name) DO NOTHING",
    12, SCHEDULE_TYPES};
// Replacing keeps the schedule's history (last run, job and error, counts) and forgets a refused firing.
const plan_text k_replace = {
    "UPDATE pgjq.schedules SET cron = $2, time_zone = $3, job_type = $4, payload = $5, queue_name = $6,"
    "       priority = $7, max_attempts = $8, missed = $9, paused = $10, scheduled_by = $11, next_run = $12,"
    "       retry_at = NULL, failures = 0, updated_at = now()"
    " WHERE schedule_name = $1",
    12, SCHEDULE_TYPES};
const plan_text k_delete = {"DELETE FROM pgjq.schedules WHERE schedule_name = $1", 1, {TEXTOID}};
const plan_text k_set_paused = {
    "UPDATE pgjq.schedules SET paused = $2, next_run = $3, retry_at = NULL, failures = 0, updated_at = now()"
    " WHERE schedule_name = $1",
    3, {TEXTOID, BOOLOID, TIMESTAMPTZOID}};
// clang-format on

// Most tries of a schedule() that races another one creating the same name.
constexpr int k_max_tries = 10;
// Most firings next_firings returns.
constexpr int32 k_max_preview = 1000;

// A schedule's row, locked by k_lock.
struct schedule_row {
    bool found;
    char* queue_name;
    Oid scheduled_by;
    char* cron;
    char* time_zone;
    bool paused;
};

schedule_row lock_schedule(const char* name)
{
    Datum values[1] = {CStringGetTextDatum(name)};
    schedule_row row = {false, nullptr, InvalidOid, nullptr, nullptr, false};
    if (run_plan(saved_plan(&s_lock, k_lock), values, nullptr, 1) == 0)
        return row;
    HeapTuple tuple = SPI_tuptable->vals[0];
    TupleDesc desc = SPI_tuptable->tupdesc;
    bool isnull;
    row.found = true;
    row.queue_name = SPI_getvalue(tuple, desc, 1);
    row.scheduled_by = DatumGetObjectId(SPI_getbinval(tuple, desc, 2, &isnull));
    row.cron = SPI_getvalue(tuple, desc, 3);
    row.time_zone = SPI_getvalue(tuple, desc, 4);
    row.paused = DatumGetBool(SPI_getbinval(tuple, desc, 5, &isnull));
    return row;
}

// The role that set the schedule (or a member of it) and its queue's admins.
bool may_manage(const api_call& call, const schedule_row& row)
{
    return call.privileged || has_privs_of_role(call.caller, row.scheduled_by) ||
        holds(call, cap_admin, row.queue_name);
}

enum class schedule_access { none, read_only, manage };

// What the caller may do with the schedule: to a role that may not read it, it does not exist.
schedule_access access_to(const api_call& call, const schedule_row& row)
{
    if (!row.found)
        return schedule_access::none;
    if (may_manage(call, row))
        return schedule_access::manage;
    return may_read_job(call.caller, row.queue_name, row.scheduled_by) ? schedule_access::read_only
                                                                       : schedule_access::none;
}

void refuse(const char* what, const char* name)
{
    ereport(ERROR,
            (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE), errmsg("permission denied to %s schedule \"%s\"", what, name),
             errdetail("Only the role that set a schedule (or a member of it) and the admins of its queue may "
                       "change or remove it.")));
}

// The first firing after now, from the clock (read after the schedule's row was locked).
TimestampTz first_firing(const char* cron, const char* time_zone)
{
    schedule_clock clock = {cron_or_raise(cron), time_zone_or_raise(time_zone)};
    TimestampTz next = next_firing(clock, GetCurrentTimestamp());
    if (next == DT_NOEND)
        ereport(ERROR,
                (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                 errmsg("cron expression \"%s\" does not fire within %d years", cron, k_search_years)));
    return next;
}

// The missed argument: what to do with firings missed while nothing fired.
const char* missed_arg(FunctionCallInfo fcinfo, int argno)
{
    require_arg(fcinfo, argno, "missed");
    char* missed = text_to_cstring(PG_GETARG_TEXT_PP(argno));
    if (strcmp(missed, "skip") != 0 && strcmp(missed, "run_once") != 0)
        ereport(ERROR,
                (errcode(ERRCODE_INVALID_PARAMETER_VALUE), errmsg("missed \"%s\" is not understood", missed),
                 errdetail("missed is 'skip' (firings missed by more than a minute are dropped) or 'run_once' "
                           "(one job for all of them).")));
    return missed;
}

// pause_schedule and resume_schedule.
Datum set_paused(FunctionCallInfo fcinfo, const api_call& call, bool paused)
{
    require_some(call, cap_producer | cap_admin);
    char* name = short_text_arg(fcinfo, 0, "schedule_name");
    SPI_connect();
    schedule_row row = lock_schedule(name);
    schedule_access allowed = access_to(call, row);
    if (allowed == schedule_access::none) {
        SPI_finish();
        PG_RETURN_BOOL(false);
    }
    if (allowed != schedule_access::manage)
        refuse(paused ? "pause" : "resume", name);
    if (row.paused != paused) {
        TimestampTz next = paused ? DT_NOEND : first_firing(row.cron, row.time_zone);
        Datum values[3] = {CStringGetTextDatum(name), BoolGetDatum(paused), TimestampTzGetDatum(next)};
        char nulls[3] = {' ', ' ', paused ? 'n' : ' '};
        run_plan(saved_plan(&s_set_paused, k_set_paused), values, nulls);
        if (!paused)
            wake_maintenance_at_commit(next, deadline_kind::schedule_due);
    }
    SPI_finish();
    PG_RETURN_BOOL(true);
}

}  // namespace

// Creates the schedule, or replaces the one of that name; returns its first firing (NULL when paused).
PGJQ_API_FUNCTION(schedule)
{
    require_some(call, cap_producer);
    char* name = short_text_arg(fcinfo, 0, "schedule_name");
    require_arg(fcinfo, 1, "cron");
    char* cron = text_to_cstring(PG_GETARG_TEXT_PP(1));
    cron_or_raise(cron);
    char* job_type = short_text_arg(fcinfo, 2, "job_type");
    Jsonb* payload = json_arg(fcinfo, 3, "payload");
    char* queue_name = queue_name_arg(fcinfo, 4);
    int32 priority = int_arg_in_range(fcinfo, 5, "priority", k_min_priority, k_max_priority);
    bool has_max_attempts = !PG_ARGISNULL(6);
    int32 max_attempts =
        has_max_attempts ? int_arg_in_range(fcinfo, 6, "max_attempts", k_min_attempts, k_max_attempts) : 0;
    require_arg(fcinfo, 7, "time_zone");
    // Kept under the zone's own name ('america/new_york' is America/New_York).
    const char* time_zone = pg_get_timezone_name(time_zone_or_raise(text_to_cstring(PG_GETARG_TEXT_PP(7))));
    const char* missed = missed_arg(fcinfo, 8);
    require_arg(fcinfo, 9, "paused");
    bool paused = PG_GETARG_BOOL(9);
    require(call, cap_producer, queue_name);

    SPI_connect();
    Datum queue_values[1] = {CStringGetTextDatum(queue_name)};
    if (run_plan(saved_plan(&s_queue_exists, k_queue_exists), queue_values, nullptr, 1) == 0)
        raise_unknown_queue(queue_name);
    TimestampTz next = DT_NOEND;
    for (int attempt = 0;; attempt++) {
        schedule_row row = lock_schedule(name);
        if (row.found && !may_manage(call, row))
            refuse("replace", name);
        next = paused ? DT_NOEND : first_firing(cron, time_zone);
        Datum values[12] = {
            CStringGetTextDatum(name),     CStringGetTextDatum(cron),     CStringGetTextDatum(time_zone),
            CStringGetTextDatum(job_type), JsonbPGetDatum(payload),       CStringGetTextDatum(queue_name),
            Int32GetDatum(priority),       Int32GetDatum(max_attempts),   CStringGetTextDatum(missed),
            BoolGetDatum(paused),          ObjectIdGetDatum(call.caller), TimestampTzGetDatum(next)};
        char nulls[12] = {
            ' ', ' ', ' ', ' ', ' ', ' ', ' ', has_max_attempts ? ' ' : 'n', ' ', ' ', ' ', paused ? 'n' : ' '};
        if (row.found) {
            run_plan(saved_plan(&s_replace, k_replace), values, nulls);
            break;
        }
        if (run_plan(saved_plan(&s_insert, k_insert), values, nulls) > 0)
            break;
        // Another transaction created the name between our look and our insert: look again (and wait for it).
        if (attempt >= k_max_tries)
            ereport(ERROR,
                    (errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
                     errmsg("could not set schedule \"%s\" under concurrent updates", name)));
    }
    if (!paused)
        wake_maintenance_at_commit(next, deadline_kind::schedule_due);
    SPI_finish();
    warn_without_maintenance(psprintf("schedule \"%s\"", name));
    if (paused)
        PG_RETURN_NULL();
    PG_RETURN_TIMESTAMPTZ(next);
}

// true when it removed the schedule; false when there is none of that name (that the caller may see).
PGJQ_API_FUNCTION(unschedule)
{
    require_some(call, cap_producer | cap_admin);
    char* name = short_text_arg(fcinfo, 0, "schedule_name");
    SPI_connect();
    schedule_row row = lock_schedule(name);
    schedule_access allowed = access_to(call, row);
    if (allowed == schedule_access::read_only)
        refuse("remove", name);
    if (allowed == schedule_access::manage) {
        Datum values[1] = {CStringGetTextDatum(name)};
        run_plan(saved_plan(&s_delete, k_delete), values, nullptr);
    }
    SPI_finish();
    PG_RETURN_BOOL(allowed == schedule_access::manage);
}

PGJQ_API_FUNCTION(pause_schedule)
{
    return set_paused(fcinfo, call, true);
}

// Firings while it was paused are not made up for: it fires next at the first firing after now.
PGJQ_API_FUNCTION(resume_schedule)
{
    return set_paused(fcinfo, call, false);
}

// The next `count` firings of an expression in a time zone after a time, as a schedule would fire them.
PGJQ_API_FUNCTION(next_firings)
{
    require_some(call, cap_producer | cap_worker | cap_admin | cap_observer);
    require_arg(fcinfo, 0, "cron");
    char* cron = text_to_cstring(PG_GETARG_TEXT_PP(0));
    require_arg(fcinfo, 1, "time_zone");
    schedule_clock clock = {cron_or_raise(cron), time_zone_or_raise(text_to_cstring(PG_GETARG_TEXT_PP(1)))};
    require_arg(fcinfo, 2, "after");
    TimestampTz after = PG_GETARG_TIMESTAMPTZ(2);
    if (TIMESTAMP_NOT_FINITE(after))
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE), errmsg("after must be a finite timestamp")));
    int32 count = int_arg_in_range(fcinfo, 3, "count", 1, k_max_preview);
    InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);
    ReturnSetInfo* rsinfo = reinterpret_cast<ReturnSetInfo*>(fcinfo->resultinfo);
    for (int32 i = 0; i < count; i++) {
        after = next_firing(clock, after);
        if (after == DT_NOEND)
            break;
        Datum values[1] = {TimestampTzGetDatum(after)};
        bool nulls[1] = {false};
        tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
    }
    return (Datum) 0;
}

// Fires every due schedule now, in the caller's transaction; returns how many jobs it enqueued.
PGJQ_API_FUNCTION(fire_schedules)
{
    require_every(call, cap_admin);
    SPI_connect();
    int64 jobs = 0;
    for (;;) {
        constexpr int k_batch = 100;
        firing_outcome outcome = fire_due_schedules(k_batch, false);
        jobs += outcome.jobs;
        if (outcome.schedules < k_batch)
            break;
    }
    SPI_finish();
    PG_RETURN_INT64(jobs);
}
