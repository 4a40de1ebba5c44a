// enqueue.cpp: enqueue, try_enqueue, enqueue_batch, and INSERT INTO pgjq.jobs (an INSTEAD OF trigger).
//
// Backpressure: an enqueue first reserves room against max_pending (core/depth.hpp), then inserts; into a
// queue without max_pending it only counts its jobs, in shared memory when it can (core/enqueue_counts.hpp). A job
// with a group key or unmet dependencies is inserted waiting (core/waiting_jobs.hpp), and its transaction
// starts it at commit when it may start. A unique_key with unique_for is also taken in pgjq.unique_windows
// for that long.
#include "api/api_function.hpp"
#include "core/announcements.hpp"
#include "core/deadlines.hpp"
#include "core/depth.hpp"
#include "core/enqueue_counts.hpp"
#include "core/lifecycle.hpp"
#include "core/privileges.hpp"
#include "core/queue_cache.hpp"
#include "core/refusals.hpp"
#include "core/waiting_jobs.hpp"
#include "pg/args.hpp"
#include "pg/catalog.hpp"
#include "pg/settings.hpp"
#include "pg/spi.hpp"
#include "pg/sqlstate.hpp"
#include "pg/trigger.hpp"
#include "tableam/row_insert.hpp"
#include "versions/statement.hpp"

