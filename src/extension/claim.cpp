// claim.cpp: claim_job_batch, the hot path of every worker.
//
// The claim walks live_jobs_claim_idx in exactly its order (priority DESC, id) inside a MATERIALIZED
// CTE with LIMIT and FOR UPDATE SKIP LOCKED, so it locks at most batch_size rows and never waits for
// another claimer; one UPDATE then stamps the attempt, the worker and the lease.
// FIFO queues serialize their claimers on the queue's row and hand out only the oldest runnable job,
// and only while none of the queue's jobs is claimed or running.
#include "args.hpp"
#include "boundary.hpp"
#include "complete.hpp"
#include "job_columns.hpp"
#include "spi_plans.hpp"

namespace {

using namespace pgjq;

SPIPlanPtr s_queue, s_claim_any, s_claim_types, s_fifo_lock, s_fifo_busy, s_fifo_claim;

const plan_text k_queue = {
    "SELECT paused, fifo, lease FROM pgjq.queues WHERE queue_name = $1", 1, {TEXTOID}};

#define CLAIM_UPDATE                                                                                   \
    "UPDATE pgjq.live_jobs j SET status = 'claimed', worker_id = $3, claimed_at = now(),"              \
    " heartbeat_at = now(), lease_expires_at = now() + $4, attempts = j.attempts + 1"                  \
    " WHERE j.id = ANY (ARRAY(SELECT id FROM picked)) RETURNING j.*) "                                 \
    "SELECT " PGJQ_LIVE_JOB_AS_VIEW_ROW("c") " FROM claimed c ORDER BY c.priority DESC, c.id"

const plan_text k_claim_any = {
    "WITH picked AS MATERIALIZED ("
    "  SELECT id FROM pgjq.live_jobs"
    "   WHERE queue_name = $1 AND status = 'pending' AND run_at <= now()"
    "   ORDER BY priority DESC, id LIMIT $2 FOR UPDATE SKIP LOCKED),"
    " claimed AS (" CLAIM_UPDATE,
    4, {TEXTOID, INT4OID, TEXTOID, INTERVALOID}};
const plan_text k_claim_types = {
    "WITH picked AS MATERIALIZED ("
    "  SELECT id FROM pgjq.live_jobs"
    "   WHERE queue_name = $1 AND status = 'pending' AND run_at <= now() AND job_type = ANY ($5)"
    "   ORDER BY priority DESC, id LIMIT $2 FOR UPDATE SKIP LOCKED),"
    " claimed AS (" CLAIM_UPDATE,
    5, {TEXTOID, INT4OID, TEXTOID, INTERVALOID, TEXTARRAYOID}};
const plan_text k_fifo_lock = {
    "SELECT 1 FROM pgjq.queues WHERE queue_name = $1 FOR UPDATE", 1, {TEXTOID}};
const plan_text k_fifo_busy = {
    "SELECT EXISTS (SELECT 1 FROM pgjq.live_jobs WHERE queue_name = $1 AND status <> 'pending')", 1, {TEXTOID}};
// Strict order: the oldest runnable job is taken only if the worker handles its type; otherwise the
// worker gets nothing and the job waits for a worker that does.
const plan_text k_fifo_claim = {
    "WITH oldest AS MATERIALIZED ("
    "  SELECT id, job_type FROM pgjq.live_jobs"
    "   WHERE queue_name = $1 AND status = 'pending' AND run_at <= now()"
    "   ORDER BY priority DESC, id LIMIT $2 FOR UPDATE),"
    " picked AS (SELECT id FROM oldest WHERE $5::text[] IS NULL OR job_type = ANY ($5)),"
    " claimed AS (" CLAIM_UPDATE,
    5, {TEXTOID, INT4OID, TEXTOID, INTERVALOID, TEXTARRAYOID}};

// NULL means any type; otherwise a non-empty one-dimensional array of non-empty names.
ArrayType* job_types_arg(FunctionCallInfo fcinfo, int argno)
{
    if (PG_ARGISNULL(argno))
        return nullptr;
    ArrayType* types = PG_GETARG_ARRAYTYPE_P(argno);
    int n = ArrayGetNItems(ARR_NDIM(types), ARR_DIMS(types));
    if (n == 0 || ARR_NDIM(types) != 1)
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                        errmsg("job_types must be NULL or a non-empty one-dimensional array"),
                        errhint("Pass NULL to claim jobs of any type.")));
    Datum* elems;
    bool* nulls;
    int count;
    deconstruct_array(types, TEXTOID, -1, false, TYPALIGN_INT, &elems, &nulls, &count);
    for (int i = 0; i < count; i++) {
        if (nulls[i])
            ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED), errmsg("job_types[%d] must not be null", i + 1)));
        check_short_text(TextDatumGetCString(elems[i]), psprintf("job_types[%d]", i + 1));
    }
    return types;
}

