// due_jobs.cpp: the duty that announces delayed jobs when they fall due. Jobs enqueued with a future run_at
// and jobs waiting out a retry backoff get their queue notified on pgjq_new_job when they become runnable,
// so workers that only LISTEN (and never poll) still get them. The duty runs at the earliest future run_at;
// a transaction that commits a job due earlier wakes it (core/deadlines.hpp), so a job due at T is announced close to T.
#include "core/announcements.hpp"
#include "core/claim_floor.hpp"
#include "maintenance/duty.hpp"
#include "pg/spi.hpp"

namespace {

using namespace pgjq;

SPIPlanPtr s_due, s_next_due;

// clang-format off
// Delayed jobs (the live_jobs_scheduled_idx partial index) that fell due after $1.
const plan_text k_due = {
    "SELECT queue_name, count(*) FROM pgjq.live_jobs"
    " WHERE status = 'pending' AND run_at > created_at AND run_at > $1 AND run_at <= now()"
    " GROUP BY queue_name",
    1, {TIMESTAMPTZOID}};
const plan_text k_next_due = {
    "SELECT min(run_at) FROM pgjq.live_jobs WHERE status = 'pending' AND run_at > created_at AND run_at > now()",
    0, {}};
// clang-format on

// Delayed jobs due after this time have not been announced yet. -infinity at start: after a restart every
// due delayed job is announced once more, which is harmless (workers find nothing or claim it).
TimestampTz s_due_bound = DT_NOBEGIN;

duty_outcome run(maintenance_round& round)
{
    // A job that committed late (after the previous run's snapshot, or after its run_at had passed) was
    // reported by its transaction: widen the window to include it.
    TimestampTz reported = reported_deadline(round, deadline_kind::job_due);
    TimestampTz lower = s_due_bound;
    if (reported != 0 && reported - 1 < lower)
        lower = reported - 1;

    begin_duty_transaction("pgjq maintenance: announcing delayed jobs that fell due");
    test_failure_point("due_jobs");
    TimestampTz run_time = GetCurrentTransactionStartTimestamp();  // now() of the statements below
    Datum args[1] = {TimestampTzGetDatum(lower)};
    uint64 queues = run_plan(saved_plan(&s_due, k_due), args, nullptr);
    int64 announced = 0;
    for (uint64 i = 0; i < queues; i++) {
        HeapTuple row = SPI_tuptable->vals[i];
        bool count_null;
        char* queue_name = SPI_getvalue(row, SPI_tuptable->tupdesc, 1);
        announced += DatumGetInt64(SPI_getbinval(row, SPI_tuptable->tupdesc, 2, &count_null));
        if (queue_name != nullptr) {
            Async_Notify(k_new_job_channel, queue_name);
            runnable_at_commit(queue_name, nullptr);  // jobs the queue's claims may have passed
        }
    }
    run_plan(saved_plan(&s_next_due, k_next_due), nullptr, nullptr);
    bool isnull, found;
    Datum value = first_value(&isnull, &found);
    TimestampTz next = (found && !isnull) ? DatumGetTimestampTz(value) : DT_NOEND;
    commit_duty_transaction();  // the notifications go out at this commit

    s_due_bound = run_time;
    // Forget the report only now: a failed run keeps it.
    forget_reported_deadline(round, deadline_kind::job_due, reported);
    TimestampTz cap = naptime_from(round.now);
    return {next < cap ? next : cap, announced, next};
}

bool woken(const maintenance_round& round)
{
    return reported_deadline(round, deadline_kind::job_due) != 0;
}

}  // namespace

extern const pgjq::duty k_due_jobs_duty = {"due_jobs", run, woken};