namespace {

using namespace pgjq;

SPIPlanPtr s_why_refused, s_find_unique, s_draw_ids;
SPIPlanPtr s_insert_waiting, s_insert_batch_waiting, s_judge_dependencies, s_record_dependencies,
    s_mark_dependencies_used, s_window_holder, s_take_window, s_withdraw;

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
// The inserts record the role that enqueued ($8) and the job's own timeout ($9). $10 and $11, the group key
// and the dependencies, only for jobs that wait.
#define INSERT_TYPES                                                                                   \
    {TEXTOID, TEXTOID, INT4OID, JSONBOID, TIMESTAMPTZOID, INT4OID, TEXTOID, REGROLEOID, INTERVALOID, TEXTOID, \
     INT8ARRAYOID}
statement s_insert = {"enqueue.insert", {
    "INSERT INTO pgjq.live_jobs (queue_name, job_type, priority, payload, run_at, max_attempts, enqueued_by,"
    "   timeout)"
    " VALUES ($1, $2, $3, $4, coalesce($5, now()), $6, $8, $9) RETURNING id",
    9, INSERT_TYPES}};
statement s_insert_unique = {"enqueue.insert_unique", {
    "INSERT INTO pgjq.live_jobs (queue_name, job_type, priority, payload, run_at, max_attempts, unique_key,"
    "   enqueued_by, timeout)"
    " VALUES ($1, $2, $3, $4, coalesce($5, now()), $6, $7, $8, $9)"
    " ON CONFLICT (queue_name, unique_key) WHERE unique_key IS NOT NULL DO NOTHING RETURNING id",
    9, INSERT_TYPES}};
const plan_text k_insert_waiting = {
    "INSERT INTO pgjq.live_jobs (queue_name, job_type, priority, payload, run_at, max_attempts, unique_key,"
    "   enqueued_by, timeout, group_key, depends_on, status)"
    " VALUES ($1, $2, $3, $4, coalesce($5, now()), $6, $7, $8, $9, $10, $11, 'waiting')"
    " ON CONFLICT (queue_name, unique_key) WHERE unique_key IS NOT NULL DO NOTHING RETURNING id",
    11, INSERT_TYPES};
const plan_text k_draw_ids = {
    "SELECT pg_catalog.array_agg(pg_catalog.nextval('pgjq.job_id_seq'::pg_catalog.regclass))"
    "  FROM pg_catalog.generate_series(1, $1)",
    1, {INT4OID}};
// $7: the batch's ids, in payload order
statement s_insert_batch = {"enqueue.insert_batch", {
    "INSERT INTO pgjq.live_jobs (id, queue_name, job_type, priority, payload, run_at, max_attempts, enqueued_by,"
    "   timeout)"
    " SELECT e.id, $1, $2, $3, e.payload, coalesce($5, now()), $6, $8, $9"
    "   FROM ROWS FROM (pg_catalog.jsonb_array_elements($4), pg_catalog.unnest($7)) AS e(payload, id)",
    9, {TEXTOID, TEXTOID, INT4OID, JSONBOID, TIMESTAMPTZOID, INT4OID, INT8ARRAYOID, REGROLEOID, INTERVALOID}}};
// Every job of the batch waits for the same unfinished dependencies ($10; the group keys of a batch take
// the one-by-one path).
const plan_text k_insert_batch_waiting = {
    "INSERT INTO pgjq.live_jobs (id, queue_name, job_type, priority, payload, run_at, max_attempts, enqueued_by,"
    "   timeout, depends_on, status)"
    " SELECT e.id, $1, $2, $3, e.payload, coalesce($5, now()), $6, $8, $9, $10, 'waiting'"
    "   FROM ROWS FROM (pg_catalog.jsonb_array_elements($4), pg_catalog.unnest($7)) AS e(payload, id)",
    10, {TEXTOID, TEXTOID, INT4OID, JSONBOID, TIMESTAMPTZOID, INT4OID, INT8ARRAYOID, REGROLEOID, INTERVALOID,
         INT8ARRAYOID}};
// The jobs named in depends_on ($1, distinct): live (unfinished), or finished with their status.
const plan_text k_judge_dependencies = {
    "SELECT d.id, l.id IS NOT NULL, f.status::text, coalesce(l.queue_name, f.queue_name),"
    "       coalesce(l.enqueued_by, f.enqueued_by)::oid"
    "  FROM pg_catalog.unnest($1::bigint[]) AS d(id)"
    "  LEFT JOIN pgjq.live_jobs l ON l.id = d.id LEFT JOIN pgjq.finished_jobs f ON f.id = d.id ORDER BY d.id",
    1, {INT8ARRAYOID}};
// $1 the unfinished parents, $2 the waiting jobs (each waits for every parent).
const plan_text k_record_dependencies = {
    "INSERT INTO pgjq.job_dependencies (depends_on, job_id)"
    " SELECT p, j FROM pg_catalog.unnest($1::bigint[]) AS p, pg_catalog.unnest($2::bigint[]) AS j",
    2, {INT8ARRAYOID, INT8ARRAYOID}};
// From the first job with dependencies on, finishing a job looks for its dependents (core/queue_cache.hpp).
const plan_text k_mark_dependencies_used = {
    "UPDATE pgjq.queues SET uses_dependencies = true WHERE queue_name = $1 AND NOT uses_dependencies",
    1, {TEXTOID}};
// unique_for: the job holding the key's window now, if any; taking the window for job $3 until now() + $4
// (only if it has expired; the primary key makes a concurrent taker wait for this transaction); and
// withdrawing the job this call inserted when the window turns out to be held.
const plan_text k_window_holder = {
    "SELECT job_id FROM pgjq.unique_windows WHERE queue_name = $1 AND unique_key = $2 AND expires_at > now()",
    2, {TEXTOID, TEXTOID}};
const plan_text k_take_window = {
    "INSERT INTO pgjq.unique_windows AS w (queue_name, unique_key, job_id, expires_at)"
    " VALUES ($1, $2, $3, now() + $4)"
    " ON CONFLICT (queue_name, unique_key) DO UPDATE SET job_id = excluded.job_id, expires_at = excluded.expires_at"
    "  WHERE w.expires_at <= now() RETURNING job_id",
    4, {TEXTOID, TEXTOID, INT8OID, INTERVALOID}};
const plan_text k_withdraw = {"DELETE FROM pgjq.live_jobs WHERE id = $1", 1, {INT8OID}};
// clang-format on

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
    dependency_state depends;  // what depends_on found (judge_dependencies)
    int64 count;               // jobs asked for: 1, or the batch's length
    const api_call* call;      // who asks
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

// Whether the job is inserted waiting: for its group, or for jobs it depends on.
bool waits(const enqueue_request& r)
{
    return r.group_key != nullptr || r.depends_on != nullptr;
}

enum class reservation { granted, queue_full };

// Reserves room for r.count jobs; returns the queue's default max_attempts through *max_attempts.
void refuse_priority_on_fifo(const enqueue_request& r, bool fifo)
{
    if (fifo && r.priority != k_default_priority)
        ereport(ERROR,
                (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                 errmsg("priority %d is not allowed on fifo queue \"%s\"", r.priority, r.queue_name),
                 errdetail("A fifo queue hands out its jobs strictly in enqueue order.")));
}

reservation reserve(const enqueue_request& r, bool raise_when_full, int32* max_attempts)
{
    // A queue without max_pending has nothing to check: its settings come from the cache and the count is
    // added by primary key: perf put the reservation's join at a fifth of a single enqueue, this at a tenth.
    // The cache follows a change of pgjq.queues as a statement would see it (invalidations are accepted
    // first), so a max_pending set meanwhile applies from the next call on.
    AcceptInvalidationMessages();
    const cached_queue* cached = cached_queue_settings(r.queue_name);
    if (cached != nullptr && !cached->limited && enqueue_counts_ready() && begin_counting_enqueues(r.queue_name)) {
        // The count lock waits for a drop_queue or an alter_queue setting max_pending: see what they did.
        AcceptInvalidationMessages();
        cached = cached_queue_settings(r.queue_name);
        if (cached != nullptr && !cached->limited) {
            refuse_priority_on_fifo(r, cached->fifo);
            count_enqueue(r.queue_text, r.count);
            *max_attempts = cached->max_attempts;
            return reservation::granted;
        }
    }
    if (cached != nullptr && !cached->limited) {
        refuse_priority_on_fifo(r, cached->fifo);
        if (adjust_depth(r.queue_text, r.count)) {
            *max_attempts = cached->max_attempts;
            return reservation::granted;
        }
        raise_unknown_queue(r.queue_name);  // dropped since the cache read it
    }
    if (reserve_depth(r.queue_text, r.count)) {
        bool isnull;
        HeapTuple row = SPI_tuptable->vals[0];
        *max_attempts = DatumGetInt32(SPI_getbinval(row, SPI_tuptable->tupdesc, 1, &isnull));
        refuse_priority_on_fifo(r, DatumGetBool(SPI_getbinval(row, SPI_tuptable->tupdesc, 2, &isnull)));
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

// The values of the insert statements (11: see INSERT_TYPES).
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
    values[8] = r.timeout ? IntervalPGetDatum(r.timeout) : (Datum) 0;
    values[9] = r.group_key ? CStringGetTextDatum(r.group_key) : (Datum) 0;
    values[10] = r.depends_on ? PointerGetDatum(r.depends_on) : (Datum) 0;
    memset(nulls, ' ', 11);
    if (!r.has_run_at)
        nulls[4] = 'n';
    if (!r.unique_key)
        nulls[6] = 'n';
    if (!r.timeout)
        nulls[8] = 'n';
    if (!r.group_key)
        nulls[9] = 'n';
    if (!r.depends_on)
        nulls[10] = 'n';
}

// What the workers learn at commit: runnable jobs are announced on pgjq_new_job, delayed ones wake the
// maintenance worker when they fall due. Done here rather than by row triggers on live_jobs, whose WHEN
// clauses cost a single-job enqueue about 9 % of its server CPU (measured: 181 vs 165 us, 7 pairs). A
// waiting job is announced when it starts (by the trigger on its status).
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

// The claims' floor (core/claim_floor.hpp) learns where the first of them lies in claim order; delayed ones
// drop it when they fall due.
void announce_enqueued(const enqueue_request& r, int64 first_id)
{
    if (r.has_run_at && r.run_at > GetCurrentTransactionStartTimestamp()) {
        wake_maintenance_at_commit(r.run_at);
        return;
    }
    const job_key first = {r.priority, first_id};
    announce_new_jobs(r.queue_name, &first);
}

// The job id a lookup by queue and unique_key (`plan`) finds, if any.
bool find_by_key(const enqueue_request& r, SPIPlanPtr plan, int64* id)
{
    Datum values[2] = {r.queue_text, CStringGetTextDatum(r.unique_key)};
    run_plan(plan, values, nullptr, 1);
    bool isnull, found;
    Datum value = first_value(&isnull, &found);
    if (found)
        *id = DatumGetInt64(value);
    return found;
}

// The unfinished job holding r.unique_key; with unique_for, else the job whose window holds it.
bool find_key_holder(const enqueue_request& r, int64* id)
{
    return find_by_key(r, saved_plan(&s_find_unique, k_find_unique), id) ||
        (r.unique_for && find_by_key(r, saved_plan(&s_window_holder, k_window_holder), id));
}

// unique_for: takes the key's window for job `id`; false when another job's window holds it (committed
// meanwhile: the primary key made this wait for it).
bool take_window(const enqueue_request& r, int64 id)
{
    Datum values[4] = {r.queue_text, CStringGetTextDatum(r.unique_key), Int64GetDatum(id),
                       IntervalPGetDatum(r.unique_for)};
    return run_plan(saved_plan(&s_take_window, k_take_window), values, nullptr) == 1;
}

// The rules for depends_on: a one-dimensional array without NULLs of at most k_max_dependencies ids; its
// distinct ids, or nullptr when it is empty.
ArrayType* dependencies_arg(ArrayType* given)
{
    if (ARR_NDIM(given) > 1)
        ereport(ERROR,
                (errcode(ERRCODE_INVALID_PARAMETER_VALUE), errmsg("depends_on must be a one-dimensional array")));
    if (array_contains_nulls(given))
        ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED), errmsg("depends_on must not contain nulls")));
    int n = ArrayGetNItems(ARR_NDIM(given), ARR_DIMS(given));
    if (n > k_max_dependencies)
        ereport(ERROR,
                (errcode(ERRCODE_INVALID_PARAMETER_VALUE), errmsg("depends_on has %d elements", n),
                 errdetail("A job may depend on at most %d jobs.", k_max_dependencies)));
    if (n == 0)
        return nullptr;
    int64* ids = static_cast<int64*>(palloc(sizeof(int64) * n));
    memcpy(ids, ARR_DATA_PTR(given), sizeof(int64) * n);
    sort_job_ids(ids, n);
    int distinct = 0;
    for (int i = 0; i < n; i++)
        if (i == 0 || ids[i] != ids[i - 1])
            ids[distinct++] = ids[i];
    return job_id_array(ids, distinct);
}

