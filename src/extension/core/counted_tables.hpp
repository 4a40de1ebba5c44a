// counted_tables.hpp: the utility commands that change whether pgjq's counter rows agree with its live jobs,
// for the enqueue counts in shared memory (core/enqueue_counts.hpp):
// - CREATE EXTENSION pgjq makes empty tables, which agree: the database counts in shared memory from its
//   commit on, without waiting for the maintenance worker to reconcile it;
// - a COPY into pgjq.live_jobs or pgjq.queue_depth (what pg_restore runs) brings jobs and rows that do not:
//   a dump holds the rows alone, without what its source counted in shared memory and had not folded, and
//   pg_restore commits each COPY on its own, so the rows may come after their jobs were counted (by the
//   worker's reconcile, or by the COPY of the jobs). When the COPY is done it recounts every queue's
//   unfinished jobs in its own transaction, so the counters agree as soon as it commits, preloaded or not;
//   and with preload the worker still reconciles the database before enqueues count in shared memory again.
// The utility hub (hooks/utility_hub.cpp) calls these around every utility command.
#pragma once

#include "pg/pg.hpp"

namespace pgjq {

struct counted_tables_command {
    bool creating_pgjq;  // CREATE EXTENSION pgjq that makes the tables
    uint32 epoch;        // enqueue_counts_epoch() before the command, when creating_pgjq
    bool loading;        // a COPY into pgjq.live_jobs or pgjq.queue_depth
};

// Before the command runs.
counted_tables_command before_counted_tables_command(const Node* stmt);
// After it ran without an error.
void after_counted_tables_command(const counted_tables_command& command);

}  // namespace pgjq
