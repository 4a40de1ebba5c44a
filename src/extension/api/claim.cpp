// claim.cpp: claim_job_batch, the hot path of every worker.
//
// The claim walks live_jobs_claim_idx in exactly its order (priority DESC, id) inside a MATERIALIZED
// CTE with LIMIT and FOR UPDATE SKIP LOCKED, so it locks at most batch_size rows and never waits for
// another claimer; one UPDATE then stamps the attempt, the worker and the lease.
// FIFO queues serialize their claimers on the queue's row and hand out only the oldest runnable job,
// and only while none of the queue's jobs is claimed or running.
//
// claim_in_transaction is the lock-only variant: the picked rows are locked FOR UPDATE and nothing is
// written, so the jobs stay claimed exactly as long as the caller's transaction, which then completes or
// fails them with complete_in_transaction / fail_in_transaction. That saves the claim's non-HOT UPDATE,
// its two index inserts and a commit (measured: 21 -> 12 ms of server CPU per 1000 jobs at batch 100).
#include "core/args.hpp"
#include "core/boundary.hpp"
#include "core/job_columns.hpp"
#include "core/lifecycle.hpp"
#include "core/spi.hpp"
#include "core/transaction_claims.hpp"

namespace {

using namespace pgjq;

SPIPlanPtr s_queue, s_claim_any, s_claim_types, s_fifo_lock, s_fifo_busy, s_fifo_claim;
SPIPlanPtr s_lock_any, s_lock_types, s_fifo_lock_oldest;

// clang-format off
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

// In-transaction claims: the row as this transaction runs it (attempt number, worker, start), which is
// also what its history row will say; other sessions keep seeing the job pending, and locked, until the
// transaction ends. $4 excludes the jobs this transaction already holds: SKIP LOCKED does not skip a
// transaction's own locks.
#define LOCKED_JOB_ROW                                                                                 \
    "SELECT j.id, j.queue_name, j.job_type, j.priority, 'running'::pgjq.job_status, j.payload, NULL::jsonb," \
    " j.run_at, j.unique_key, j.progress, j.current_stage, j.events_count, $3, now(), NULL::timestamptz," \
    " NULL::timestamptz, j.created_at, now(), NULL::timestamptz, NULL::timestamptz, NULL::timestamptz,"  \
    " j.attempts + 1, j.max_attempts, j.last_error"
const plan_text k_lock_any = {
    LOCKED_JOB_ROW " FROM pgjq.live_jobs j"
    " WHERE j.queue_name = $1 AND j.status = 'pending' AND j.run_at <= now() AND j.id <> ALL ($4)"
    " ORDER BY j.priority DESC, j.id LIMIT $2 FOR UPDATE SKIP LOCKED",
    4, {TEXTOID, INT4OID, TEXTOID, INT8ARRAYOID}};
const plan_text k_lock_types = {
    LOCKED_JOB_ROW " FROM pgjq.live_jobs j"
    " WHERE j.queue_name = $1 AND j.status = 'pending' AND j.run_at <= now() AND j.id <> ALL ($4)"
    "   AND j.job_type = ANY ($5)"
    " ORDER BY j.priority DESC, j.id LIMIT $2 FOR UPDATE SKIP LOCKED",
    5, {TEXTOID, INT4OID, TEXTOID, INT8ARRAYOID, TEXTARRAYOID}};
// FIFO: the oldest runnable job, whoever holds it (it may be this transaction's own), and whether the
// worker handles its type (the extra last column).
const plan_text k_fifo_lock_oldest = {
    LOCKED_JOB_ROW ", $5::text[] IS NULL OR j.job_type = ANY ($5) FROM pgjq.live_jobs j"
    " WHERE j.queue_name = $1 AND j.status = 'pending' AND j.run_at <= now()"
    " ORDER BY j.priority DESC, j.id LIMIT 1 FOR UPDATE",
    5, {TEXTOID, INT4OID, TEXTOID, INT8ARRAYOID, TEXTARRAYOID}};
// clang-format on

// NULL means any type; otherwise a non-empty one-dimensional array of non-empty names.
ArrayType* job_types_arg(FunctionCallInfo fcinfo, int argno)
{
    if (PG_ARGISNULL(argno))
        return nullptr;
    ArrayType* types = PG_GETARG_ARRAYTYPE_P(argno);
    int n = ArrayGetNItems(ARR_NDIM(types), ARR_DIMS(types));
    if (n == 0 || ARR_NDIM(types) != 1)
        ereport(ERROR,
                (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
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

struct queue_settings {
    bool paused;
    bool fifo;
    Datum lease;
};

queue_settings read_queue(Datum queue_value, const char* queue_name)
{
    if (run_plan(saved_plan(&s_queue, k_queue), &queue_value, nullptr) == 0)
        raise_unknown_queue(queue_name);
    bool isnull;
    HeapTuple row = SPI_tuptable->vals[0];
    TupleDesc desc = SPI_tuptable->tupdesc;
    return {DatumGetBool(SPI_getbinval(row, desc, 1, &isnull)), DatumGetBool(SPI_getbinval(row, desc, 2, &isnull)),
            SPI_getbinval(row, desc, 3, &isnull)};
}

// Takes the FIFO queue's lock (until the transaction ends) and tells whether one of its jobs is claimed
// or running under a lease, in which case nothing may be claimed.
bool fifo_queue_busy(Datum queue_value, const char* queue_name)
{
    // The busy test below must see claims committed while we waited for the queue's lock, which
    // only a fresh snapshot per statement (READ COMMITTED) gives.
    if (IsolationUsesXactSnapshot())
        ereport(ERROR,
                (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
                 errmsg("claiming from fifo queue \"%s\" requires READ COMMITTED isolation", queue_name)));
    run_plan(saved_plan(&s_fifo_lock, k_fifo_lock), &queue_value, nullptr);
    run_plan(saved_plan(&s_fifo_busy, k_fifo_busy), &queue_value, nullptr);
    bool isnull, found;
    return DatumGetBool(first_value(&isnull, &found));
}

// Copies the first `rows` rows of the last SPI result into the call's result set (their leading columns:
// a claim may select more than pgjq.jobs has).
void return_rows(FunctionCallInfo fcinfo, uint64 rows)
{
    ReturnSetInfo* rsinfo = reinterpret_cast<ReturnSetInfo*>(fcinfo->resultinfo);
    TupleDesc spi_desc = SPI_tuptable->tupdesc;
    Datum row_values[32];
    bool row_nulls[32];
    if (spi_desc->natts < rsinfo->setDesc->natts || spi_desc->natts > 32)
        elog(ERROR, "pgjq: claim returned %d columns, pgjq.jobs has %d", spi_desc->natts, rsinfo->setDesc->natts);
    for (uint64 i = 0; i < rows; i++) {
        heap_deform_tuple(SPI_tuptable->vals[i], spi_desc, row_values, row_nulls);
        tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, row_values, row_nulls);
    }
}

// Claims into the call's result set: under a lease, or (in_transaction) held by this transaction's row
// locks. Requires an SPI connection.
void claim_into(FunctionCallInfo fcinfo, const char* worker_id, ArrayType* job_types, int32 batch_size,
                const char* queue_name, bool in_transaction)
{
    Datum queue_value = CStringGetTextDatum(queue_name);
    queue_settings queue = read_queue(queue_value, queue_name);
    if (queue.paused)
        return;

    // $4: the lease, or the jobs this transaction already holds
    Datum values[5] = {queue_value, Int32GetDatum(batch_size), CStringGetTextDatum(worker_id),
                       in_transaction ? PointerGetDatum(ids_claimed_here()) : queue.lease,
                       job_types ? PointerGetDatum(job_types) : (Datum) 0};
    char nulls[5] = {' ', ' ', ' ', ' ', job_types ? ' ' : 'n'};
    // In a transaction the FIFO queue's lock is held until it ends, so other claimers of the queue wait
    // for its outcome instead of taking the next job.
    if (queue.fifo && fifo_queue_busy(queue_value, queue_name))
        return;
    if (!in_transaction) {
        SPIPlanPtr claim;
        if (queue.fifo) {
            values[1] = Int32GetDatum(1);
            claim = saved_plan(&s_fifo_claim, k_fifo_claim);
        } else {
            claim = job_types ? saved_plan(&s_claim_types, k_claim_types) : saved_plan(&s_claim_any, k_claim_any);
        }
        return_rows(fcinfo, run_plan(claim, values, nulls));
        return;
    }

    uint64 n;
    bool isnull;
    if (queue.fifo) {
        n = run_plan(saved_plan(&s_fifo_lock_oldest, k_fifo_lock_oldest), values, nulls);
        if (n == 1) {
            HeapTuple oldest = SPI_tuptable->vals[0];
            TupleDesc desc = SPI_tuptable->tupdesc;
            int64 id = DatumGetInt64(SPI_getbinval(oldest, desc, 1, &isnull));
            bool wanted = DatumGetBool(SPI_getbinval(oldest, desc, desc->natts, &isnull));
            if (!wanted || claimed_here(id, worker_id) != claim_here_state::not_claimed)
                n = 0;
        }
    } else {
        n = run_plan(job_types ? saved_plan(&s_lock_types, k_lock_types) : saved_plan(&s_lock_any, k_lock_any), values,
                     nulls);
    }
    for (uint64 i = 0; i < n; i++)
        remember_claimed_here(DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1, &isnull)),
                              worker_id);
    return_rows(fcinfo, n);
}

}  // namespace

