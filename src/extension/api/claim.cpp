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
#include "core/api_function.hpp"
#include "core/claim_floor.hpp"
#include "core/deadlines.hpp"
#include "core/direct_claim.hpp"
#include "core/job_columns.hpp"
#include "core/lifecycle.hpp"
#include "core/transaction_claims.hpp"
#include "core/worker_commit.hpp"
#include "pg/args.hpp"
#include "pg/settings.hpp"
#include "pg/spi.hpp"
#include "tableam/claim_index_plan.hpp"
#include "versions/statement.hpp"

namespace {

using namespace pgjq;

SPIPlanPtr s_lock_queue, s_take_tokens, s_spend_tokens;

// clang-format off
// A queue's settings as a claim needs them.
statement s_queue = {"claim.queue", {"SELECT paused, fifo, lease, coalesce(max_running, 0), coalesce(rate_limit, 0), rate_interval, job_timeout"
     "  FROM pgjq.queues WHERE queue_name = $1", 1, {TEXTOID}}};
// Claimers of a FIFO or capped queue take turns on its row.
const plan_text k_lock_queue = {
    "SELECT 1 FROM pgjq.queues WHERE queue_name = $1 FOR UPDATE", 1, {TEXTOID}};
// In flight: claimed or running.
statement s_fifo_busy = {"claim.fifo_busy", {"SELECT EXISTS (SELECT 1 FROM pgjq.live_jobs WHERE queue_name = $1 AND status > 'pending')", 1, {TEXTOID}}};
// What a capped queue holds: its jobs in flight, and those this transaction holds by claim_in_transaction
// ($2), which the others count once it commits.
statement s_in_flight = {"claim.in_flight", {"SELECT (SELECT count(*) FROM pgjq.live_jobs WHERE queue_name = $1 AND status > 'pending')"
     "     + (SELECT count(*) FROM pgjq.live_jobs WHERE id = ANY ($2) AND queue_name = $1)",
     2, {TEXTOID, INT8ARRAYOID}}};
// A rate-limited queue's token bucket, locked until the claim commits (created full at first use: $2 is
// the queue's rate_limit); then what is left of it. A claimer whose transaction began before the bucket's
// last refill (now() is its start) keeps the later time: moving it back would let the next claim find
// tokens that were never earned.
const plan_text k_take_tokens = {
    "INSERT INTO pgjq.rate_limits AS r (queue_name, tokens, refilled_at) VALUES ($1, $2, now())"
    " ON CONFLICT (queue_name) DO UPDATE SET tokens = r.tokens RETURNING r.tokens, r.refilled_at",
    2, {TEXTOID, FLOAT8OID}};
const plan_text k_spend_tokens = {
    "UPDATE pgjq.rate_limits SET tokens = $2, refilled_at = greatest(refilled_at, now()) WHERE queue_name = $1", 2,
    {TEXTOID, FLOAT8OID}};

// Parameters of every claim: $1 queue, $2 batch size, $3 worker id, $4 the lease (or, in a transaction, the
// ids this transaction already holds), $5 the job types (NULL: any), $6 the claiming role, $7 the queue's
// job_timeout.
#define CLAIM_TYPES {TEXTOID, INT4OID, TEXTOID, INTERVALOID, TEXTARRAYOID, REGROLEOID, INTERVALOID, TIMESTAMPTZOID}
#define LOCK_TYPES {TEXTOID, INT4OID, TEXTOID, INT8ARRAYOID, TEXTARRAYOID, REGROLEOID, INTERVALOID}

// A leased claim of a queue that is not FIFO also takes $8, the time its jobs must be due by:
// when it read its queue's claim floor (core/claim_floor.hpp), before its snapshot, so that a job it passes
// over as not yet due was not due then, and is reported when it falls due. From the floor, $9 and $10 are
// the floor's priority and id: only the floor's priority, and a claim that finds nothing there reads the
// queue from the start.
#define PICK(due, of_types, from_floor)                                                                \
    "WITH picked AS MATERIALIZED ("                                                                    \
    "  SELECT id FROM pgjq.live_jobs"                                                                  \
    "   WHERE queue_name = $1 AND status = 'pending' AND run_at <= " due of_types from_floor              \
    "   ORDER BY priority DESC, id LIMIT $2 FOR UPDATE SKIP LOCKED),"
#define OF_TYPES " AND job_type = ANY ($5)"
#define FROM_FLOOR " AND priority = $9 AND id >= $10"
#define FLOOR_CLAIM_TYPES                                                                              \
    {TEXTOID, INT4OID, TEXTOID, INTERVALOID, TEXTARRAYOID, REGROLEOID, INTERVALOID, TIMESTAMPTZOID, INT4OID, INT8OID}
// Strict order: the oldest runnable job is taken only if the worker handles its type; otherwise the
// worker gets nothing and the job waits for a worker that does.
#define PICK_FIFO                                                                                      \
    "WITH oldest AS MATERIALIZED ("                                                                    \
    "  SELECT id, job_type FROM pgjq.live_jobs"                                                        \
    "   WHERE queue_name = $1 AND status = 'pending' AND run_at <= now()"                              \
    "   ORDER BY priority DESC, id LIMIT $2 FOR UPDATE),"                                              \
    " picked AS (SELECT id FROM oldest WHERE $5::text[] IS NULL OR job_type = ANY ($5)),"
#define CLAIM(lease, set_current, added_columns)                                                       \
    " claimed AS ("                                                                                    \
    "UPDATE pgjq.live_jobs j SET status = 'claimed', worker_id = $3, claimed_at = now(),"              \
    " heartbeat_at = now(), lease_expires_at = " lease ", attempts = j.attempts + 1" set_current       \
    " WHERE j.id = ANY (ARRAY(SELECT id FROM picked)) RETURNING j.*) "                                 \
    "SELECT " PGJQ_LIVE_JOB_AS_VIEW_ROW("c") added_columns " FROM claimed c ORDER BY c.priority DESC, c.id"
// The lease never outlasts the execution timeout (the job's own, else the queue's), which heartbeats
// cannot extend: lease recovery fails the job once it has run that long.
#define TIMEOUT_AT "now() + coalesce(j.timeout, $7)"
#define CLAIM_CURRENT                                                                                  \
    CLAIM("least(now() + $4, " TIMEOUT_AT ")", ", claimed_by = $6, timeout_at = " TIMEOUT_AT,           \
          PGJQ_LIVE_JOB_ADDED_COLUMNS("c."))

statement s_claim_any = {"claim.claim_any", {PICK("$8", "", "") CLAIM_CURRENT, 8, CLAIM_TYPES}};
statement s_claim_types = {"claim.claim_types", {PICK("$8", OF_TYPES, "") CLAIM_CURRENT, 8, CLAIM_TYPES}};
statement s_claim_any_from_floor = {"claim.claim_any_from_floor",
                                    {PICK("$8", "", FROM_FLOOR) CLAIM_CURRENT, 10, FLOOR_CLAIM_TYPES}};
statement s_claim_types_from_floor = {"claim.claim_types_from_floor",
                                      {PICK("$8", OF_TYPES, FROM_FLOOR) CLAIM_CURRENT, 10, FLOOR_CLAIM_TYPES}};
statement s_fifo_claim = {"claim.fifo_claim", {PICK_FIFO CLAIM_CURRENT, 7, CLAIM_TYPES}};

// In-transaction claims: the row as this transaction runs it (attempt number, worker, start), which is
// also what its history row will say; other sessions keep seeing the job pending, and locked, until the
// transaction ends. $4 excludes the jobs this transaction already holds: SKIP LOCKED does not skip a
// transaction's own locks.
#define LOCKED_JOB_ROW(role_columns)                                                                   \
    "SELECT j.id, j.queue_name, j.job_type, j.priority, 'running'::pgjq.job_status, j.payload, NULL::jsonb," \
    " j.run_at, j.unique_key, j.progress, j.current_stage, j.events_count, $3, now(), NULL::timestamptz," \
    " NULL::timestamptz, j.created_at, now(), NULL::timestamptz, NULL::timestamptz, NULL::timestamptz,"  \
    " j.attempts + 1, j.max_attempts, j.last_error" role_columns
#define LOCKED_CURRENT \
    LOCKED_JOB_ROW(", j.enqueued_by, $6, j.group_key, j.depends_on, j.timeout, NULL::timestamptz, j.headers")
#define LOCK_ANY                                                                                       \
    " FROM pgjq.live_jobs j"                                                                           \
    " WHERE j.queue_name = $1 AND j.status = 'pending' AND j.run_at <= now() AND j.id <> ALL ($4)"      \
    " ORDER BY j.priority DESC, j.id LIMIT $2 FOR UPDATE SKIP LOCKED"
#define LOCK_TYPES_WHERE                                                                               \
    " FROM pgjq.live_jobs j"                                                                           \
    " WHERE j.queue_name = $1 AND j.status = 'pending' AND j.run_at <= now() AND j.id <> ALL ($4)"      \
    "   AND j.job_type = ANY ($5)"                                                                     \
    " ORDER BY j.priority DESC, j.id LIMIT $2 FOR UPDATE SKIP LOCKED"
// FIFO: the oldest runnable job, whoever holds it (it may be this transaction's own), and whether the
// worker handles its type (the extra last column).
#define LOCK_FIFO_OLDEST                                                                               \
    ", $5::text[] IS NULL OR j.job_type = ANY ($5) FROM pgjq.live_jobs j"                              \
    " WHERE j.queue_name = $1 AND j.status = 'pending' AND j.run_at <= now()"                          \
    " ORDER BY j.priority DESC, j.id LIMIT 1 FOR UPDATE"

statement s_lock_any = {"claim.lock_any", {LOCKED_CURRENT LOCK_ANY, 6, LOCK_TYPES}};
statement s_lock_types = {"claim.lock_types", {LOCKED_CURRENT LOCK_TYPES_WHERE, 6, LOCK_TYPES}};
statement s_fifo_lock_oldest = {"claim.fifo_lock_oldest", {LOCKED_CURRENT LOCK_FIFO_OLDEST, 6, LOCK_TYPES}};
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
    int32 max_running;  // 0: no cap
    int32 rate_limit;   // 0: no limit
    int64 rate_interval_usecs;
    bool has_job_timeout;
    Datum job_timeout;
};

