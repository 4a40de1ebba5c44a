// enqueue.cpp: enqueue, try_enqueue, enqueue_batch, and INSERT INTO pgjq.jobs (an INSTEAD OF trigger): their
// arguments, read into an enqueue_request and checked; core/enqueue.hpp does the enqueueing.
#include "core/enqueue.hpp"
#include "core/api_function.hpp"
#include "core/enqueue_dependencies.hpp"
#include "pg/args.hpp"
#include "pg/limits.hpp"
#include "pg/settings.hpp"
#include "pg/spi.hpp"
#include "pg/trigger.hpp"

namespace {

using namespace pgjq;

// Arguments shared by enqueue, try_enqueue and enqueue_batch (same order in all three up to max_attempts;
// from 0.2.0 also group_key (or group_keys), depends_on, timeout and unique_for at 7 to 10; from 0.3.0 the
// headers at 11).
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
    r->group_key = nullptr;
    r->depends_on = nullptr;
    r->depends = {(Datum) 0, 0, false};
    r->timeout = nullptr;
    r->unique_for = nullptr;
    r->count = 1;
    // A database at 0.1.0 declares the functions without these arguments.
    if (PG_NARGS() > 10) {
        if (!batch && !PG_ARGISNULL(7))
            r->group_key = text_to_cstring(PG_GETARG_TEXT_PP(7));
        if (!PG_ARGISNULL(8))
            r->depends_on = dependencies_arg(PG_GETARG_ARRAYTYPE_P(8));
        r->timeout = PG_ARGISNULL(9) ? nullptr : PG_GETARG_INTERVAL_P(9);
        r->unique_for = PG_ARGISNULL(10) ? nullptr : PG_GETARG_INTERVAL_P(10);
    }
    r->headers = PG_NARGS() > 11 && !PG_ARGISNULL(11) ? PG_GETARG_JSONB_P(11) : nullptr;
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
    if (r.depends_on)
        r.depends = judge_dependencies(r);
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
    int64 index = 0;
    for_each_payload(payloads, [&](JsonbValue& value) {
        int size = value.type == jbvBinary ? value.val.binary.len : value.type == jbvString ? value.val.string.len : 0;
        if (size > max_payload_bytes)
            ereport(ERROR,
                    (errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
                     errmsg("payloads[%lld] is too large (%d bytes)", (long long) index, size),
                     errdetail("The limit set by pgjq.max_payload_bytes is %d bytes.", max_payload_bytes),
                     errhint("Store large data elsewhere and enqueue a reference to it.")));
        index++;
    });
    return index;
}

// A batch's unique_keys or group_keys: one-dimensional, one element per payload, each NULL or a valid key.
// Returns them as C strings (nullptr for NULL elements), or nullptr when the argument is NULL.
char** batch_keys_arg(FunctionCallInfo fcinfo, int argno, const char* name, int64 payloads)
{
    if (PG_NARGS() <= argno || PG_ARGISNULL(argno))
        return nullptr;
    ArrayType* keys = PG_GETARG_ARRAYTYPE_P(argno);
    if (ARR_NDIM(keys) > 1)
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE), errmsg("%s must be a one-dimensional array", name)));
    Datum* elems;
    bool* nulls;
    int n;
    deconstruct_array(keys, TEXTOID, -1, false, TYPALIGN_INT, &elems, &nulls, &n);
    if (n != payloads)
        ereport(ERROR,
                (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                 errmsg("%s has %d elements and payloads %lld", name, n, (long long) payloads),
                 errdetail("%s holds one key (or NULL) per payload, in the same order.", name)));
    char** result = static_cast<char**>(palloc(sizeof(char*) * (n + 1)));
    for (int i = 0; i < n; i++) {
        result[i] = nulls[i] ? nullptr : TextDatumGetCString(elems[i]);
        if (result[i])
            check_short_text(result[i], psprintf("%s[%d]", name, i + 1));
    }
    return result;
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
    char** unique_keys = batch_keys_arg(fcinfo, 6, "unique_keys", r.count);
    char** group_keys = batch_keys_arg(fcinfo, 7, "group_keys", r.count);
    if (r.unique_for && !unique_keys)
        ereport(ERROR,
                (errcode(ERRCODE_INVALID_PARAMETER_VALUE), errmsg("unique_for needs unique_keys"),
                 errdetail("unique_for says how long each job's unique_key stays taken.")));
    if (r.count == 0)
        PG_RETURN_ARRAYTYPE_P(construct_empty_array(INT8OID));

    SPI_connect();
    if (r.depends_on)
        r.depends = judge_dependencies(r);
    ArrayType* ids = enqueue_batch(r, unique_keys, group_keys);
    // copied out of SPI memory, which SPI_finish frees
    ArrayType* result = static_cast<ArrayType*>(SPI_palloc(VARSIZE(ids)));
    memcpy(result, ids, VARSIZE(ids));
    SPI_finish();
    PG_RETURN_ARRAYTYPE_P(result);
}

