// enqueue.cpp: enqueue, try_enqueue, enqueue_batch, and INSERT INTO pgjq.jobs (an INSTEAD OF trigger).
//
// Backpressure: an enqueue first reserves room against max_pending (core/depth.hpp), then inserts.
#include "core/args.hpp"
#include "core/boundary.hpp"
#include "core/catalog.hpp"
#include "core/depth.hpp"
#include "core/settings.hpp"
#include "core/spi.hpp"
#include "core/sqlstate.hpp"
#include "core/trigger.hpp"
#include "maintenance/notification_relay.hpp"
#include "maintenance/wake.hpp"

namespace {

using namespace pgjq;

SPIPlanPtr s_why_refused, s_find_unique, s_draw_ids;
SPIPlanPtr s_insert, s_insert_unique, s_insert_batch, s_insert_legacy, s_insert_unique_legacy, s_insert_batch_legacy;

// clang-format off
// $2: what this transaction added to the queue's count and has not written yet
const plan_text k_why_refused = {
    "SELECT q.max_pending,"
    "       coalesce((SELECT sum(s.unfinished)::bigint FROM pgjq.queue_depth s WHERE s.queue_name = q.queue_name), 0)"
    "       + $2"
    "  FROM pgjq.queues q WHERE q.queue_name = $1",
    2, {TEXTOID, INT8OID}};
const plan_text k_find_unique = {
    "SELECT id FROM pgjq.live_jobs WHERE queue_name = $1 AND unique_key = $2", 2, {TEXTOID, TEXTOID}};
// The inserts record the role that enqueued ($8); a database at 0.1.0 has no column for it (legacy).
const plan_text k_insert = {
    "INSERT INTO pgjq.live_jobs (queue_name, job_type, priority, payload, run_at, max_attempts, enqueued_by)"
    " VALUES ($1, $2, $3, $4, coalesce($5, now()), $6, $8) RETURNING id",
    8, {TEXTOID, TEXTOID, INT4OID, JSONBOID, TIMESTAMPTZOID, INT4OID, TEXTOID, REGROLEOID}};
const plan_text k_insert_unique = {
    "INSERT INTO pgjq.live_jobs (queue_name, job_type, priority, payload, run_at, max_attempts, unique_key,"
    "   enqueued_by)"
    " VALUES ($1, $2, $3, $4, coalesce($5, now()), $6, $7, $8)"
    " ON CONFLICT (queue_name, unique_key) WHERE unique_key IS NOT NULL DO NOTHING RETURNING id",
    8, {TEXTOID, TEXTOID, INT4OID, JSONBOID, TIMESTAMPTZOID, INT4OID, TEXTOID, REGROLEOID}};
const plan_text k_insert_legacy = {
    "INSERT INTO pgjq.live_jobs (queue_name, job_type, priority, payload, run_at, max_attempts)"
    " VALUES ($1, $2, $3, $4, coalesce($5, now()), $6) RETURNING id",
    6, {TEXTOID, TEXTOID, INT4OID, JSONBOID, TIMESTAMPTZOID, INT4OID}};
const plan_text k_insert_unique_legacy = {
    "INSERT INTO pgjq.live_jobs (queue_name, job_type, priority, payload, run_at, max_attempts, unique_key)"
    " VALUES ($1, $2, $3, $4, coalesce($5, now()), $6, $7)"
    " ON CONFLICT (queue_name, unique_key) WHERE unique_key IS NOT NULL DO NOTHING RETURNING id",
    7, {TEXTOID, TEXTOID, INT4OID, JSONBOID, TIMESTAMPTZOID, INT4OID, TEXTOID}};
const plan_text k_draw_ids = {
    "SELECT pg_catalog.array_agg(pg_catalog.nextval('pgjq.job_id_seq'::pg_catalog.regclass))"
    "  FROM pg_catalog.generate_series(1, $1)",
    1, {INT4OID}};
// $7: the batch's ids, in payload order
const plan_text k_insert_batch = {
    "INSERT INTO pgjq.live_jobs (id, queue_name, job_type, priority, payload, run_at, max_attempts, enqueued_by)"
    " SELECT e.id, $1, $2, $3, e.payload, coalesce($5, now()), $6, $8"
    "   FROM ROWS FROM (pg_catalog.jsonb_array_elements($4), pg_catalog.unnest($7)) AS e(payload, id)",
    8, {TEXTOID, TEXTOID, INT4OID, JSONBOID, TIMESTAMPTZOID, INT4OID, INT8ARRAYOID, REGROLEOID}};
const plan_text k_insert_batch_legacy = {
    "INSERT INTO pgjq.live_jobs (id, queue_name, job_type, priority, payload, run_at, max_attempts)"
    " SELECT e.id, $1, $2, $3, e.payload, coalesce($5, now()), $6"
    "   FROM ROWS FROM (pg_catalog.jsonb_array_elements($4), pg_catalog.unnest($7)) AS e(payload, id)",
    7, {TEXTOID, TEXTOID, INT4OID, JSONBOID, TIMESTAMPTZOID, INT4OID, INT8ARRAYOID}};
// clang-format on

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
    const char* unique_key;  // nullptr when none
    int64 count;             // jobs asked for: 1, or the batch's length
    const api_call* call;    // who asks
};