// Looks up the jobs of r.depends_on: each must exist and be readable by the caller (else, to the caller, it
// does not exist). Unfinished ones are waited for; a completed one is met; the first failed or cancelled one
// dooms the job. Requires an SPI connection.
dependency_state judge_dependencies(const enqueue_request& r)
{
    dependency_state state = {(Datum) 0, 0, false};
    Datum values[1] = {PointerGetDatum(r.depends_on)};
    uint64 n = run_plan(saved_plan(&s_judge_dependencies, k_judge_dependencies), values, nullptr);
    int64* unfinished = static_cast<int64*>(palloc(sizeof(int64) * (n + 1)));
    int nunfinished = 0;
    for (uint64 i = 0; i < n; i++) {
        HeapTuple row = SPI_tuptable->vals[i];
        TupleDesc desc = SPI_tuptable->tupdesc;
        bool isnull, no_status, no_role;
        int64 id = DatumGetInt64(SPI_getbinval(row, desc, 1, &isnull));
        bool live = DatumGetBool(SPI_getbinval(row, desc, 2, &isnull));
        Datum status = SPI_getbinval(row, desc, 3, &no_status);
        char* queue = SPI_getvalue(row, desc, 4);
        Datum enqueued_by = SPI_getbinval(row, desc, 5, &no_role);
        if ((!live && no_status) ||
            !may_read_job(r.call->caller, queue, no_role ? InvalidOid : DatumGetObjectId(enqueued_by)))
            ereport(ERROR,
                    (errcode(ERRCODE_NO_DATA_FOUND), errmsg("job %lld in depends_on does not exist", (long long) id),
                     errhint("A job can depend only on jobs that exist when it is enqueued: pruned jobs, and "
                             "completed jobs of a queue with keep_completed = false, are gone.")));
        if (live) {
            unfinished[nunfinished++] = id;
            continue;
        }
        const char* finished_as = TextDatumGetCString(status);
        if (state.broken_by == 0 && strcmp(finished_as, "completed") != 0) {
            state.broken_by = id;
            state.broken_by_failure = strcmp(finished_as, "failed") == 0;
        }
    }
    if (nunfinished > 0)
        state.unfinished = PointerGetDatum(job_id_array(unfinished, nunfinished));
    // From now on, jobs that finish in this database look for dependents.
    run_plan(saved_plan(&s_mark_dependencies_used, k_mark_dependencies_used), &r.queue_text, nullptr);
    return state;
}