queue_settings read_queue(Datum queue_value, const char* queue_name)
{
    if (run_plan(saved_plan(&s_queue), &queue_value, nullptr) == 0)
        raise_unknown_queue(queue_name);
    bool isnull, no_timeout;
    HeapTuple row = SPI_tuptable->vals[0];
    TupleDesc desc = SPI_tuptable->tupdesc;
    queue_settings q;
    q.paused = DatumGetBool(SPI_getbinval(row, desc, 1, &isnull));
    q.fifo = DatumGetBool(SPI_getbinval(row, desc, 2, &isnull));
    q.lease = SPI_getbinval(row, desc, 3, &isnull);
    q.max_running = DatumGetInt32(SPI_getbinval(row, desc, 4, &isnull));
    q.rate_limit = DatumGetInt32(SPI_getbinval(row, desc, 5, &isnull));
    Datum interval = SPI_getbinval(row, desc, 6, &isnull);
    q.rate_interval_usecs = isnull ? 0 : interval_usecs(DatumGetIntervalP(interval));
    q.job_timeout = SPI_getbinval(row, desc, 7, &no_timeout);
    q.has_job_timeout = !no_timeout;
    return q;
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
    run_plan(saved_plan(&s_lock_queue, k_lock_queue), &queue_value, nullptr);
    run_plan(saved_plan(&s_fifo_busy), &queue_value, nullptr);
    bool isnull, found;
    return DatumGetBool(first_value(&isnull, &found));
}

