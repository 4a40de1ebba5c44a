// schedules.cpp: firing due schedules (see schedules.hpp), and the maintenance duty that does it on time.
//
// The duty runs at the earliest due schedule: that time is its outcome's deadline, so the launcher starts a
// worker for it even in an idle database, and pgjq.schedule() reports a new schedule's first firing at its
// commit (core/deadlines.hpp, deadline_kind::schedule_due).
#include "maintenance/schedules.hpp"

#include "core/schedule_clock.hpp"
#include "maintenance/duty.hpp"
#include "pg/catalog.hpp"
#include "pg/limits.hpp"
#include "pg/spi.hpp"

namespace {

using namespace pgjq;

// Firings counted per catch-up; beyond, the count stops there (firings_missed says so).
constexpr int64 k_count_cap = 100000;
constexpr int64 k_first_retry_usecs = USECS_PER_SEC;
constexpr int64 k_max_retry_usecs = 60 * USECS_PER_SEC;

SPIPlanPtr s_due, s_enqueue, s_record, s_next_due;

// clang-format off
// $1: the transaction's now(); $2: how many.
const plan_text k_due = {
    "SELECT schedule_name, cron, time_zone, job_type, payload, queue_name, priority, max_attempts,"
    "       missed = 'run_once', scheduled_by::oid, next_run, retry_at IS NOT NULL, failures"
    "  FROM pgjq.schedules"
    " WHERE NOT paused AND coalesce(retry_at, next_run) <= $1"
    " ORDER BY coalesce(retry_at, next_run), schedule_name LIMIT $2 FOR UPDATE SKIP LOCKED",
    2, {TIMESTAMPTZOID, INT4OID}};
// The public enqueue, as any producer calls it: job_type, payload, queue_name, priority, run_at, max_attempts.
const plan_text k_enqueue = {
    "SELECT pgjq.enqueue($1, $2, $3, $4, $5, $6)",
    6, {TEXTOID, JSONBOID, TEXTOID, INT4OID, TIMESTAMPTZOID, INT4OID}};
const plan_text k_record = {
    "UPDATE pgjq.schedules SET next_run = $2, retry_at = $3, failures = $4,"
    "       last_run = coalesce($5, last_run), last_job_id = coalesce($6, last_job_id),"
    "       last_error = coalesce($7, last_error), last_error_at = coalesce($8, last_error_at),"
    "       jobs_enqueued = jobs_enqueued + $9, firings_missed = firings_missed + $10"
    " WHERE schedule_name = $1",
    10, {TEXTOID, TIMESTAMPTZOID, TIMESTAMPTZOID, INT4OID, TIMESTAMPTZOID, INT8OID, TEXTOID, TIMESTAMPTZOID,
         INT8OID, INT8OID}};
const plan_text k_next_due = {
    "SELECT min(coalesce(retry_at, next_run)) FROM pgjq.schedules WHERE NOT paused", 0, {}};
// clang-format on

// A due schedule, copied out of SPI's result (strings palloc'd).
struct due_schedule {
    const char* name;
    const char* cron;
    const char* time_zone;
    const char* job_type;
    Datum payload;
    const char* queue_name;
    int32 priority;
    bool has_max_attempts;
    int32 max_attempts;
    bool run_once;
    Oid role;
    TimestampTz next_run;
    bool retrying;
    int32 failures;
};

// What one schedule's firing did, written back to its row.
struct firing_record {
    TimestampTz next_run;  // DT_NOEND: no further firing
    TimestampTz retry_at;  // 0: none
    int32 failures;
    bool enqueued;
    int64 job_id;
    const char* error;  // nullptr: none
    int64 missed;
};

due_schedule read_due(SPITupleTable* table, uint64 i)
{
    HeapTuple row = table->vals[i];
    TupleDesc desc = table->tupdesc;
    bool isnull;
    due_schedule s;
    s.name = SPI_getvalue(row, desc, 1);
    s.cron = SPI_getvalue(row, desc, 2);
    s.time_zone = SPI_getvalue(row, desc, 3);
    s.job_type = SPI_getvalue(row, desc, 4);
    s.payload = PointerGetDatum(PG_DETOAST_DATUM_COPY(SPI_getbinval(row, desc, 5, &isnull)));
    s.queue_name = SPI_getvalue(row, desc, 6);
    s.priority = DatumGetInt32(SPI_getbinval(row, desc, 7, &isnull));
    Datum max_attempts = SPI_getbinval(row, desc, 8, &isnull);
    s.has_max_attempts = !isnull;
    s.max_attempts = isnull ? 0 : DatumGetInt32(max_attempts);
    s.run_once = DatumGetBool(SPI_getbinval(row, desc, 9, &isnull));
    s.role = DatumGetObjectId(SPI_getbinval(row, desc, 10, &isnull));
    s.next_run = DatumGetTimestampTz(SPI_getbinval(row, desc, 11, &isnull));
    s.retrying = DatumGetBool(SPI_getbinval(row, desc, 12, &isnull));
    s.failures = DatumGetInt32(SPI_getbinval(row, desc, 13, &isnull));
    return s;
}

int64 retry_delay(int32 failures)
{
    int64 delay = k_first_retry_usecs;
    for (int32 i = 1; i < failures && delay < k_max_retry_usecs; i++)
        delay *= 2;
    return delay < k_max_retry_usecs ? delay : k_max_retry_usecs;
}

// Enqueues the schedule's job for the firing `run_at` as the schedule's role, in a subtransaction: an
// ERROR (a full queue, a missing capability) is caught, its message returned in *error, and the
// subtransaction's work undone, while the caller's transaction goes on with the other schedules.
bool enqueue_as_role(const due_schedule& s, TimestampTz run_at, int64* job_id, const char** error)
{
    MemoryContext caller_context = CurrentMemoryContext;
    ResourceOwner caller_owner = CurrentResourceOwner;
    Oid saved_user;
    int saved_security;
    GetUserIdAndSecContext(&saved_user, &saved_security);
    volatile bool enqueued = false;

    BeginInternalSubTransaction(nullptr);
    MemoryContextSwitchTo(caller_context);
    PG_TRY();
    {
        if (!SearchSysCacheExists1(AUTHOID, ObjectIdGetDatum(s.role)))
            ereport(ERROR,
                    (errcode(ERRCODE_UNDEFINED_OBJECT),
                     errmsg("role with OID %u, which set the schedule, does not exist", s.role)));
        // Restricted, as for a maintenance command run on a user's behalf: nothing run as that role may
        // change the session's role or leave state behind.
        SetUserIdAndSecContext(s.role, saved_security | SECURITY_LOCAL_USERID_CHANGE | SECURITY_RESTRICTED_OPERATION);
        Datum values[6] = {CStringGetTextDatum(s.job_type),   s.payload,
                           CStringGetTextDatum(s.queue_name), Int32GetDatum(s.priority),
                           TimestampTzGetDatum(run_at),       Int32GetDatum(s.max_attempts)};
        char nulls[6] = {' ', ' ', ' ', ' ', ' ', s.has_max_attempts ? ' ' : 'n'};
        run_plan(saved_plan(&s_enqueue, k_enqueue), values, nulls, 1);
        bool isnull, found;
        Datum id = first_value(&isnull, &found);
        *job_id = found && !isnull ? DatumGetInt64(id) : 0;
        SetUserIdAndSecContext(saved_user, saved_security);
        ReleaseCurrentSubTransaction();
        MemoryContextSwitchTo(caller_context);
        CurrentResourceOwner = caller_owner;
        enqueued = true;
    }
    PG_CATCH();
    {
        MemoryContextSwitchTo(caller_context);
        ErrorData* edata = CopyErrorData();
        FlushErrorState();
        RollbackAndReleaseCurrentSubTransaction();
        MemoryContextSwitchTo(caller_context);
        CurrentResourceOwner = caller_owner;
        SetUserIdAndSecContext(saved_user, saved_security);
        *error = capped_error_message(edata->message ? edata->message : pstrdup("unknown error"));
    }
    PG_END_TRY();
    return enqueued;
}

// Fires one due schedule (or skips its missed firings, or records why it could not) as of `now`.
firing_record fire_one(const due_schedule& s, TimestampTz now)
{
    firing_record r = {s.next_run, 0, s.failures, false, 0, nullptr, 0};
    cron_parse_result parsed = parse_cron(s.cron);
    pg_tz* zone = pg_tzset(s.time_zone);
    if (!parsed.ok || zone == nullptr) {
        // The definition was checked when it was set; only a changed time zone database gets here.
        r.error = psprintf("cannot fire: %s", !parsed.ok ? parsed.error : "time zone is not recognized any more");
    } else {
        schedule_clock clock = {parsed.expr, zone};
        TimestampTz latest;
        int64 due = firings_through(clock, s.next_run, now, k_count_cap, &latest);
        bool fire = true;
        r.missed = due - 1;
        // Firings late beyond the tolerance are dropped; the latest still fires if it is within it. A firing
        // that was tried and refused is kept until it is enqueued.
        if (!s.run_once && !s.retrying && now - latest > k_missed_tolerance) {
            fire = false;
            r.missed = due;
        }
        if (!fire || enqueue_as_role(s, latest, &r.job_id, &r.error)) {
            r.enqueued = fire;
            r.next_run = next_firing(clock, now);
            r.failures = 0;
            return r;
        }
        r.missed = 0;
    }
    r.failures = s.failures < 1000 ? s.failures + 1 : s.failures;
    r.retry_at = now + retry_delay(r.failures);
    return r;
}

void record(const due_schedule& s, const firing_record& r, TimestampTz now)
{
    Datum values[10] = {CStringGetTextDatum(s.name),
                        TimestampTzGetDatum(r.next_run),
                        TimestampTzGetDatum(r.retry_at),
                        Int32GetDatum(r.failures),
                        TimestampTzGetDatum(now),
                        Int64GetDatum(r.job_id),
                        r.error ? CStringGetTextDatum(r.error) : (Datum) 0,
                        TimestampTzGetDatum(now),
                        Int64GetDatum(r.enqueued ? 1 : 0),
                        Int64GetDatum(r.missed)};
    char nulls[10] = {' ',
                      r.next_run == DT_NOEND ? 'n' : ' ',
                      r.retry_at == 0 ? 'n' : ' ',
                      ' ',
                      r.enqueued ? ' ' : 'n',
                      r.enqueued ? ' ' : 'n',
                      r.error ? ' ' : 'n',
                      r.error ? ' ' : 'n',
                      ' ',
                      ' '};
    run_plan(saved_plan(&s_record, k_record), values, nulls);
}

}  // namespace

