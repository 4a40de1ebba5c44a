// latency.hpp: each queue's wait and run times as histograms in shared memory, for pgjq.queue_latency and
// the Prometheus histograms of pgjq.metrics().
//
// A job's times are taken when it finishes (archive_jobs): its wait, from when its last attempt was due to
// when it was claimed, and its run, from that claim to the finish. They are kept in the transaction (in step
// with its subtransactions) and added to the queue's histogram when it commits, so a rolled-back report
// counts nothing. The histograms live in shared memory: no row is written for them, so they cost the claim
// and completion paths no I/O, and they count since the server started (a restart resets them, as
// Prometheus's counter semantics allow; the totals of pgjq.queue_metrics are the exact, durable counts).
// Without shared_preload_libraries there is no shared memory: nothing is kept and the view is empty.
#pragma once

#include "pg/limits.hpp"
#include "pg/pg.hpp"
#include "pg/shared_region.hpp"

namespace pgjq {

// The upper bounds of the buckets, in seconds; a last bucket (+Inf) takes the rest.
constexpr int k_latency_bounds = 18;
extern const double k_latency_bound_seconds[k_latency_bounds];
constexpr int k_latency_buckets = k_latency_bounds + 1;

enum latency_kind { latency_wait = 0, latency_run = 1 };

// The times of jobs that finished in this statement, all of one queue (`queue_name`) or, when
// `every_queue` (a text[] aligned with the times) is given, of each element's queue. waits and runs are
// float8[] in seconds; a NULL element (a job never claimed) counts in neither.
void note_latencies(Datum queue_name, ArrayType* every_queue, ArrayType* waits, ArrayType* runs);

// Transaction ends (hooks/transaction_hub.cpp): commit adds what this transaction noted to the histograms;
// abort and prepare forget it (a prepared transaction's times are not counted).
void publish_latencies();
void forget_latencies();
void latencies_subtransaction_aborted(SubTransactionId sub);  // forgets what it noted

// With preload, the shared-memory hub (hooks/shared_memory_hub.cpp) reserves it.
extern const shared_region k_latency_region;

// One queue's histogram of one kind as read now: per bucket counts (not cumulative), their sum in seconds.
struct latency_reading {
    char queue_name[k_queue_name_max + 1];
    latency_kind kind;
    int64 counts[k_latency_buckets];
    double sum_seconds;
};
// Every histogram of the current database (palloc'd), and how many.
latency_reading* read_latencies(int* count);

}  // namespace pgjq