// How many jobs a capped queue may still hand out, after taking its lock (until the transaction ends) so
// that concurrent claimers count each other's claims.
int64 room_under_cap(Datum queue_value, const char* queue_name, int32 max_running)
{
    if (IsolationUsesXactSnapshot())
        ereport(ERROR,
                (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
                 errmsg("claiming from capped queue \"%s\" requires READ COMMITTED isolation", queue_name)));
    run_plan(saved_plan(&s_lock_queue, k_lock_queue), &queue_value, nullptr);
    Datum values[2] = {queue_value, PointerGetDatum(ids_claimed_here())};
    run_plan(saved_plan(&s_in_flight), values, nullptr);
    bool isnull, found;
    return max_running - DatumGetInt64(first_value(&isnull, &found));
}

// The tokens a rate-limited queue's bucket holds now (it refills continuously, rate_limit per
// rate_interval, up to rate_limit), with the bucket locked until the transaction ends.
double tokens_available(Datum queue_value, const queue_settings& queue)
{
    Datum values[2] = {queue_value, Float8GetDatum(queue.rate_limit)};
    run_plan(saved_plan(&s_take_tokens, k_take_tokens), values, nullptr);
    bool isnull;
    HeapTuple row = SPI_tuptable->vals[0];
    double tokens = DatumGetFloat8(SPI_getbinval(row, SPI_tuptable->tupdesc, 1, &isnull));
    TimestampTz refilled_at = DatumGetTimestampTz(SPI_getbinval(row, SPI_tuptable->tupdesc, 2, &isnull));
    double elapsed = static_cast<double>(GetCurrentTransactionStartTimestamp() - refilled_at);
    if (elapsed > 0 && queue.rate_interval_usecs > 0)
        tokens += elapsed * queue.rate_limit / static_cast<double>(queue.rate_interval_usecs);
    return tokens < queue.rate_limit ? tokens : queue.rate_limit;
}