PGJQ_FUNCTION(claim_job_batch)
{
    char* worker_id = short_text_arg(fcinfo, 0, "worker_id");
    ArrayType* job_types = job_types_arg(fcinfo, 1);
    int32 batch_size = int_arg_in_range(fcinfo, 2, "batch_size", 1, k_max_batch_size);
    char* queue_name = queue_name_arg(fcinfo, 3);

    InitMaterializedSRF(fcinfo, 0);
    SPI_connect();
    claim_into(fcinfo, worker_id, job_types, batch_size, queue_name, false);
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
    claim_into(fcinfo, worker_id, job_types, batch_size, queue_name, false);
    SPI_finish();
    return (Datum) 0;
}

// Claims in the caller's transaction: the jobs are held by its row locks until it ends. Outside a
// transaction block those locks would be gone when the statement returns, so that is refused.
PGJQ_FUNCTION(claim_in_transaction)
{
    char* worker_id = short_text_arg(fcinfo, 0, "worker_id");
    ArrayType* job_types = job_types_arg(fcinfo, 1);
    int32 batch_size = int_arg_in_range(fcinfo, 2, "batch_size", 1, k_max_batch_size);
    char* queue_name = queue_name_arg(fcinfo, 3);
    if (!IsTransactionBlock())
        ereport(ERROR,
                (errcode(ERRCODE_NO_ACTIVE_SQL_TRANSACTION),
                 errmsg("claim_in_transaction must run inside a transaction block"),
                 errhint("Run BEGIN first: the jobs stay claimed until the transaction ends, and "
                         "complete_in_transaction or fail_in_transaction reports them before it commits.")));

    InitMaterializedSRF(fcinfo, 0);
    SPI_connect();
    claim_into(fcinfo, worker_id, job_types, batch_size, queue_name, true);
    SPI_finish();
    return (Datum) 0;
}