enum class reservation { granted, queue_full };

// Reserves room for r.count jobs; returns the queue's default max_attempts through *max_attempts.
reservation reserve(const enqueue_request& r, bool raise_when_full, int32* max_attempts)
{
    if (reserve_depth(r.queue_text, r.count)) {
        bool isnull;
        HeapTuple row = SPI_tuptable->vals[0];
        *max_attempts = DatumGetInt32(SPI_getbinval(row, SPI_tuptable->tupdesc, 1, &isnull));
        bool fifo = DatumGetBool(SPI_getbinval(row, SPI_tuptable->tupdesc, 2, &isnull));
        if (fifo && r.priority != k_default_priority)
            ereport(ERROR,
                    (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                     errmsg("priority %d is not allowed on fifo queue \"%s\"", r.priority, r.queue_name),
                     errdetail("A fifo queue hands out its jobs strictly in enqueue order.")));
        return reservation::granted;
    }

    Datum values[2] = {r.queue_text, Int64GetDatum(unwritten_depth(r.queue_text))};
    run_plan(saved_plan(&s_why_refused, k_why_refused), values, nullptr);
    if (SPI_processed == 0)
        raise_unknown_queue(r.queue_name);
    if (!raise_when_full)
        return reservation::queue_full;
    char* limit = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);
    char* depth = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2);
    ereport(ERROR,
            (errcode(PGJQ_ERRCODE_QUEUE_FULL), errmsg("queue \"%s\" is full", r.queue_name),
             errdetail("It holds %s unfinished jobs; max_pending is %s and %lld more were asked for.",
                       depth ? depth : "0", limit, (long long) r.count),
             errhint("Retry later, or use pgjq.try_enqueue to get NULL instead of an error.")));
    pg_unreachable();
}

// The values of the insert statements (8: see k_insert).
void fill_insert_values(const enqueue_request& r, int32 max_attempts, Datum* values, char* nulls)
{
    values[0] = r.queue_text;
    values[1] = CStringGetTextDatum(r.job_type);
    values[2] = Int32GetDatum(r.priority);
    values[3] = JsonbPGetDatum(r.payload);
    values[4] = TimestampTzGetDatum(r.run_at);
    values[5] = Int32GetDatum(r.has_max_attempts ? r.max_attempts : max_attempts);
    values[6] = r.unique_key ? CStringGetTextDatum(r.unique_key) : (Datum) 0;
    values[7] = ObjectIdGetDatum(r.call->caller);
    memset(nulls, ' ', 8);
    if (!r.has_run_at)
        nulls[4] = 'n';
}

