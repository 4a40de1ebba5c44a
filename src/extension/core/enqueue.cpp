// enqueue.cpp: putting jobs into a queue (see enqueue.hpp).
#include "core/enqueue.hpp"

#include "core/announcements.hpp"
#include "core/backpressure.hpp"
#include "core/deadlines.hpp"
#include "core/enqueue_dependencies.hpp"
#include "core/job_insert.hpp"
#include "core/lifecycle.hpp"
#include "core/trace_context.hpp"
#include "core/unique_keys.hpp"
#include "pg/limits.hpp"

namespace {

using namespace pgjq;

// The lowest of a batch's drawn ids (no NULLs: they come from the sequence).
int64 lowest_id(ArrayType* ids)
{
    const int n = ArrayGetNItems(ARR_NDIM(ids), ARR_DIMS(ids));
    const int64* values = reinterpret_cast<const int64*>(ARR_DATA_PTR(ids));
    int64 lowest = PG_INT64_MAX;
    for (int i = 0; i < n; i++)
        lowest = values[i] < lowest ? values[i] : lowest;
    return lowest;
}

// What the workers learn at commit: runnable jobs are announced on pgjq_new_job, delayed ones wake the
// maintenance worker when they fall due. Done here rather than by row triggers on live_jobs, whose WHEN
// clauses cost a single-job enqueue about 9 % of its server CPU. A waiting job is announced when it starts
// (by the trigger on its status). The claims' floor (core/claim_floor.hpp) learns where the first of them
// lies in claim order; delayed ones drop it when they fall due.
void announce_enqueued(const enqueue_request& r, int64 first_id)
{
    if (r.has_run_at && r.run_at > GetCurrentTransactionStartTimestamp()) {
        wake_maintenance_at_commit(r.run_at);
        return;
    }
    const job_key first = {r.priority, first_id};
    announce_new_jobs(r.queue_name, &first);
}

// A batch with keys: each payload is enqueued on its own, as enqueue would (a taken unique key gives the
// holder's id, a group key makes the job wait for its turn). Returns the ids in payload order (palloc'd in
// the caller's context). Requires an SPI connection.
ArrayType* enqueue_batch_one_by_one(enqueue_request& r, char** unique_keys, char** group_keys)
{
    Jsonb* payloads = r.payload;
    Datum* ids = static_cast<Datum*>(palloc(sizeof(Datum) * (r.count + 1)));
    int64 index = 0;
    r.count = 1;
    for_each_payload(payloads, [&](JsonbValue& value) {
        r.payload = JsonbValueToJsonb(&value);
        r.unique_key = unique_keys ? unique_keys[index] : nullptr;
        r.group_key = group_keys ? group_keys[index] : nullptr;
        int64 id = 0;
        enqueue_one(r, true, &id);
        ids[index++] = Int64GetDatum(id);
    });
    return construct_array(ids, static_cast<int>(index), INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE);
}

}  // namespace

namespace pgjq {

void check_request(const enqueue_request& r, bool batch)
{
    check_short_text(r.job_type, "job_type");
    if (!batch)
        check_json_size(r.payload, "payload");
    check_queue_name(r.queue_name);
    check_priority(r.priority);
    if (r.has_run_at)
        check_run_at(r.run_at);
    if (r.has_max_attempts)
        check_max_attempts(r.max_attempts);
    if (r.unique_key)
        check_short_text(r.unique_key, "unique_key");
    if (r.group_key)
        check_short_text(r.group_key, "group_key");
    if (r.timeout)
        check_interval(r.timeout, "timeout", k_timeout_bounds);
    if (r.unique_for)
        check_interval(r.unique_for, "unique_for", k_unique_for_bounds);
    if (r.headers)
        check_headers(r.headers, "headers");
    if (r.unique_for && !r.unique_key && !batch)
        ereport(ERROR,
                (errcode(ERRCODE_INVALID_PARAMETER_VALUE), errmsg("unique_for needs a unique_key"),
                 errdetail("unique_for says how long the job's unique_key stays taken.")));
}

// Enqueues one job; returns false (and enqueues nothing) only when the queue is full and
// raise_when_full is false. Requires an SPI connection.
bool enqueue_one(const enqueue_request& r, bool raise_when_full, int64* id, enqueued_job* stored)
{
    enqueued_job ignored;
    if (stored == nullptr)
        stored = &ignored;
    stored->existed = false;
    for (int attempt = 0;; attempt++) {
        if (r.unique_key && find_key_holder(r, id)) {
            stored->existed = true;
            return true;
        }
        int32 queue_max_attempts;
        if (reserve_room(r.queue_name, r.queue_text, r.count, r.priority, raise_when_full, &queue_max_attempts) ==
            room::queue_full)
            return false;
        Datum values[k_insert_values];
        char nulls[k_insert_values];
        fill_insert_values(r, queue_max_attempts, values, nulls);
        stored->max_attempts = r.has_max_attempts ? r.max_attempts : queue_max_attempts;
        if (insert_job(r, values, nulls, id)) {
            if (r.unique_for && !take_window(r, *id)) {
                // Another job's window took the key while this one was being inserted: withdraw it.
                withdraw_job(*id);
                give_back_room(r.queue_text, r.count);
                continue;
            }
            if (waits(r))
                settle_waiting_insert(r, single_id_array(*id));
            else
                announce_enqueued(r, *id);
            return true;
        }
        // Another transaction took the unique_key between our lookup and our insert: give the room
        // back and return that job instead (it may also finish in between, hence the loop).
        give_back_room(r.queue_text, r.count);
        if (attempt >= 10)
            ereport(ERROR,
                    (errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
                     errmsg("could not enqueue with unique_key \"%s\" under concurrent updates", r.unique_key)));
    }
}

ArrayType* enqueue_batch(enqueue_request& r, char** unique_keys, char** group_keys)
{
    if (unique_keys || group_keys)
        return enqueue_batch_one_by_one(r, unique_keys, group_keys);
    int32 queue_max_attempts;
    reserve_room(r.queue_name, r.queue_text, r.count, r.priority, true, &queue_max_attempts);
    Datum ids = draw_batch_ids(static_cast<int32>(r.count));
    Datum values[k_insert_values];
    char nulls[k_insert_values];
    fill_insert_values(r, queue_max_attempts, values, nulls);
    insert_batch(r, values, nulls, ids);
    if (waits(r))
        settle_waiting_insert(r, ids);
    else
        announce_enqueued(r, lowest_id(DatumGetArrayTypeP(ids)));
    return DatumGetArrayTypeP(ids);
}

}  // namespace pgjq