// What a job enqueued waiting does besides its insert: its dependency rows and the notes for the commit,
// or, if a job it depends on has already failed or been cancelled, its own cancellation. `ids` is an int8[]
// of the jobs just inserted.
void settle_waiting_insert(const enqueue_request& r, Datum ids)
{
    if (r.depends.broken_by != 0) {
        char* reason = psprintf("job %lld it depends on %s", (long long) r.depends.broken_by,
                                r.depends.broken_by_failure ? "failed" : "was cancelled");
        archive_request cancelled = {ids, "cancelled", nullptr, nullptr, r.call->caller, nullptr, reason};
        archive_jobs(cancelled);
        return;
    }
    if (r.depends.unfinished != (Datum) 0) {
        Datum values[2] = {r.depends.unfinished, ids};
        run_plan(saved_plan(&s_record_dependencies, k_record_dependencies), values, nullptr);
        ArrayType* parents = DatumGetArrayTypeP(r.depends.unfinished);
        ArrayType* jobs = DatumGetArrayTypeP(ids);
        int njobs = ArrayGetNItems(ARR_NDIM(jobs), ARR_DIMS(jobs));
        for (int i = 0; i < njobs; i++)
            note_new_dependent(reinterpret_cast<const int64*>(ARR_DATA_PTR(jobs))[i],
                               reinterpret_cast<const int64*>(ARR_DATA_PTR(parents)),
                               ArrayGetNItems(ARR_NDIM(parents), ARR_DIMS(parents)));
    } else if (r.group_key == nullptr) {
        // Its dependencies all completed: nothing to wait for after all. The commit starts it.
        ArrayType* jobs = DatumGetArrayTypeP(ids);
        int njobs = ArrayGetNItems(ARR_NDIM(jobs), ARR_DIMS(jobs));
        for (int i = 0; i < njobs; i++)
            note_new_dependent(reinterpret_cast<const int64*>(ARR_DATA_PTR(jobs))[i], nullptr, 0);
    }
    if (r.group_key != nullptr)
        note_group_changed(r.queue_name, r.group_key);
}

