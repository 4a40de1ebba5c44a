// settings.hpp: every pgjq.* setting (GUC), defined in one place. docs/sql-api.md and docs/maintenance-worker.md document
// them; the comments here say who reads each.
#pragma once

#include "pg/pg.hpp"

namespace pgjq {

// Producers and workers
extern int max_payload_bytes;           // pgjq.max_payload_bytes: largest payload or result of one job
extern int max_batch_bytes;             // pgjq.max_batch_bytes: largest payloads array of one enqueue_batch
extern int forced_depth_slot;           // pgjq.depth_slot: the counter slot this session writes; -1 = by backend
extern bool synchronous_worker_commit;  // pgjq.synchronous_worker_commit: worker calls wait for their WAL flush

// The maintenance worker and its launcher (all reloadable)
extern int maintenance_naptime_ms;   // pgjq.naptime: longest sleep of a database's maintenance worker
extern int launcher_naptime_s;       // pgjq.launcher_naptime: how often the launcher rescans databases
extern int prune_interval_s;         // pgjq.prune_interval: how often finished jobs are pruned
extern int prune_batch_size;         // pgjq.prune_batch_size: rows deleted per prune transaction
extern int queue_sample_interval_s;  // pgjq.queue_sample_interval: how often queues are sampled; 0: never
extern int restart_delay_s;          // pgjq.restart_delay: delay before a failed worker is started again
extern int max_maintenance_workers;  // pgjq.max_maintenance_workers: most maintenance workers the launcher runs at once
extern int maintenance_idle_timeout_s;  // pgjq.maintenance_idle_timeout: an idle launcher-started worker exits after it
extern int maintenance_turn_ms;         // pgjq.maintenance_turn: longest a worker keeps its database while others wait
extern int max_databases;               // pgjq.max_databases (server start): databases the launcher tracks
extern char* served_databases;          // pgjq.databases: databases the launcher serves ("" = all)

// Developer settings, for comparing a fast path with the statement it replaces (and a way out should one be
// suspected): on by default, documented apart (docs/sql-api.md), each switched off by a test.
extern bool claim_floors;           // pgjq.claim_floors: leased claims start from their queue's claim floor
extern bool direct_claims;          // pgjq.direct_claims: leased claims through the table access method
extern bool direct_completions;     // pgjq.direct_completions: jobs finished through the table access method
extern bool shared_enqueue_counts;  // pgjq.shared_enqueue_counts: core/enqueue_counts.hpp

// Tests only
extern char* test_failing_duty;  // pgjq.test_failing_duty: the maintenance duty of that name fails

// _PG_init: defines every setting (pgjq.max_databases is read only with preload).
void define_settings();

}  // namespace pgjq