namespace pgjq {

firing_outcome fire_due_schedules(int limit, bool failure_point)
{
    TimestampTz now = GetCurrentTransactionStartTimestamp();  // now() of the statements
    Datum args[2] = {TimestampTzGetDatum(now), Int32GetDatum(limit)};
    uint64 n = run_plan(saved_plan(&s_due, k_due), args, nullptr);
    SPITupleTable* table = SPI_tuptable;
    due_schedule* due = static_cast<due_schedule*>(palloc(sizeof(due_schedule) * (n + 1)));
    for (uint64 i = 0; i < n; i++)
        due[i] = read_due(table, i);

    firing_outcome outcome = {static_cast<int64>(n), 0, DT_NOEND};
    for (uint64 i = 0; i < n; i++) {
        CHECK_FOR_INTERRUPTS();
        firing_record r = fire_one(due[i], now);
        // Between a job's enqueue and the advance of its schedule: the worst moment to fail.
        if (failure_point)
            test_failure_point("schedules");
        record(due[i], r, now);
        outcome.jobs += r.enqueued ? 1 : 0;
    }
    run_plan(saved_plan(&s_next_due, k_next_due), nullptr, nullptr);
    bool isnull, found;
    Datum next = first_value(&isnull, &found);
    if (found && !isnull)
        outcome.next_due = DatumGetTimestampTz(next);
    return outcome;
}

}  // namespace pgjq