void spend_tokens(Datum queue_value, double left)
{
    Datum values[2] = {queue_value, Float8GetDatum(left)};
    run_plan(saved_plan(&s_spend_tokens, k_spend_tokens), values, nullptr);
}

// Copies the first `rows` rows of the last SPI result into the call's result set (their leading columns:
// a claim may select more than pgjq.jobs has).
void return_rows(FunctionCallInfo fcinfo, uint64 rows)
{
    ReturnSetInfo* rsinfo = reinterpret_cast<ReturnSetInfo*>(fcinfo->resultinfo);
    TupleDesc spi_desc = SPI_tuptable->tupdesc;
    Datum row_values[40];
    bool row_nulls[40];
    if (spi_desc->natts < rsinfo->setDesc->natts || spi_desc->natts > 40)
        elog(ERROR, "pgjq: claim returned %d columns, pgjq.jobs has %d", spi_desc->natts, rsinfo->setDesc->natts);
    for (uint64 i = 0; i < rows; i++) {
        heap_deform_tuple(SPI_tuptable->vals[i], spi_desc, row_values, row_nulls);
        tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, row_values, row_nulls);
    }
}

// The earliest lease_expires_at among the `rows` rows a claim just returned (a job's timeout may end its
// lease before the queue's lease does).
TimestampTz first_lease_end(uint64 rows)
{
    TimestampTz first = DT_NOEND;
    for (uint64 i = 0; i < rows; i++) {
        bool isnull;
        Datum value =
            SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, k_jobs_lease_expires_at_column, &isnull);
        if (!isnull && DatumGetTimestampTz(value) < first)
            first = DatumGetTimestampTz(value);
    }
    return first;
}

// Runs a leased claim into the call's result set; *last is the last job it took in claim order (its rows
// come in that order). The maintenance worker must look when the first lease ends, not at its next
// pass.
uint64 run_leased_claim(FunctionCallInfo fcinfo, SPIPlanPtr plan, Datum* values, const char* nulls, job_key* last,
                        bool from_floor = false)
{
    uint64 n = from_floor ? run_plan_on_claim_index(plan, values, nulls) : run_plan(plan, values, nulls);
    if (n == 0)
        return 0;
    wake_maintenance_at_commit(first_lease_end(n), deadline_kind::lease_ends);
    bool isnull;
    HeapTuple last_row = SPI_tuptable->vals[n - 1];
    last->id = DatumGetInt64(SPI_getbinval(last_row, SPI_tuptable->tupdesc, k_jobs_id_column, &isnull));
    last->priority = DatumGetInt32(SPI_getbinval(last_row, SPI_tuptable->tupdesc, k_jobs_priority_column, &isnull));
    return_rows(fcinfo, n);
    return n;
}

// A leased claim of a queue that is not FIFO, from the floor or from the start: through the table access
// method (core/direct_claim.hpp) where it can, else by the statement `plan`.
uint64 run_claim_step(FunctionCallInfo fcinfo, direct_claim_request& direct, SPIPlanPtr plan, Datum* values,
                      const char* nulls, job_key* last, bool from_floor)
{
    if (direct_claims) {
        direct.from_floor = from_floor;
        TimestampTz first_lease_end;
        int64 n = claim_directly(fcinfo, direct, last, &first_lease_end);
        if (n > 0)
            wake_maintenance_at_commit(first_lease_end, deadline_kind::lease_ends);
        if (n >= 0)
            return static_cast<uint64>(n);
    }
    return run_leased_claim(fcinfo, plan, values, nulls, last, from_floor);
}

