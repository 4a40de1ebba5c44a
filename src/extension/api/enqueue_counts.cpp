// enqueue_counts.cpp: pgjq.unfolded_enqueues(queue), what core/enqueue_counts.hpp holds for a queue and its
// counter rows do not yet, which pgjq.queue_metrics adds to them. Runs as the reader, as the view's filter
// does; NULL for a queue the reader may not read.
#include "core/enqueue_counts.hpp"
#include "core/privileges.hpp"
#include "pg/boundary.hpp"

PGJQ_FUNCTION(unfolded_enqueues)
{
    char* queue_name = text_to_cstring(PG_GETARG_TEXT_PP(0));
    if (!pgjq::may_read_queue(GetUserId(), queue_name))
        PG_RETURN_NULL();
    PG_RETURN_INT64(pgjq::unfolded_enqueues(queue_name));
}
