// counted_tables_hook.hpp: the utility commands that change whether pgjq's counter rows agree with its live
// jobs, for the enqueue counts in shared memory (core/enqueue_counts.hpp):
// - CREATE EXTENSION pgjq makes empty tables, which agree: the database counts in shared memory from its
//   commit on, without waiting for the maintenance worker to reconcile it;
// - a COPY into pgjq.live_jobs or pgjq.queue_depth (what pg_restore runs) brings jobs and rows that do not:
//   a dump holds the rows alone, without what its source counted in shared memory and had not folded. Once
//   it commits, the worker reconciles the database again before enqueues count in shared memory.
#pragma once

namespace pgjq {

// _PG_init: the utility hook.
void register_counted_tables_hook();

}  // namespace pgjq
