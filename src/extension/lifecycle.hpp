// lifecycle.hpp: moving jobs between live and finished, and keeping pgjq.queue_depth in step.
#pragma once

#include "pg.hpp"

namespace pgjq {

// Moves the live jobs whose ids are in `ids` (an int8[]) to pgjq.finished_jobs with final `status`
// ('completed', 'failed' or 'cancelled'), storing `result` and, when given, `last_error`. With a
// `holder`, only jobs claimed or running under that worker id move. Completed jobs of a queue with
// keep_completed = false are deleted without a history row. With `claimed_here_by` (then `holder` is
// null), the jobs are ones this transaction claimed with claim_in_transaction for that worker. Returns how
// many moved and sets *moved to an int8[] of their ids (in SPI memory). Requires an SPI connection.
uint64 archive_jobs(Datum ids, const char* holder, const char* status, Jsonb* result, const char* last_error,
                    Datum* moved, const char* claimed_here_by = nullptr);

// Adds `delta` to the queue's unfinished-job count in this backend's slot.
void adjust_depth(Datum queue_name, int64 delta);

// A one-element int8[] for archive_jobs.
Datum single_id_array(int64 id);

// An int8[] of n job ids, in their order.
ArrayType* job_id_array(const int64* ids, int n);

// Ascending order, and a binary search over it.
void sort_job_ids(int64* ids, int n);
bool sorted_ids_contain(const int64* sorted, int n, int64 id);

} // namespace pgjq
