// depth.hpp: the backpressure counters. Each queue's number of unfinished jobs (pending, claimed, running)
// lives in k_depth_slots rows of pgjq.queue_depth. A transaction adds to the row of its backend's slot, so
// concurrent producers rarely wait on one row, and reading a queue's depth sums a fixed number of rows
// whatever its length. enqueue.cpp reserves room against max_pending; lifecycle.cpp subtracts what
// finishes; retry adds back what it revives.
#pragma once

#include "core/pg.hpp"

namespace pgjq {

// The counter slot this backend writes.
int16 depth_slot();

// Adds `delta` to the queue's unfinished-job count in this backend's slot. Requires an SPI connection.
void adjust_depth(Datum queue_name, int64 delta);

// Creates a new queue's counter rows. Requires an SPI connection.
void create_depth_rows(Datum queue_name);

}  // namespace pgjq