// What the workers learn at commit: runnable jobs are announced on pgjq_new_job, delayed ones wake the
// maintenance worker when they fall due. Done here rather than by row triggers on live_jobs, whose WHEN
// clauses cost a single-job enqueue about 9 % of its server CPU (measured: 181 vs 165 us, 7 pairs).
void announce_enqueued(const enqueue_request& r)
{
    if (r.has_run_at && r.run_at > GetCurrentTransactionStartTimestamp())
        wake_maintenance_at_commit(r.run_at);
    else
        announce_new_jobs(r.queue_name);
}

bool find_unique(const enqueue_request& r, int64* id)
{
    Datum values[2] = {r.queue_text, CStringGetTextDatum(r.unique_key)};
    run_plan(saved_plan(&s_find_unique, k_find_unique), values, nullptr, 1);
    bool isnull, found;
    Datum value = first_value(&isnull, &found);
    if (found)
        *id = DatumGetInt64(value);
    return found;
}

// Enqueues one job; returns false (and enqueues nothing) only when the queue is full and
// raise_when_full is false. Requires an SPI connection.
bool enqueue_one(const enqueue_request& r, bool raise_when_full, int64* id)
{
    for (int attempt = 0;; attempt++) {
        if (r.unique_key && find_unique(r, id))
            return true;
        int32 queue_max_attempts;
        if (reserve(r, raise_when_full, &queue_max_attempts) == reservation::queue_full)
            return false;
        Datum values[8];
        char nulls[8];
        fill_insert_values(r, queue_max_attempts, values, nulls);
        SPIPlanPtr plan;
        if (r.call->legacy)
            plan = r.unique_key ? saved_plan(&s_insert_unique_legacy, k_insert_unique_legacy)
                                : saved_plan(&s_insert_legacy, k_insert_legacy);
        else
            plan = r.unique_key ? saved_plan(&s_insert_unique, k_insert_unique) : saved_plan(&s_insert, k_insert);
        bool isnull, found;
        run_plan(plan, values, nulls);
        Datum value = first_value(&isnull, &found);
        if (found) {
            *id = DatumGetInt64(value);
            announce_enqueued(r);
            return true;
        }
        // Another transaction took the unique_key between our lookup and our insert: give the room
        // back and return that job instead (it may also finish in between, hence the loop).
        adjust_depth(values[0], -r.count);
        if (attempt >= 10)
            ereport(ERROR,
                    (errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
                     errmsg("could not enqueue with unique_key \"%s\" under concurrent updates", r.unique_key)));
    }
}

// The rules every enqueue path applies to what it was given, whether by arguments or by INSERT INTO
// pgjq.jobs. A batch's payloads are checked one by one (check_batch_payloads).
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
}

// Arguments shared by enqueue, try_enqueue and enqueue_batch (same order in all three).
void read_common_args(FunctionCallInfo fcinfo, enqueue_request* r, const char* payload_name, bool batch)
{
    require_arg(fcinfo, 0, "job_type");
    r->job_type = text_to_cstring(PG_GETARG_TEXT_PP(0));
    require_arg(fcinfo, 1, payload_name);
    r->payload = PG_GETARG_JSONB_P(1);
    require_arg(fcinfo, 2, "queue_name");
    r->queue_name = text_to_cstring(PG_GETARG_TEXT_PP(2));
    require_arg(fcinfo, 3, "priority");
    r->priority = PG_GETARG_INT32(3);
    r->has_run_at = !PG_ARGISNULL(4);
    r->run_at = r->has_run_at ? PG_GETARG_TIMESTAMPTZ(4) : 0;
    r->has_max_attempts = !PG_ARGISNULL(5);
    r->max_attempts = r->has_max_attempts ? PG_GETARG_INT32(5) : 0;
    r->unique_key = nullptr;
    r->count = 1;
}

