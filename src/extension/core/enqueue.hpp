// enqueue.hpp: putting jobs into a queue, whichever call asked (pgjq.enqueue, try_enqueue, enqueue_batch,
// INSERT INTO pgjq.jobs: api/enqueue.cpp reads their arguments into an enqueue_request). An enqueue
// - reserves room in its queue (core/backpressure.hpp), the one place that knows max_pending;
// - writes the job's row (core/job_insert.hpp); a job with a group key or unmet dependencies is inserted
//   waiting (core/enqueue_dependencies.hpp, core/waiting_jobs.hpp) and its transaction starts it at commit when
//   it may start;
// - returns the unfinished job that holds its unique_key instead of a new one, and with unique_for takes the
//   key for that long (core/unique_keys.hpp);
// - tells the workers at commit (core/announcements.hpp), or the maintenance worker when the job is due later.
#pragma once

#include "core/privileges.hpp"
#include "pg/pg.hpp"

namespace pgjq {

// What a job's depends_on found when it was enqueued: the unfinished jobs it waits for, and the first job
// that failed for good or was cancelled (which cancels it at once).
struct dependency_state {
    Datum unfinished;  // int8[] of the live ones; (Datum) 0 when there is none
    int64 broken_by;   // 0: none
    bool broken_by_failure;
};

// What one enqueue call asks for; every pointer is palloc'd or points into the call's arguments.
struct enqueue_request {
    const char* queue_name;
    Datum queue_text;  // queue_name as text, converted once for every statement
    const char* job_type;
    Jsonb* payload;  // a single payload, or the JSON array of a batch
    int32 priority;
    bool has_run_at;
    TimestampTz run_at;
    bool has_max_attempts;
    int32 max_attempts;
    const char* unique_key;    // nullptr when none
    const char* group_key;     // nullptr when none
    Interval* unique_for;      // nullptr when none
    Interval* timeout;         // nullptr: the queue's job_timeout
    ArrayType* depends_on;     // distinct ids, or nullptr when none
    Jsonb* headers = nullptr;  // trace context (core/trace_context.hpp); nullptr when none
    dependency_state depends;  // what depends_on found (judge_dependencies)
    int64 count;               // jobs asked for: 1, or the batch's length
    const api_call* call;      // who asks
    // A workflow step that waits for the steps it depends on: its workflow's counters start it
    // (core/workflows.hpp), not pgjq.job_dependencies.
    bool held = false;
};

// Calls visit(element) for each element of a batch's JSON array, in order. (No C++ object lives across
// the calls, so an error raised in visit leaves nothing behind.)
template <typename Visit>
void for_each_payload(const Jsonb* payloads, Visit visit)
{
    JsonbIterator* it = JsonbIteratorInit(const_cast<JsonbContainer*>(&payloads->root));
    JsonbValue element;
    JsonbIteratorToken token;
    while ((token = JsonbIteratorNext(&it, &element, true)) != WJB_DONE)
        if (token == WJB_ELEM)
            visit(element);
}

// Whether the job is inserted waiting: for its group, for jobs it depends on, or for its workflow's steps.
inline bool waits(const enqueue_request& r)
{
    return r.group_key != nullptr || r.depends_on != nullptr || r.held;
}

// The rules every enqueue path applies to what it was given, whether by arguments or by INSERT INTO
// pgjq.jobs. A batch's payloads and keys are checked one by one by the caller.
void check_request(const enqueue_request& r, bool batch);

// What enqueue_one stored: whether *id is a job that held r.unique_key already (nothing was enqueued), and
// the max_attempts the new job got (r's, or its queue's).
struct enqueued_job {
    bool existed;
    int32 max_attempts;
};

// Enqueues one job; returns false (and enqueues nothing) only when the queue is full and raise_when_full is
// false. Requires an SPI connection.
bool enqueue_one(const enqueue_request& r, bool raise_when_full, int64* id, enqueued_job* stored = nullptr);

// Enqueues r.count jobs, one per element of the JSON array r.payload; with keys (each NULL or a key per
// payload) each is enqueued on its own, as enqueue_one would. Returns their ids in payload order, as an int8[]
// in the current memory context. Requires an SPI connection.
ArrayType* enqueue_batch(enqueue_request& r, char** unique_keys, char** group_keys);

}  // namespace pgjq
