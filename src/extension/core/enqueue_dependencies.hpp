// enqueue_dependencies.hpp: a job enqueued with depends_on waits (status 'waiting') until every job it
// depends on has completed, and is cancelled at once if one of them failed for good or was cancelled
// (core/waiting_jobs.hpp settles what happens to it afterwards, at each commit).
#pragma once

#include "core/enqueue.hpp"

namespace pgjq {

// The rules for depends_on: a one-dimensional array without NULLs of at most k_max_dependencies ids; its
// distinct ids, or nullptr when it is empty.
ArrayType* dependencies_arg(ArrayType* given);

// Looks up the jobs of r.depends_on: each must exist and be readable by the caller (else, to the caller, it
// does not exist). Requires an SPI connection.
dependency_state judge_dependencies(const enqueue_request& r);

// From now on, jobs of the queue (`queue_text`, a text Datum) that finish look for jobs waiting for them
// (core/queue_cache.hpp: dependencies_in_use). Requires an SPI connection.
void mark_dependencies_used(Datum queue_text);

// What jobs enqueued waiting (`ids`, an int8[]) do besides their insert: their dependency rows and the notes
// for the commit, or their cancellation when a job they depend on already failed or was cancelled. A held
// workflow step has none: its workflow's counters start it.
void settle_waiting_insert(const enqueue_request& r, Datum ids);

}  // namespace pgjq