namespace {

using namespace pgjq;

// The columns an INSERT INTO pgjq.jobs sets: pgjq.enqueue's arguments. pgjq sets every other one itself.
const char* const k_insertable_columns[] = {"job_type",   "payload",      "queue_name", "priority",
                                            "run_at",     "max_attempts", "unique_key", "group_key",
                                            "depends_on", "timeout",      "headers"};

// A value given for a column pgjq sets itself is refused rather than ignored: RETURNING would echo it.
void refuse_set_columns(TupleDesc desc, HeapTuple row)
{
    for (int i = 0; i < desc->natts; i++) {
        Form_pg_attribute a = TupleDescAttr(desc, i);
        if (a->attisdropped || heap_attisnull(row, i + 1, desc))
            continue;
        bool insertable = false;
        for (const char* name : k_insertable_columns)
            insertable = insertable || strcmp(NameStr(a->attname), name) == 0;
        if (insertable)
            continue;
        StringInfoData columns;
        initStringInfo(&columns);
        for (const char* name : k_insertable_columns)
            appendStringInfo(&columns, "%s%s", columns.len > 0 ? ", " : "", name);
        ereport(ERROR,
                (errcode(ERRCODE_GENERATED_ALWAYS),
                 errmsg("cannot insert a value into column \"%s\" of pgjq.jobs", NameStr(a->attname)),
                 errdetail("pgjq sets it when it enqueues the job."), errhint("An INSERT sets %s.", columns.data)));
    }
}

// The job a unique_key hit returned, as pgjq.jobs shows it, copied out of SPI memory.
HeapTuple stored_job(int64 id)
{
    static SPIPlanPtr plan;
    static const plan_text k_stored = {"SELECT * FROM pgjq.jobs WHERE id = $1", 1, {INT8OID}};
    Datum value = Int64GetDatum(id);
    if (run_plan(saved_plan(&plan, k_stored), &value, nullptr, 1) == 0)
        return nullptr;
    return SPI_copytuple(SPI_tuptable->vals[0]);
}

}  // namespace

// INSERT INTO pgjq.jobs (job_type, payload, queue_name, ...) takes the enqueue path, so plain SQL gets
// the same checks, backpressure and notifications. RETURNING sees the job as it was stored.
PGJQ_API_FUNCTION(insert_into_jobs_view)
{
    TriggerData* trigger = trigger_data(fcinfo, "insert_into_jobs_view");
    require_some(call, cap_producer);
    TupleDesc desc = trigger->tg_relation->rd_att;
    HeapTuple row = trigger->tg_trigtuple;
    refuse_set_columns(desc, row);
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
    r.group_key = nullptr;
    r.depends_on = nullptr;
    r.depends = {(Datum) 0, 0, false};
    r.timeout = nullptr;
    r.unique_for = nullptr;
    // The view of a database at 0.1.0 has none of these columns.
    int group_column = SPI_fnumber(desc, "group_key");
    if (group_column > 0) {
        v = heap_getattr(row, group_column, desc, &isnull);
        r.group_key = isnull ? nullptr : TextDatumGetCString(v);
        v = heap_getattr(row, SPI_fnumber(desc, "depends_on"), desc, &isnull);
        r.depends_on = isnull ? nullptr : dependencies_arg(DatumGetArrayTypeP(v));
        v = heap_getattr(row, SPI_fnumber(desc, "timeout"), desc, &isnull);
        r.timeout = isnull ? nullptr : DatumGetIntervalP(v);
    }
    // From 0.3.0.
    int headers_column = SPI_fnumber(desc, "headers");
    if (headers_column > 0) {
        v = heap_getattr(row, headers_column, desc, &isnull);
        r.headers = isnull ? nullptr : DatumGetJsonbP(v);
    }
    r.count = 1;
    check_request(r, false);
    require(call, cap_producer, r.queue_name);
    r.queue_text = CStringGetTextDatum(r.queue_name);

    SPI_connect();
    if (r.depends_on)
        r.depends = judge_dependencies(r);
    int64 id = 0;
    enqueued_job stored;
    enqueue_one(r, true, &id, &stored);
    // A job that held the unique_key: the caller's values are not its. (Read only then: a new job's row is
    // known without reading it.)
    HeapTuple existing = stored.existed ? stored_job(id) : nullptr;
    SPI_finish();
    if (existing != nullptr)
        return PointerGetDatum(existing);

    // A new job: what the enqueue decided, the defaults it applied included. Columns the table fills
    // (created_at, attempts, ...) and those that come with a claim stay as given: NULL.
    const char* names[] = {"id",      "status", "queue_name",   "priority",
                           "payload", "run_at", "max_attempts", "enqueued_by"};
    constexpr int n = lengthof(names);
    int columns[n];
    for (int i = 0; i < n; i++)
        columns[i] = SPI_fnumber(desc, names[i]);
    Oid status_type = TupleDescAttr(desc, columns[1] - 1)->atttypid;
    Datum values[n] = {
        Int64GetDatum(id),
        DirectFunctionCall2(enum_in, CStringGetDatum(waits(r) ? "waiting" : "pending"), ObjectIdGetDatum(status_type)),
        r.queue_text,
        Int32GetDatum(r.priority),
        JsonbPGetDatum(r.payload),
        TimestampTzGetDatum(r.has_run_at ? r.run_at : GetCurrentTransactionStartTimestamp()),
        Int32GetDatum(stored.max_attempts),
        ObjectIdGetDatum(call.caller)};
    bool nulls[n] = {};
    // The view of a database at 0.1.0 has no enqueued_by, which that database does not record.
    int given = columns[n - 1] > 0 ? n : n - 1;
    return PointerGetDatum(heap_modify_tuple_by_cols(row, desc, given, columns, values, nulls));
}