// Claims into the call's result set. Requires an SPI connection.
void claim_into(FunctionCallInfo fcinfo, const char* worker_id, ArrayType* job_types, int32 batch_size,
                const char* queue_name)
{
    ReturnSetInfo* rsinfo = reinterpret_cast<ReturnSetInfo*>(fcinfo->resultinfo);
    Datum queue_value[1] = {CStringGetTextDatum(queue_name)};
    if (run_plan(saved_plan(&s_queue, k_queue), queue_value, nullptr) == 0)
        ereport(ERROR, (errcode(ERRCODE_UNDEFINED_OBJECT), errmsg("queue \"%s\" does not exist", queue_name)));
    bool isnull;
    HeapTuple queue_row = SPI_tuptable->vals[0];
    TupleDesc queue_desc = SPI_tuptable->tupdesc;
    bool paused = DatumGetBool(SPI_getbinval(queue_row, queue_desc, 1, &isnull));
    bool fifo = DatumGetBool(SPI_getbinval(queue_row, queue_desc, 2, &isnull));
    Datum lease = SPI_getbinval(queue_row, queue_desc, 3, &isnull);
    if (paused)
        return;

    Datum values[5] = {queue_value[0], Int32GetDatum(batch_size), CStringGetTextDatum(worker_id), lease,
                       job_types ? PointerGetDatum(job_types) : (Datum) 0};
    char nulls[5] = {' ', ' ', ' ', ' ', job_types ? ' ' : 'n'};
    SPIPlanPtr claim;
    if (fifo) {
        // The busy test below must see claims committed while we waited for the queue's lock, which
        // only a fresh snapshot per statement (READ COMMITTED) gives.
        if (IsolationUsesXactSnapshot())
            ereport(ERROR, (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
                            errmsg("claiming from fifo queue \"%s\" requires READ COMMITTED isolation", queue_name)));
        run_plan(saved_plan(&s_fifo_lock, k_fifo_lock), queue_value, nullptr);
        run_plan(saved_plan(&s_fifo_busy, k_fifo_busy), queue_value, nullptr);
        bool found;
        if (DatumGetBool(first_value(&isnull, &found)))
            return;
        values[1] = Int32GetDatum(1);
        claim = saved_plan(&s_fifo_claim, k_fifo_claim);
    } else {
        claim = job_types ? saved_plan(&s_claim_types, k_claim_types) : saved_plan(&s_claim_any, k_claim_any);
    }

    uint64 n = run_plan(claim, values, nulls);
    Datum row_values[32];
    bool row_nulls[32];
    TupleDesc spi_desc = SPI_tuptable->tupdesc;
    if (spi_desc->natts != rsinfo->setDesc->natts || spi_desc->natts > 32)
        elog(ERROR, "pgjq: claim returned %d columns, pgjq.jobs has %d", spi_desc->natts, rsinfo->setDesc->natts);
    for (uint64 i = 0; i < n; i++) {
        heap_deform_tuple(SPI_tuptable->vals[i], spi_desc, row_values, row_nulls);
        tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, row_values, row_nulls);
    }
}

} // namespace

PGJQ_FUNCTION(claim_job_batch)
{
    char* worker_id = short_text_arg(fcinfo, 0, "worker_id");
    ArrayType* job_types = job_types_arg(fcinfo, 1);
    int32 batch_size = int_arg_in_range(fcinfo, 2, "batch_size", 1, k_max_batch_size);
    char* queue_name = queue_name_arg(fcinfo, 3);

    InitMaterializedSRF(fcinfo, 0);
    SPI_connect();
    claim_into(fcinfo, worker_id, job_types, batch_size, queue_name);
    SPI_finish();
    return (Datum) 0;
}

// A worker's loop in one call and one commit: complete the batch it finished, claim the next.
PGJQ_FUNCTION(complete_and_claim)
{
    char* worker_id = short_text_arg(fcinfo, 0, "worker_id");
    ArrayType* completed = PG_ARGISNULL(1) ? nullptr : PG_GETARG_ARRAYTYPE_P(1);
    ArrayType* job_types = job_types_arg(fcinfo, 2);
    int32 batch_size = int_arg_in_range(fcinfo, 3, "batch_size", 1, k_max_batch_size);
    char* queue_name = queue_name_arg(fcinfo, 4);

    InitMaterializedSRF(fcinfo, 0);
    SPI_connect();
    if (completed)
        complete_held_jobs(completed, worker_id, "completed_ids");
    claim_into(fcinfo, worker_id, job_types, batch_size, queue_name);
    SPI_finish();
    return (Datum) 0;
}