// The statement that inserts r's job.
SPIPlanPtr insert_plan(const enqueue_request& r)
{
    if (waits(r))
        return saved_plan(&s_insert_waiting, k_insert_waiting);
    return r.unique_key ? saved_plan(&s_insert_unique) : saved_plan(&s_insert);
}

// Whether s_insert is r's statement: a job that neither waits nor has a unique key.
bool plain_job(const enqueue_request& r)
{
    return !waits(r) && r.unique_key == nullptr;
}

// The job's row through the table access method (tableam/row_insert.hpp): s_insert's columns, and for a batch
// (s_insert_batch) the id it drew as well.
const given_column k_job_columns[] = {
    {"queue_name", TEXTOID},     {"job_type", TEXTOID},      {"priority", INT4OID},
    {"payload", JSONBOID},       {"run_at", TIMESTAMPTZOID}, {"max_attempts", INT4OID},
    {"enqueued_by", REGROLEOID}, {"timeout", INTERVALOID},   {"id", INT8OID}};
constexpr int k_job_row_columns = lengthof(k_job_columns) - 1;  // all but the id, which its default draws
const row_shape k_job_row = {k_job_columns, k_job_row_columns, "id"};
const row_shape k_batch_job_row = {k_job_columns, lengthof(k_job_columns), "id"};

