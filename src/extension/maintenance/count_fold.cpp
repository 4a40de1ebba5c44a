// count_fold.cpp: the duty that keeps the counter rows of pgjq.queue_depth whole while enqueues count in
// shared memory (core/enqueue_counts.hpp).
// - Until the database is reconciled (after each start of the server: what shared memory held is gone; after
//   a COPY into pgjq's tables, as pg_restore does: the dumped rows lack what the source had not folded), it
//   reconciles each queue's rows with its live jobs: under the queue's count lock in ExclusiveLock, so that no
//   transaction is counting into it, it sets the rows to the count of live jobs and drops what shared memory
//   holds for the queue. One transaction per queue, so that a queue's producers wait for one count only. A
//   queue whose lock is not granted at once is left for the next round, and only when every queue is
//   reconciled may enqueues count in shared memory again.
// - Then each run folds each queue's count into the worker's row of the queue, so that the rows (what a
//   standby and a dump see) lag by one round at most. A queue whose count lock is taken (drop_queue,
//   alter_queue) is left for the next round.
#include "core/depth.hpp"
#include "core/enqueue_counts.hpp"
#include "maintenance/duty.hpp"
#include "pg/catalog.hpp"
#include "pg/spi.hpp"

namespace {

using namespace pgjq;

constexpr const char* k_activity = "pgjq maintenance: folding the enqueue counts into the counter rows";

// Reconciles every queue it can lock at once; returns whether it did all, and what it corrected in *moved.
bool reconcile(int64* moved)
{
    MemoryContext caller = CurrentMemoryContext;
    begin_duty_transaction(k_activity);
    uint64 n;
    MemoryContext keep = MemoryContextSwitchTo(caller);
    char** queues = queues_with_depth_rows(&n);
    MemoryContextSwitchTo(keep);
    commit_duty_transaction();

    bool all = true;
    uint64 corrected = 0;
    for (uint64 i = 0; i < n; i++) {
        begin_duty_transaction(k_activity);
        test_failure_point("count_fold");
        Datum name = CStringGetTextDatum(queues[i]);
        int16 slot = -1;
        if (!try_lock_queue_count(queues[i], ExclusiveLock) || (slot = unlocked_depth_slot(name)) < 0) {
            all = false;  // producers in flight, or every row held: next round
        } else {
            int64 missing = recount_unfinished(queues[i], slot);
            if (missing != 0) {
                corrected++;
                *moved += missing < 0 ? -missing : missing;
            }
        }
        commit_duty_transaction();
    }
    for (uint64 i = 0; i < n; i++)
        pfree(queues[i]);
    pfree(queues);
    if (corrected > 0)
        ereport(LOG,
                (errmsg("pgjq: reconciled the counters of %llu queues with their live jobs (%lld jobs)",
                        static_cast<unsigned long long>(corrected), static_cast<long long>(*moved))));
    return all;
}

int64 fold()
{
    int count;
    char** queues = queues_with_enqueue_counts(&count);
    int64 folded = 0;
    for (int i = 0; i < count; i++) {
        Datum name = CStringGetTextDatum(queues[i]);
        if (!try_lock_queue_count(queues[i], RowExclusiveLock))
            continue;
        int16 slot = unlocked_depth_slot(name);
        if (slot >= 0)
            folded += fold_enqueue_counts(name, slot);
    }
    return folded;
}

duty_outcome run(maintenance_round& round)
{
    TimestampTz next = naptime_from(round.now);
    if (RecoveryInProgress() || !enqueue_counts_available())
        return {next, 0, DT_NOEND};
    int64 done = 0;
    stop_counting_when_leaving();
    begin_duty_transaction(k_activity);
    bool reconciled = enqueue_counts_reconciled();
    Oid depth_relid = pgjq_relation("queue_depth");
    uint32 epoch = enqueue_counts_epoch();
    if (reconciled) {
        start_counting();
        test_failure_point("count_fold");
        done = fold();
    }
    commit_duty_transaction();
    if (!reconciled && reconcile(&done))
        mark_enqueue_counts_ready(depth_relid, epoch, true);
    return {next, done, DT_NOEND};
}

bool woken(const maintenance_round&)
{
    return counting_may_start();
}

}  // namespace

extern const pgjq::duty k_count_fold_duty = {"count_fold", run, woken};
