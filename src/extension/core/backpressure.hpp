// backpressure.hpp: room in a queue for new jobs, the one entry point of enqueues to the queue's counters. A
// queue with max_pending reserves room against it in its counter rows (core/depth.hpp) and refuses an enqueue
// that would pass it; a queue without counts its jobs, in shared memory where it can (core/enqueue_counts.hpp),
// else in this backend's counter row. Which way a queue goes comes from the backend's copy of pgjq.queues
// (core/queue_cache.hpp), read again when the queue changes.
#pragma once

#include "pg/pg.hpp"

namespace pgjq {

enum class room { granted, queue_full };

// Reserves room for `count` jobs of `priority` in the queue, and returns its default max_attempts through
// *max_attempts. A full queue is an ERROR (PJ001) when `raise_when_full`, else room::queue_full and nothing
// reserved. An unknown queue, and a priority on a fifo queue, are ERRORs. Requires an SPI connection.
room reserve_room(const char* queue_name, Datum queue_text, int64 count, int32 priority, bool raise_when_full,
                  int32* max_attempts);

// Gives back what reserve_room reserved, for jobs that were not enqueued after all (a unique key another
// transaction took meanwhile).
void give_back_room(Datum queue_text, int64 count);

}  // namespace pgjq