// The first k_job_row_columns values of a job's row, from `values` and `nulls` as fill_insert_values fills them
// ($7, the unique key, is not a column of it; a run_at not given is now(), as coalesce($5, now()) makes it).
void fill_job_row(const enqueue_request& r, const Datum* values, const char* nulls, Datum* row, bool* isnull)
{
    static const int from_argument[k_job_row_columns] = {0, 1, 2, 3, 4, 5, 7, 8};
    for (int c = 0; c < k_job_row_columns; c++) {
        row[c] = values[from_argument[c]];
        isnull[c] = nulls[from_argument[c]] == 'n';
    }
    if (!r.has_run_at) {
        row[4] = TimestampTzGetDatum(GetCurrentTransactionStartTimestamp());
        isnull[4] = false;
    }
}

row_insert insert_job_row(const enqueue_request& r, const Datum* values, const char* nulls, Datum* id)
{
    Datum row[k_job_row_columns];
    bool isnull[k_job_row_columns];
    fill_job_row(r, values, nulls, row, isnull);
    return insert_row(pgjq_relation("live_jobs"), k_job_row, row, isnull, id);
}

// A batch of jobs that neither wait nor have keys, as s_insert_batch would insert them (`ids` the drawn ids
// in payload order), written several to a page.
row_insert insert_batch_rows(const enqueue_request& r, const Datum* values, const char* nulls, ArrayType* ids)
{
    constexpr int ncolumns = lengthof(k_job_columns);
    const int nrows = static_cast<int>(r.count);
    Datum* rows = static_cast<Datum*>(palloc(sizeof(Datum) * ncolumns * nrows));
    bool* isnull = static_cast<bool*>(palloc(sizeof(bool) * ncolumns * nrows));
    const int64* drawn = reinterpret_cast<const int64*>(ARR_DATA_PTR(ids));
    int row = 0;
    for_each_payload(r.payload, [&](JsonbValue& element) {
        Datum* v = rows + row * ncolumns;
        bool* n = isnull + row * ncolumns;
        fill_job_row(r, values, nulls, v, n);
        v[3] = JsonbPGetDatum(JsonbValueToJsonb(&element));
        v[ncolumns - 1] = Int64GetDatum(drawn[row]);
        n[ncolumns - 1] = false;
        row++;
    });
    return insert_rows(pgjq_relation("live_jobs"), k_batch_job_row, row, rows, isnull);
}