Datum enqueue_call(FunctionCallInfo fcinfo, const api_call& call, bool raise_when_full)
{
    require_some(call, cap_producer);
    enqueue_request r;
    r.call = &call;
    read_common_args(fcinfo, &r, "payload", false);
    r.unique_key = PG_ARGISNULL(6) ? nullptr : text_to_cstring(PG_GETARG_TEXT_PP(6));
    check_request(r, false);
    require(call, cap_producer, r.queue_name);
    r.queue_text = CStringGetTextDatum(r.queue_name);

    SPI_connect();
    int64 id = 0;
    bool enqueued = enqueue_one(r, raise_when_full, &id);
    SPI_finish();
    if (!enqueued)
        PG_RETURN_NULL();
    PG_RETURN_INT64(id);
}

// Checks that payloads is a JSON array whose every element fits the payload limit; returns its length.
int64 check_batch_payloads(const Jsonb* payloads)
{
    if (!JB_ROOT_IS_ARRAY(payloads) || JB_ROOT_IS_SCALAR(payloads))
        ereport(ERROR,
                (errcode(ERRCODE_INVALID_PARAMETER_VALUE), errmsg("payloads must be a JSON array"),
                 errdetail("Each element of the array is the payload of one job.")));
    int elements = JB_ROOT_COUNT(payloads);
    if (elements > k_max_batch_size)
        ereport(ERROR,
                (errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED), errmsg("payloads has %d elements", elements),
                 errdetail("At most %d jobs can be enqueued in one call.", k_max_batch_size)));
    int bytes = VARSIZE(payloads) - VARHDRSZ;
    if (bytes > max_batch_bytes)
        ereport(ERROR,
                (errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED), errmsg("payloads is too large (%d bytes)", bytes),
                 errdetail("The limit set by pgjq.max_batch_bytes is %d bytes.", max_batch_bytes),
                 errhint("Enqueue the jobs in several calls, in one transaction if they belong together.")));
    JsonbIterator* it = JsonbIteratorInit(const_cast<JsonbContainer*>(&payloads->root));
    JsonbValue value;
    JsonbIteratorToken token;
    int64 index = 0;
    while ((token = JsonbIteratorNext(&it, &value, true)) != WJB_DONE) {
        if (token != WJB_ELEM)
            continue;
        int size = value.type == jbvBinary ? value.val.binary.len : value.type == jbvString ? value.val.string.len : 0;
        if (size > max_payload_bytes)
            ereport(ERROR,
                    (errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
                     errmsg("payloads[%lld] is too large (%d bytes)", (long long) index, size),
                     errdetail("The limit set by pgjq.max_payload_bytes is %d bytes.", max_payload_bytes),
                     errhint("Store large data elsewhere and enqueue a reference to it.")));
        index++;
    }
    return index;
}

// A batch's ids, drawn as one contiguous run (in the usual case) while no other batch draws: ids drawn
// row by row by concurrent batches interleave, and a claim, which walks jobs in id order, then visits
// another heap page for nearly every job (under an old snapshot, for every dead entry it walks past:
// measured 12-15 ms per claim after two concurrent loaders, 8.5-11 ms after one). Single enqueues do
// not take the lock; they may land inside a batch's run.
Datum draw_batch_ids(int32 count)
{
    Oid sequence = pgjq_relation("job_id_seq");
    LockRelationOid(sequence, ShareUpdateExclusiveLock);  // conflicts with itself, not with nextval's lock
    Datum values[1] = {Int32GetDatum(count)};
    run_plan(saved_plan(&s_draw_ids, k_draw_ids), values, nullptr);
    UnlockRelationOid(sequence, ShareUpdateExclusiveLock);
    bool isnull, found;
    return first_value(&isnull, &found);
}

}  // namespace

PGJQ_API_FUNCTION(enqueue)
{
    return enqueue_call(fcinfo, call, true);
}

PGJQ_API_FUNCTION(try_enqueue)
{
    return enqueue_call(fcinfo, call, false);
}

