// backpressure.cpp: room in a queue for enqueues (see backpressure.hpp).
#include "core/backpressure.hpp"

#include "core/depth.hpp"
#include "core/enqueue_counts.hpp"
#include "core/queue_cache.hpp"
#include "pg/limits.hpp"
#include "pg/spi.hpp"
#include "pg/sqlstate.hpp"

namespace {

using namespace pgjq;

SPIPlanPtr s_why_refused;

// clang-format off
// $2: what this transaction added to the queue's count and has not written yet
const plan_text k_why_refused = {
    "SELECT q.max_pending,"
    "       coalesce((SELECT sum(s.unfinished)::bigint FROM pgjq.queue_depth s WHERE s.queue_name = q.queue_name), 0)"
    "       + $2"
    "  FROM pgjq.queues q WHERE q.queue_name = $1",
    2, {TEXTOID, INT8OID}};
// clang-format on

// A fifo queue hands out its jobs in enqueue order: a priority other than the default would break it.
void refuse_priority_on_fifo(const char* queue_name, int32 priority, bool fifo)
{
    if (fifo && priority != k_default_priority)
        ereport(ERROR,
                (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                 errmsg("priority %d is not allowed on fifo queue \"%s\"", priority, queue_name),
                 errdetail("A fifo queue hands out its jobs strictly in enqueue order.")));
}

}  // namespace

namespace pgjq {

room reserve_room(const char* queue_name, Datum queue_text, int64 count, int32 priority, bool raise_when_full,
                  int32* max_attempts)
{
    // A queue without max_pending has nothing to check: its settings come from the cache and the count is
    // added by primary key: perf put the reservation's join at a fifth of a single enqueue, this at a tenth.
    // The cache follows a change of pgjq.queues as a statement would see it (invalidations are accepted
    // first), so a max_pending set meanwhile applies from the next call on.
    AcceptInvalidationMessages();
    const cached_queue* cached = cached_queue_settings(queue_name);
    if (cached != nullptr && !cached->limited && enqueue_counts_ready() && begin_counting_enqueues(queue_name)) {
        // The count lock waits for a drop_queue or an alter_queue setting max_pending: see what they did.
        AcceptInvalidationMessages();
        cached = cached_queue_settings(queue_name);
        if (cached != nullptr && !cached->limited) {
            refuse_priority_on_fifo(queue_name, priority, cached->fifo);
            count_enqueue(queue_text, count);
            *max_attempts = cached->max_attempts;
            return room::granted;
        }
    }
    if (cached != nullptr && !cached->limited) {
        refuse_priority_on_fifo(queue_name, priority, cached->fifo);
        if (adjust_depth(queue_text, count)) {
            *max_attempts = cached->max_attempts;
            return room::granted;
        }
        raise_unknown_queue(queue_name);  // dropped since the cache read it
    }
    if (reserve_depth(queue_text, count)) {
        bool isnull;
        HeapTuple row = SPI_tuptable->vals[0];
        *max_attempts = DatumGetInt32(SPI_getbinval(row, SPI_tuptable->tupdesc, 1, &isnull));
        refuse_priority_on_fifo(queue_name, priority,
                                DatumGetBool(SPI_getbinval(row, SPI_tuptable->tupdesc, 2, &isnull)));
        return room::granted;
    }

    Datum values[2] = {queue_text, Int64GetDatum(unwritten_depth(queue_text))};
    run_plan(saved_plan(&s_why_refused, k_why_refused), values, nullptr);
    if (SPI_processed == 0)
        raise_unknown_queue(queue_name);
    if (!raise_when_full)
        return room::queue_full;
    char* limit = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);
    char* depth = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2);
    ereport(ERROR,
            (errcode(PGJQ_ERRCODE_QUEUE_FULL), errmsg("queue \"%s\" is full", queue_name),
             errdetail("It holds %s unfinished jobs; max_pending is %s and %lld more were asked for.",
                       depth ? depth : "0", limit, (long long) count),
             errhint("Retry later, or use pgjq.try_enqueue to get NULL instead of an error.")));
    pg_unreachable();
}

void give_back_room(Datum queue_text, int64 count)
{
    give_back_depth(queue_text, count);
}

}  // namespace pgjq
