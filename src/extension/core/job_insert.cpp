// job_insert.cpp: writing jobs' rows into pgjq.live_jobs (see job_insert.hpp).
#include "core/job_insert.hpp"

#include "pg/catalog.hpp"
#include "pg/spi.hpp"
#include "tableam/row_insert.hpp"
#include "versions/statement.hpp"

namespace {

using namespace pgjq;

SPIPlanPtr s_draw_ids;

// clang-format off
// The inserts record the role that enqueued ($8), the job's own timeout ($9) and its headers ($12). $10 and
// $11, the group key and the dependencies, only for jobs that wait.
#define INSERT_TYPES                                                                                   \
    {TEXTOID, TEXTOID, INT4OID, JSONBOID, TIMESTAMPTZOID, INT4OID, TEXTOID, REGROLEOID, INTERVALOID, TEXTOID, \
     INT8ARRAYOID, JSONBOID}
statement s_insert = {"enqueue.insert", {
    "INSERT INTO pgjq.live_jobs (queue_name, job_type, priority, payload, run_at, max_attempts, enqueued_by,"
    "   timeout, headers)"
    " VALUES ($1, $2, $3, $4, coalesce($5, now()), $6, $8, $9, $12) RETURNING id",
    12, INSERT_TYPES}};
statement s_insert_unique = {"enqueue.insert_unique", {
    "INSERT INTO pgjq.live_jobs (queue_name, job_type, priority, payload, run_at, max_attempts, unique_key,"
    "   enqueued_by, timeout, headers)"
    " VALUES ($1, $2, $3, $4, coalesce($5, now()), $6, $7, $8, $9, $12)"
    " ON CONFLICT (queue_name, enqueued_by, unique_key) WHERE unique_key IS NOT NULL DO NOTHING RETURNING id",
    12, INSERT_TYPES}};
statement s_insert_waiting = {"enqueue.insert_waiting", {
    "INSERT INTO pgjq.live_jobs (queue_name, job_type, priority, payload, run_at, max_attempts, unique_key,"
    "   enqueued_by, timeout, group_key, depends_on, status, headers)"
    " VALUES ($1, $2, $3, $4, coalesce($5, now()), $6, $7, $8, $9, $10, $11, 'waiting', $12)"
    " ON CONFLICT (queue_name, enqueued_by, unique_key) WHERE unique_key IS NOT NULL DO NOTHING RETURNING id",
    12, INSERT_TYPES}};
const plan_text k_draw_ids = {
    "SELECT pg_catalog.array_agg(pg_catalog.nextval('pgjq.job_id_seq'::pg_catalog.regclass))"
    "  FROM pg_catalog.generate_series(1, $1)",
    1, {INT4OID}};
// $7: the batch's ids, in payload order; $10 and $11 unused.
#define BATCH_TYPES                                                                                    \
    {TEXTOID, TEXTOID, INT4OID, JSONBOID, TIMESTAMPTZOID, INT4OID, INT8ARRAYOID, REGROLEOID, INTERVALOID, \
     INT8ARRAYOID, INT8ARRAYOID, JSONBOID}
statement s_insert_batch = {"enqueue.insert_batch", {
    "INSERT INTO pgjq.live_jobs (id, queue_name, job_type, priority, payload, run_at, max_attempts, enqueued_by,"
    "   timeout, headers)"
    " SELECT e.id, $1, $2, $3, e.payload, coalesce($5, now()), $6, $8, $9, $12"
    "   FROM ROWS FROM (pg_catalog.jsonb_array_elements($4), pg_catalog.unnest($7)) AS e(payload, id)",
    12, BATCH_TYPES}};
// Every job of the batch waits for the same unfinished dependencies ($10; the group keys of a batch take
// the one-by-one path).
statement s_insert_batch_waiting = {"enqueue.insert_batch_waiting", {
    "INSERT INTO pgjq.live_jobs (id, queue_name, job_type, priority, payload, run_at, max_attempts, enqueued_by,"
    "   timeout, depends_on, status, headers)"
    " SELECT e.id, $1, $2, $3, e.payload, coalesce($5, now()), $6, $8, $9, $10, 'waiting', $12"
    "   FROM ROWS FROM (pg_catalog.jsonb_array_elements($4), pg_catalog.unnest($7)) AS e(payload, id)",
    12, BATCH_TYPES}};
// clang-format on

// The statement that inserts r's job.
SPIPlanPtr insert_plan(const enqueue_request& r)
{
    if (waits(r))
        return saved_plan(&s_insert_waiting);
    return r.unique_key ? saved_plan(&s_insert_unique) : saved_plan(&s_insert);
}

// Whether s_insert is r's statement: a job that neither waits nor has a unique key.
bool plain_job(const enqueue_request& r)
{
    return !waits(r) && r.unique_key == nullptr;
}

// The job's row through the table access method (tableam/row_insert.hpp): s_insert's columns, the headers
// when the job has them (only a database at 0.3.0 has their column), and for a batch (s_insert_batch) the
// id it drew, first.
const given_column k_job_columns[] = {
    {"id", INT8OID},          {"queue_name", TEXTOID},    {"job_type", TEXTOID},     {"priority", INT4OID},
    {"payload", JSONBOID},    {"run_at", TIMESTAMPTZOID}, {"max_attempts", INT4OID}, {"enqueued_by", REGROLEOID},
    {"timeout", INTERVALOID}, {"headers", JSONBOID}};
constexpr int k_job_row_columns = lengthof(k_job_columns) - 2;  // but the id, which its default draws, and headers
constexpr int k_payload_column = 3;                             // in a row without the id
const row_shape k_job_rows[2] = {{k_job_columns + 1, k_job_row_columns, "id"},
                                 {k_job_columns + 1, k_job_row_columns + 1, "id"}};
const row_shape k_batch_job_rows[2] = {{k_job_columns, k_job_row_columns + 1, "id"},
                                       {k_job_columns, k_job_row_columns + 2, "id"}};

// The values of a job's row without its id, from `values` and `nulls` as fill_insert_values fills them
// ($7, the unique key, is not a column of it; a run_at not given is now(), as coalesce($5, now()) makes
// it), with the headers last when r has them.
void fill_job_row(const enqueue_request& r, const Datum* values, const char* nulls, Datum* row, bool* isnull)
{
    static const int from_argument[k_job_row_columns + 1] = {0, 1, 2, 3, 4, 5, 7, 8, 11};
    const int ncolumns = k_job_row_columns + (r.headers ? 1 : 0);
    for (int c = 0; c < ncolumns; c++) {
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
    Datum row[k_job_row_columns + 1];
    bool isnull[k_job_row_columns + 1];
    fill_job_row(r, values, nulls, row, isnull);
    return insert_row(pgjq_relation("live_jobs"), k_job_rows[r.headers ? 1 : 0], row, isnull, id);
}

// A batch of jobs that neither wait nor have keys, as s_insert_batch would insert them (`ids` the drawn ids
// in payload order), written several to a page.
row_insert insert_batch_rows(const enqueue_request& r, const Datum* values, const char* nulls, ArrayType* ids)
{
    const row_shape& shape = k_batch_job_rows[r.headers ? 1 : 0];
    const int ncolumns = shape.ncolumns;
    const int nrows = static_cast<int>(r.count);
    Datum* rows = static_cast<Datum*>(palloc(sizeof(Datum) * ncolumns * nrows));
    bool* isnull = static_cast<bool*>(palloc(sizeof(bool) * ncolumns * nrows));
    const int64* drawn = reinterpret_cast<const int64*>(ARR_DATA_PTR(ids));
    int row = 0;
    for_each_payload(r.payload, [&](JsonbValue& element) {
        Datum* v = rows + row * ncolumns;
        bool* n = isnull + row * ncolumns;
        v[0] = Int64GetDatum(drawn[row]);
        n[0] = false;
        fill_job_row(r, values, nulls, v + 1, n + 1);
        v[1 + k_payload_column] = JsonbPGetDatum(JsonbValueToJsonb(&element));
        row++;
    });
    return insert_rows(pgjq_relation("live_jobs"), shape, row, rows, isnull);
}

}  // namespace

namespace pgjq {

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
    values[11] = r.headers ? JsonbPGetDatum(r.headers) : (Datum) 0;
    memset(nulls, ' ', k_insert_values);
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
    if (!r.headers)
        nulls[11] = 'n';
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

bool insert_job(const enqueue_request& r, const Datum* values, const char* nulls, int64* id)
{
    bool isnull = false, found = true;
    Datum value;
    if (!plain_job(r) || insert_job_row(r, values, nulls, &value) == row_insert::not_direct) {
        run_plan(insert_plan(r), values, nulls);
        value = first_value(&isnull, &found);
    }
    if (found)
        *id = DatumGetInt64(value);
    return found;
}

void insert_batch(const enqueue_request& r, Datum* values, char* nulls, Datum ids)
{
    values[6] = ids;
    nulls[6] = ' ';
    if (waits(r)) {
        values[9] = values[10];  // the dependencies, at $10 here
        nulls[9] = nulls[10];
        run_plan(saved_plan(&s_insert_batch_waiting), values, nulls);
    } else if (insert_batch_rows(r, values, nulls, DatumGetArrayTypeP(ids)) == row_insert::not_direct) {
        run_plan(saved_plan(&s_insert_batch), values, nulls);
    }
}

}  // namespace pgjq