// A leased claim of a queue that is not FIFO: from the queue's claim floor for the job types claimed when
// it has one, and from the start when nothing lies there (the floor's part of the queue is empty, or the
// floor's priority is done). The last job it takes becomes the floor. Only at READ COMMITTED: the floor
// must be read before the statement's snapshot is taken.
uint64 claim_leased(FunctionCallInfo fcinfo, const api_call& call, const char* queue_name, ArrayType* job_types,
                    const Datum values[7], const char nulls[7])
{
    claim_floor floor = {-1, 0, 0, false, {0, 0}, GetCurrentTransactionStartTimestamp()};
    if (claim_floors && !IsolationUsesXactSnapshot())
        floor = read_claim_floor(queue_name, job_types_key(job_types));
    Datum claim_values[10];
    char claim_nulls[10];
    memcpy(claim_values, values, sizeof(Datum) * 7);
    memcpy(claim_nulls, nulls, 7);
    claim_values[7] = TimestampTzGetDatum(floor.read_at);
    claim_values[8] = Int32GetDatum(floor.key.priority);
    claim_values[9] = Int64GetDatum(floor.key.id);
    claim_nulls[7] = claim_nulls[8] = claim_nulls[9] = ' ';
    direct_claim_request direct = {queue_name,
                                   DatumGetInt32(values[1]),
                                   TextDatumGetCString(values[2]),
                                   values[3],
                                   job_types,
                                   DatumGetObjectId(values[5]),
                                   nulls[6] == ' ',
                                   values[6],
                                   floor.read_at,
                                   false,
                                   floor.key};
    job_key from_floor = {0, 0}, from_start = {0, 0};
    uint64 on_floor = 0;
    if (floor.valid) {
        SPIPlanPtr plan = saved_plan(job_types ? &s_claim_types_from_floor : &s_claim_any_from_floor);
        on_floor = run_claim_step(fcinfo, direct, plan, claim_values, claim_nulls, &from_floor, true);
    }
    uint64 from_the_start = 0;
    if (on_floor == 0) {
        SPIPlanPtr plan = saved_plan(job_types ? &s_claim_types : &s_claim_any);
        from_the_start = run_claim_step(fcinfo, direct, plan, claim_values, claim_nulls, &from_start, false);
    }
    if (from_the_start > 0)
        advance_claim_floor(queue_name, floor, from_start, true);
    else if (on_floor > 0)
        advance_claim_floor(queue_name, floor, from_floor, false);
    return on_floor + from_the_start;
}