namespace {

constexpr int k_per_transaction = 100;
constexpr int k_max_transactions_per_run = 10;  // then the duty yields to the others and runs again at once

TimestampTz s_planned = 0;  // when the last run planned to run again

duty_outcome run(maintenance_round& round)
{
    TimestampTz reported = reported_deadline(round, deadline_kind::schedule_due);
    int64 fired = 0;
    TimestampTz next = DT_NOEND;
    bool more = false;
    for (int transaction = 0; transaction < k_max_transactions_per_run; transaction++) {
        CHECK_FOR_INTERRUPTS();
        begin_duty_transaction("pgjq maintenance: firing schedules");
        if (database_at_0_1_0()) {
            commit_duty_transaction();  // no schedules before 0.2.0
            break;
        }
        commit_as_enqueues_do();  // a firing lost after its job ran would fire again
        firing_outcome outcome = fire_due_schedules(k_per_transaction, true);
        commit_duty_transaction();
        fired += outcome.jobs;
        next = outcome.next_due;
        more = outcome.schedules == k_per_transaction;
        if (!more)
            break;
    }
    forget_reported_deadline(round, deadline_kind::schedule_due, reported);
    TimestampTz now = GetCurrentTimestamp();
    // Still due: more than this run fires (at once), or rows another transaction held (look again soon).
    if (next <= now)
        next = more ? now : TimestampTzPlusMilliseconds(now, 1000);
    TimestampTz cap = naptime_from(round.now);
    s_planned = next < cap ? next : cap;
    return {s_planned, fired, next};
}

// A committed schedule fires before the duty planned to look.
bool woken(const maintenance_round& round)
{
    TimestampTz reported = reported_deadline(round, deadline_kind::schedule_due);
    return reported != 0 && reported < s_planned;
}

}  // namespace

extern const pgjq::duty k_schedules_duty = {"schedules", run, woken};
