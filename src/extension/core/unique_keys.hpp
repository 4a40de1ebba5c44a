// unique_keys.hpp: a job's unique_key at enqueue. A key is the queue's and the enqueuing role's: while an
// unfinished job of the queue that the same role enqueued holds it, an enqueue with it returns that job
// instead of a new one (a unique index on live_jobs keeps two from being inserted); with unique_for the key
// stays taken that long, finished or not, in pgjq.unique_windows.
#pragma once

#include "core/enqueue.hpp"

namespace pgjq {

// The unfinished job holding r.unique_key; with unique_for, else the job whose window holds it.
bool find_key_holder(const enqueue_request& r, int64* id);
// unique_for: takes the key's window for job `id`; false when another job's window holds it.
bool take_window(const enqueue_request& r, int64 id);
// Withdraws job `id`, just inserted by this call, whose key's window another job took meanwhile.
void withdraw_job(int64 id);

}  // namespace pgjq