PGJQ_API_FUNCTION(enqueue_batch)
{
    require_some(call, cap_producer);
    enqueue_request r;
    r.call = &call;
    read_common_args(fcinfo, &r, "payloads", true);
    check_request(r, true);
    require(call, cap_producer, r.queue_name);
    r.queue_text = CStringGetTextDatum(r.queue_name);
    r.count = check_batch_payloads(r.payload);
    if (r.count == 0)
        PG_RETURN_ARRAYTYPE_P(construct_empty_array(INT8OID));

    SPI_connect();
    int32 queue_max_attempts;
    reserve(r, true, &queue_max_attempts);
    Datum ids = draw_batch_ids(static_cast<int32>(r.count));
    Datum values[8];
    char nulls[8];
    fill_insert_values(r, queue_max_attempts, values, nulls);
    values[6] = ids;
    nulls[6] = ' ';
    run_plan(call.legacy ? saved_plan(&s_insert_batch_legacy, k_insert_batch_legacy)
                         : saved_plan(&s_insert_batch, k_insert_batch),
             values, nulls);
    announce_enqueued(r);
    // copied out of SPI memory, which SPI_finish frees
    ArrayType* drawn = DatumGetArrayTypeP(ids);
    ArrayType* result = static_cast<ArrayType*>(SPI_palloc(VARSIZE(drawn)));
    memcpy(result, drawn, VARSIZE(drawn));
    SPI_finish();
    PG_RETURN_ARRAYTYPE_P(result);
}

// INSERT INTO pgjq.jobs (job_type, payload, queue_name, ...) takes the enqueue path, so plain SQL gets
// the same checks, backpressure and notifications. Columns other than those of pgjq.enqueue are ignored.
PGJQ_API_FUNCTION(insert_into_jobs_view)
{
    TriggerData* trigger = trigger_data(fcinfo, "insert_into_jobs_view");
    require_some(call, cap_producer);
    TupleDesc desc = trigger->tg_relation->rd_att;
    HeapTuple row = trigger->tg_trigtuple;
    bool isnull;

    enqueue_request r;
    r.call = &call;
    Datum v = heap_getattr(row, SPI_fnumber(desc, "job_type"), desc, &isnull);
    if (isnull)
        ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED), errmsg("job_type must not be null")));
    r.job_type = TextDatumGetCString(v);
    v = heap_getattr(row, SPI_fnumber(desc, "payload"), desc, &isnull);
    r.payload = isnull ? DatumGetJsonbP(DirectFunctionCall1(jsonb_in, CStringGetDatum("{}"))) : DatumGetJsonbP(v);
    v = heap_getattr(row, SPI_fnumber(desc, "queue_name"), desc, &isnull);
    r.queue_name = isnull ? "default" : TextDatumGetCString(v);
    v = heap_getattr(row, SPI_fnumber(desc, "priority"), desc, &isnull);
    r.priority = isnull ? k_default_priority : DatumGetInt32(v);
    v = heap_getattr(row, SPI_fnumber(desc, "run_at"), desc, &isnull);
    r.has_run_at = !isnull;
    r.run_at = isnull ? 0 : DatumGetTimestampTz(v);
    v = heap_getattr(row, SPI_fnumber(desc, "max_attempts"), desc, &isnull);
    r.has_max_attempts = !isnull;
    r.max_attempts = isnull ? 0 : DatumGetInt32(v);
    v = heap_getattr(row, SPI_fnumber(desc, "unique_key"), desc, &isnull);
    r.unique_key = isnull ? nullptr : TextDatumGetCString(v);
    r.count = 1;
    check_request(r, false);
    require(call, cap_producer, r.queue_name);
    r.queue_text = CStringGetTextDatum(r.queue_name);

    SPI_connect();
    int64 id = 0;
    enqueue_one(r, true, &id);
    SPI_finish();

    // RETURNING sees the job as enqueued: its id and status
    int columns[2] = {SPI_fnumber(desc, "id"), SPI_fnumber(desc, "status")};
    Oid status_type = TupleDescAttr(desc, columns[1] - 1)->atttypid;
    Datum values[2] = {Int64GetDatum(id),
                       DirectFunctionCall2(enum_in, CStringGetDatum("pending"), ObjectIdGetDatum(status_type))};
    bool nulls[2] = {false, false};
    return PointerGetDatum(heap_modify_tuple_by_cols(row, desc, 2, columns, values, nulls));
}