// Enqueues one job; returns false (and enqueues nothing) only when the queue is full and
// raise_when_full is false. Requires an SPI connection.
bool enqueue_one(const enqueue_request& r, bool raise_when_full, int64* id)
{
    for (int attempt = 0;; attempt++) {
        if (r.unique_key && find_key_holder(r, id))
            return true;
        int32 queue_max_attempts;
        if (reserve(r, raise_when_full, &queue_max_attempts) == reservation::queue_full)
            return false;
        Datum values[11];
        char nulls[11];
        fill_insert_values(r, queue_max_attempts, values, nulls);
        bool isnull = false, found = true;
        Datum value;
        if (!plain_job(r) || insert_job_row(r, values, nulls, &value) == row_insert::not_direct) {
            run_plan(insert_plan(r), values, nulls);
            value = first_value(&isnull, &found);
        }
        if (found) {
            *id = DatumGetInt64(value);
            if (r.unique_for && !take_window(r, *id)) {
                // Another job's window took the key while this one was being inserted: withdraw it.
                Datum withdrawn[1] = {Int64GetDatum(*id)};
                run_plan(saved_plan(&s_withdraw, k_withdraw), withdrawn, nullptr);
                note_live_rows_replaced();
                give_back_depth(values[0], r.count);
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
        give_back_depth(values[0], r.count);
        if (attempt >= 10)
            ereport(ERROR,
                    (errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
                     errmsg("could not enqueue with unique_key \"%s\" under concurrent updates", r.unique_key)));
    }
}

// The rules every enqueue path applies to what it was given, whether by arguments or by INSERT INTO
// pgjq.jobs. A batch's payloads and keys are checked one by one (check_batch_payloads, batch_keys_arg).
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
    if (r.unique_for && !r.unique_key && !batch)
        ereport(ERROR,
                (errcode(ERRCODE_INVALID_PARAMETER_VALUE), errmsg("unique_for needs a unique_key"),
                 errdetail("unique_for says how long the job's unique_key stays taken.")));
}

// Arguments shared by enqueue, try_enqueue and enqueue_batch (same order in all three up to max_attempts;
// from 0.2.0 also group_key (or group_keys), depends_on, timeout and unique_for at 7 to 10).
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
    if (unique_keys || group_keys) {
        ArrayType* ids = enqueue_batch_one_by_one(r, unique_keys, group_keys);
        ArrayType* result = static_cast<ArrayType*>(SPI_palloc(VARSIZE(ids)));
        memcpy(result, ids, VARSIZE(ids));
        SPI_finish();
        PG_RETURN_ARRAYTYPE_P(result);
    }
    int32 queue_max_attempts;
    reserve(r, true, &queue_max_attempts);
    Datum ids = draw_batch_ids(static_cast<int32>(r.count));
    Datum values[11];
    char nulls[11];
    fill_insert_values(r, queue_max_attempts, values, nulls);
    values[6] = ids;
    nulls[6] = ' ';
    if (waits(r)) {
        values[9] = values[10];  // the dependencies, at $10 here
        nulls[9] = nulls[10];
        run_plan(saved_plan(&s_insert_batch_waiting, k_insert_batch_waiting), values, nulls);
        settle_waiting_insert(r, ids);
    } else if (insert_batch_rows(r, values, nulls, DatumGetArrayTypeP(ids)) == row_insert::not_direct) {
        run_plan(saved_plan(&s_insert_batch), values, nulls);
    }
    if (!waits(r))
        announce_enqueued(r, lowest_id(DatumGetArrayTypeP(ids)));
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
    r.count = 1;
    check_request(r, false);
    require(call, cap_producer, r.queue_name);
    r.queue_text = CStringGetTextDatum(r.queue_name);

    SPI_connect();
    if (r.depends_on)
        r.depends = judge_dependencies(r);
    int64 id = 0;
    enqueue_one(r, true, &id);
    SPI_finish();

    // RETURNING sees the job as enqueued: its id and status
    int columns[2] = {SPI_fnumber(desc, "id"), SPI_fnumber(desc, "status")};
    Oid status_type = TupleDescAttr(desc, columns[1] - 1)->atttypid;
    Datum values[2] = {
        Int64GetDatum(id),
        DirectFunctionCall2(enum_in, CStringGetDatum(waits(r) ? "waiting" : "pending"), ObjectIdGetDatum(status_type))};
    bool nulls[2] = {false, false};
    return PointerGetDatum(heap_modify_tuple_by_cols(row, desc, 2, columns, values, nulls));
}
