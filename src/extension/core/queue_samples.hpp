// queue_samples.hpp: the history of each queue's figures that charts draw (pgjq.queue_samples, from 0.3.0;
// pgjq.queue_history reads it): taken by the maintenance worker every pgjq.queue_sample_interval
// (maintenance/queue_sampling.cpp) or by pgjq.sample_queues(), kept for k_queue_sample_retention. A sample
// costs the same at any history or backlog size: the counters of pgjq.queue_metrics, the jobs in flight
// (read from the in-flight index) and the latency histograms' totals, which live in shared memory.
#pragma once

#include "pg/pg.hpp"

namespace pgjq {

// How long samples are kept (then deleted by the next sampling).
constexpr int64 k_queue_sample_retention_usecs = INT64CONST(24) * USECS_PER_HOUR;
// Samples deleted per sampling at most, so that one run stays short after a long pause.
constexpr int32 k_queue_samples_pruned_per_run = 10000;

// Whether this database keeps queue samples (0.3.0 and later).
bool queue_samples_installed();

// Records one sample of every queue, stamped now(), then deletes samples past the retention; returns how
// many queues it sampled. Requires an SPI connection, as the owner; nothing on a database without the table.
int64 take_queue_samples();

}  // namespace pgjq