// Claims into the call's result set: under a lease, or (in_transaction) held by this transaction's row
// locks. Requires an SPI connection.
void claim_into(FunctionCallInfo fcinfo, const api_call& call, const char* worker_id, ArrayType* job_types,
                int32 batch_size, const char* queue_name, bool in_transaction)
{
    Datum queue_value = CStringGetTextDatum(queue_name);
    queue_settings queue = read_queue(queue_value, queue_name);
    if (queue.paused)
        return;
    // In a transaction the FIFO queue's lock is held until it ends, so other claimers of the queue wait
    // for its outcome instead of taking the next job.
    if (queue.fifo && fifo_queue_busy(queue_value, queue_name))
        return;
    int64 batch = batch_size;
    if (!queue.fifo && queue.max_running > 0) {
        int64 room = room_under_cap(queue_value, queue_name, queue.max_running);
        if (room < batch)
            batch = room;
    }
    double tokens = 0;
    if (queue.rate_limit > 0) {
        tokens = tokens_available(queue_value, queue);
        int64 whole = static_cast<int64>(tokens);  // tokens >= 0 once refilled: this is floor()
        if (whole < batch)
            batch = whole;
    }
    if (batch <= 0)
        return;

    // $4: the lease, or the jobs this transaction already holds
    Datum values[7] = {queue_value,
                       Int32GetDatum(static_cast<int32>(batch)),
                       CStringGetTextDatum(worker_id),
                       in_transaction ? PointerGetDatum(ids_claimed_here()) : queue.lease,
                       job_types ? PointerGetDatum(job_types) : (Datum) 0,
                       ObjectIdGetDatum(call.caller),
                       queue.job_timeout};
    char nulls[7] = {' ', ' ', ' ', ' ', job_types ? ' ' : 'n', ' ', queue.has_job_timeout ? ' ' : 'n'};
    uint64 n;
    if (!in_transaction) {
        if (queue.fifo) {
            values[1] = Int32GetDatum(1);
            job_key last;
            n = run_leased_claim(fcinfo, saved_plan(&s_fifo_claim), values, nulls, &last);
        } else {
            n = claim_leased(fcinfo, call, queue_name, job_types, values, nulls);
        }
        // Should this transaction roll back, the jobs are pending again, wherever the floor stands.
        if (n > 0)
            claimed_in_transaction(queue_name);
    } else {
        bool isnull;
        if (queue.fifo) {
            n = run_plan(saved_plan(&s_fifo_lock_oldest), values, nulls);
            if (n == 1) {
                HeapTuple oldest = SPI_tuptable->vals[0];
                TupleDesc desc = SPI_tuptable->tupdesc;
                int64 id = DatumGetInt64(SPI_getbinval(oldest, desc, 1, &isnull));
                bool wanted = DatumGetBool(SPI_getbinval(oldest, desc, desc->natts, &isnull));
                if (!wanted || claimed_here(id, worker_id, call.caller) != claim_here_state::not_claimed)
                    n = 0;
            }
        } else {
            n = run_plan(saved_plan(job_types ? &s_lock_types : &s_lock_any), values, nulls);
        }
        for (uint64 i = 0; i < n; i++)
            remember_claimed_here(
                DatumGetInt64(SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1, &isnull)), worker_id,
                call.caller);
        return_rows(fcinfo, n);
        // The jobs stay pending under this transaction's locks, which other claims pass over: whatever the
        // transaction leaves of them when it ends is pending again.
        if (n > 0) {
            claimed_in_transaction(queue_name);
            runnable_at_commit(queue_name, nullptr);
        }
    }
    if (queue.rate_limit > 0)
        spend_tokens(queue_value, tokens - static_cast<double>(n));
}

}  // namespace

PGJQ_API_FUNCTION(claim_job_batch)
{
    require_some(call, cap_worker);
    relax_worker_commit();
    char* worker_id = short_text_arg(fcinfo, 0, "worker_id");
    ArrayType* job_types = job_types_arg(fcinfo, 1);
    int32 batch_size = int_arg_in_range(fcinfo, 2, "batch_size", 1, k_max_batch_size);
    char* queue_name = queue_name_arg(fcinfo, 3);
    require(call, cap_worker, queue_name);

    InitMaterializedSRF(fcinfo, 0);
    SPI_connect();
    claim_into(fcinfo, call, worker_id, job_types, batch_size, queue_name, false);
    SPI_finish();
    return (Datum) 0;
}

// A worker's loop in one call and one commit: complete the batch it finished, claim the next.
PGJQ_API_FUNCTION(complete_and_claim)
{
    require_some(call, cap_worker);
    relax_worker_commit();
    char* worker_id = short_text_arg(fcinfo, 0, "worker_id");
    ArrayType* completed = PG_ARGISNULL(1) ? nullptr : PG_GETARG_ARRAYTYPE_P(1);
    ArrayType* job_types = job_types_arg(fcinfo, 2);
    int32 batch_size = int_arg_in_range(fcinfo, 3, "batch_size", 1, k_max_batch_size);
    char* queue_name = queue_name_arg(fcinfo, 4);
    require(call, cap_worker, queue_name);

    InitMaterializedSRF(fcinfo, 0);
    SPI_connect();
    if (completed)
        complete_held_jobs(call.caller, completed, worker_id, "completed_ids");
    claim_into(fcinfo, call, worker_id, job_types, batch_size, queue_name, false);
    SPI_finish();
    return (Datum) 0;
}

// Claims in the caller's transaction: the jobs are held by its row locks until it ends. Outside a
// transaction block those locks would be gone when the statement returns, so that is refused.
PGJQ_API_FUNCTION(claim_in_transaction)
{
    require_some(call, cap_worker);
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
    require(call, cap_worker, queue_name);

    InitMaterializedSRF(fcinfo, 0);
    SPI_connect();
    claim_into(fcinfo, call, worker_id, job_types, batch_size, queue_name, true);
    SPI_finish();
    return (Datum) 0;
}
