// lifecycle.cpp: archive_jobs, completing held jobs and the job-id array helpers (see lifecycle.hpp). The
// jobs move through the table access method (core/direct_archive.hpp) where they can; else one statement
// moves them, records them as finished and updates the depth counters, so a batch costs one round of
// executor work whatever its size. Either way, what moved is then settled here.
#include "core/lifecycle.hpp"

#include "core/announcements.hpp"
#include "core/depth.hpp"
#include "core/direct_archive.hpp"
#include "core/job_columns.hpp"
#include "core/latency.hpp"
#include "core/queue_cache.hpp"
#include "core/refusals.hpp"
#include "core/waiting_jobs.hpp"
#include "pg/catalog.hpp"
#include "pg/limits.hpp"
#include "pg/spi.hpp"
#include "versions/statement.hpp"

namespace pgjq {

// clang-format off
// $1 ids, $2 the holding worker id (NULL: any), $3 status, $4 result, $5 last_error, $6 the worker of a
// job claimed in this transaction (claim_in_transaction), whose row still holds the state it had before the
// claim: the history records that worker, this attempt and the claim's time; $7 the queues that keep no
// completed jobs; $8 the calling role; $9 this backend's counter slot.
#define ARCHIVE_DELETE(holder_condition, extra_column)                                                 \
    "WITH done AS ("                                                                                   \
    "  DELETE FROM pgjq.live_jobs"                                                                     \
    "   WHERE id = ANY ($1) AND ($2::text IS NULL OR (worker_id = $2 AND status <> 'pending'"          \
    holder_condition "))"                                                                              \
    "  RETURNING *" extra_column "),"
// A report must come from the role that claimed the job or a role with its privileges, before the job's
// execution timeout.
#define HOLDER_ROLE PGJQ_HELD_BY_ROLE("", "$8") PGJQ_BEFORE_TIMEOUT("")
#define ARCHIVE_INSERT(added_columns, added_values, condition)                                        \
    " archived AS ("                                                                                   \
    "  INSERT INTO pgjq.finished_jobs (id, queue_name, job_type, priority, status, payload, result, run_at," \
    "    unique_key, progress, current_stage, events_count, worker_id, claimed_at, heartbeat_at,"        \
    "    lease_expires_at, created_at, started_at, completed_at, failed_at, cancelled_at, finished_at,"  \
    "    attempts, max_attempts, last_error" added_columns ")"                                         \
    "  SELECT id, queue_name, job_type, priority, $3::pgjq.job_status, payload, $4, run_at,"           \
    "    unique_key, CASE WHEN $3 = 'completed' THEN 100 ELSE progress END, current_stage, events_count," \
    "    coalesce($6, worker_id), CASE WHEN $6 IS NULL THEN claimed_at ELSE now() END,"                 \
    "    CASE WHEN $6 IS NULL THEN heartbeat_at END, CASE WHEN $6 IS NULL THEN lease_expires_at END,"   \
    "    created_at, CASE WHEN $6 IS NULL THEN started_at ELSE now() END,"                              \
    "    CASE WHEN $3 = 'completed' THEN statement_timestamp() END,"                                    \
    "    CASE WHEN $3 = 'failed' THEN statement_timestamp() END,"                                       \
    "    CASE WHEN $3 = 'cancelled' THEN statement_timestamp() END, statement_timestamp(),"             \
    "    attempts + CASE WHEN $6 IS NULL THEN 0 ELSE 1 END, max_attempts, coalesce($5, last_error)"     \
    added_values "  FROM done" condition ")"
#define ARCHIVE_TYPES {INT8ARRAYOID, TEXTOID, TEXTOID, JSONBOID, TEXTOID, TEXTOID, TEXTARRAYOID, REGROLEOID, INT2OID}
#define ADDED_COLUMNS ", enqueued_by, claimed_by, group_key, depends_on, timeout, headers"
#define ADDED_VALUES \
    ", enqueued_by, CASE WHEN $6 IS NULL THEN claimed_by ELSE $8 END, group_key, depends_on, timeout, headers"
// What moved: how many, their ids, and their queues for the depth counters: the one queue of them all
// (the usual case), or, when they span several, every job's queue name (counted by archive_jobs); then
// the groups the jobs with a group key leave and the jobs' times.
#define MOVED_BY_QUEUE " (SELECT queue_name, count(*) AS n FROM done GROUP BY queue_name) g"
#define RETURN_MOVED_COLUMNS(groups)                                                                   \
    " SELECT count(*), coalesce(array_agg(id), '{}'), min(queue_name),"                                \
    "        CASE WHEN min(queue_name) <> max(queue_name) THEN array_agg(queue_name) END" groups
// Also each job's wait (due to claimed) and run (claimed to now) times in seconds, for the
// histograms of core/latency.hpp: NULL for a job this attempt never claimed. A job claimed in this
// transaction (claim_in_transaction) was claimed at now().
#define CLAIM_TIME "CASE WHEN $6 IS NOT NULL THEN now() WHEN status IN ('claimed', 'running') THEN claimed_at END"
#define GROUPS_AND_TIMES                                                                                 \
    ", array_agg(queue_name) FILTER (WHERE group_key IS NOT NULL),"                                     \
    "  array_agg(group_key) FILTER (WHERE group_key IS NOT NULL),"                                      \
    "  array_agg(pg_catalog.date_part('epoch', " CLAIM_TIME " - run_at)),"                              \
    "  array_agg(pg_catalog.date_part('epoch', statement_timestamp() - " CLAIM_TIME "))"
// The enqueuing roles of the jobs with a group key, last and by name: a database at 0.1.0, whose forms of
// these statements have no such column, has no groups.
#define GROUP_ROLES ", array_agg(enqueued_by::oid) FILTER (WHERE group_key IS NOT NULL) AS group_roles"
#define RETURN_MOVED(groups) RETURN_MOVED_COLUMNS(groups) GROUP_ROLES " FROM done"
// Completion while some queue has keep_completed = false: their jobs are deleted without a history row,
// and their pgjq_job_finished notices are sent by archive_jobs, since no insert into finished_jobs fires
// the trigger that sends them.
#define KEEP_OR_DISCARD ", queue_name <> ALL ($7) AS kept"
#define RETURN_MOVED_AND_DISCARDED(groups)                                                             \
    RETURN_MOVED_COLUMNS(groups) ", array_agg(id) FILTER (WHERE NOT kept),"                            \
    " array_agg(queue_name) FILTER (WHERE NOT kept)" GROUP_ROLES " FROM done"

// The transaction's first change of the depth counters writes this backend's slot rows in the statement
// itself (one statement fewer for the common one-call transaction); later ones go to the transaction's
// ledger (core/depth.hpp).
// The same rows count what finished, by final status ($3; core/depth.hpp), in the same write.
#define WRITE_DEPTH                                                                                    \
    ", counted AS (UPDATE pgjq.queue_depth d SET unfinished = d.unfinished - g.n,"                      \
    "   completed = d.completed + CASE WHEN $3 = 'completed' THEN g.n ELSE 0 END,"                     \
    "   failed = d.failed + CASE WHEN $3 = 'failed' THEN g.n ELSE 0 END,"                              \
    "   cancelled = d.cancelled + CASE WHEN $3 = 'cancelled' THEN g.n ELSE 0 END"                      \
    "  FROM" MOVED_BY_QUEUE " WHERE d.queue_name = g.queue_name AND d.slot = $9)"
#define ARCHIVE_PLAN(write)                                                                            \
    {ARCHIVE_DELETE(HOLDER_ROLE, "") ARCHIVE_INSERT(ADDED_COLUMNS, ADDED_VALUES, "") write               \
     RETURN_MOVED(GROUPS_AND_TIMES), 9, ARCHIVE_TYPES}
#define ARCHIVE_SOME_DISCARDED_PLAN(write)                                                             \
    {ARCHIVE_DELETE(HOLDER_ROLE, KEEP_OR_DISCARD) ARCHIVE_INSERT(ADDED_COLUMNS, ADDED_VALUES, " WHERE kept") write \
     RETURN_MOVED_AND_DISCARDED(GROUPS_AND_TIMES), 9, ARCHIVE_TYPES}
// Indexed by whether the statement writes the counters itself.
static statement s_archive[2] = {{"lifecycle.archive", ARCHIVE_PLAN("")},
                                 {"lifecycle.archive_writing_depth", ARCHIVE_PLAN(WRITE_DEPTH)}};
static statement s_archive_some_discarded[2] = {
    {"lifecycle.archive_some_discarded", ARCHIVE_SOME_DISCARDED_PLAN("")},
    {"lifecycle.archive_some_discarded_writing_depth", ARCHIVE_SOME_DISCARDED_PLAN(WRITE_DEPTH)}};
// clang-format on

// The finished notices of jobs deleted without a history row (see k_archive_some_discarded).
static void announce_discarded(ArrayType* ids, ArrayType* queues, const char* status)
{
    Datum* queue_names;
    bool* queue_nulls;
    int n;
    deconstruct_array(queues, TEXTOID, -1, false, TYPALIGN_INT, &queue_names, &queue_nulls, &n);
    const int64* id_values = reinterpret_cast<const int64*>(ARR_DATA_PTR(ids));
    for (int i = 0; i < n; i++)
        announce_finished(id_values[i], TextDatumGetCString(queue_names[i]), status);
}

static void note_groups_left(ArrayType* queues, ArrayType* roles, ArrayType* keys)
{
    Datum *queue_names, *group_roles, *group_keys;
    bool *nulls, *role_nulls;
    int n;
    deconstruct_array(queues, TEXTOID, -1, false, TYPALIGN_INT, &queue_names, &nulls, &n);
    deconstruct_array(roles, OIDOID, sizeof(Oid), true, TYPALIGN_INT, &group_roles, &role_nulls, &n);
    deconstruct_array(keys, TEXTOID, -1, false, TYPALIGN_INT, &group_keys, &nulls, &n);
    for (int i = 0; i < n; i++)
        note_group_changed(TextDatumGetCString(queue_names[i]),
                           role_nulls[i] ? InvalidOid : DatumGetObjectId(group_roles[i]),
                           TextDatumGetCString(group_keys[i]));
}

static int compare_names(const void* a, const void* b)
{
    return strcmp(*static_cast<char* const*>(a), *static_cast<char* const*>(b));
}

// What left the live table, by queue (see RETURN_MOVED_COLUMNS), taken off the depth counters and added to
// the totals of that final status: noted as written when the statement wrote them itself, else kept in the
// transaction's ledger.
static void count_moved(Datum queue, int64 count, const char* status, bool written)
{
    if (written) {
        depth_written(queue);
        return;
    }
    finished_counts finished = {0, 0, 0};
    if (strcmp(status, "completed") == 0)
        finished.completed = count;
    else if (strcmp(status, "failed") == 0)
        finished.failed = count;
    else
        finished.cancelled = count;
    adjust_depth(queue, -count, &finished);
}

static void count_moved_by_queue(Datum one_queue, bool several, Datum every_queue, int64 count, const char* status,
                                 bool written)
{
    if (!several) {
        count_moved(one_queue, count, status, written);
        return;
    }
    Datum* datums;
    bool* nulls;
    int n;
    deconstruct_array(DatumGetArrayTypeP(every_queue), TEXTOID, -1, false, TYPALIGN_INT, &datums, &nulls, &n);
    char** names = static_cast<char**>(palloc(sizeof(char*) * n));
    for (int i = 0; i < n; i++)
        names[i] = TextDatumGetCString(datums[i]);
    qsort(names, n, sizeof(char*), compare_names);
    for (int i = 0, run = 1; i < n; i++, run++) {
        if (i + 1 < n && strcmp(names[i], names[i + 1]) == 0)
            continue;
        count_moved(CStringGetTextDatum(names[i]), run, status, written);
        run = 0;
    }
}

// What archive_jobs' statement moved (its one row), as archive_directly reports it.
static archived_jobs statement_moved(bool discarding)
{
    HeapTuple row = SPI_tuptable->vals[0];
    TupleDesc desc = SPI_tuptable->tupdesc;
    archived_jobs a;
    bool isnull, one_queue;
    a.count = DatumGetInt64(SPI_getbinval(row, desc, 1, &isnull));
    a.moved = SPI_getbinval(row, desc, 2, &isnull);
    a.queue = SPI_getbinval(row, desc, 3, &a.none_moved);
    a.every_queue = SPI_getbinval(row, desc, 4, &one_queue);
    a.several_queues = !one_queue;
    a.group_queues = SPI_getbinval(row, desc, 5, &a.no_groups);
    a.group_keys = SPI_getbinval(row, desc, 6, &isnull);
    int roles_column = SPI_fnumber(desc, "group_roles");
    if (roles_column > 0)
        a.group_roles = SPI_getbinval(row, desc, roles_column, &isnull);
    else
        a.no_groups = true;
    a.waits = SPI_getbinval(row, desc, 7, &a.no_times);
    a.runs = SPI_getbinval(row, desc, 8, &isnull);
    a.none_discarded = true;
    a.discarded_ids = discarding ? SPI_getbinval(row, desc, 9, &a.none_discarded) : (Datum) 0;
    a.discarded_queues = discarding ? SPI_getbinval(row, desc, 10, &isnull) : (Datum) 0;
    return a;
}

uint64 archive_jobs(const archive_request& r, Datum* moved)
{
    ArrayType* discarding = strcmp(r.status, "completed") == 0 ? queues_not_keeping_completed() : nullptr;
    archived_jobs a;
    bool writes_depth = false;
    if (!archive_directly(r, discarding, &a)) {
        writes_depth = depth_untouched();
        Datum values[9] = {r.ids,
                           r.holder ? CStringGetTextDatum(r.holder) : (Datum) 0,
                           CStringGetTextDatum(r.status),
                           r.result ? JsonbPGetDatum(r.result) : (Datum) 0,
                           r.last_error ? CStringGetTextDatum(r.last_error) : (Datum) 0,
                           r.claimed_here_by ? CStringGetTextDatum(r.claimed_here_by) : (Datum) 0,
                           discarding ? PointerGetDatum(discarding) : (Datum) 0,
                           ObjectIdGetDatum(r.role),
                           Int16GetDatum(depth_slot())};
        char nulls[9] = {' ',
                         r.holder ? ' ' : 'n',
                         ' ',
                         r.result ? ' ' : 'n',
                         r.last_error ? ' ' : 'n',
                         r.claimed_here_by ? ' ' : 'n',
                         discarding ? ' ' : 'n',
                         OidIsValid(r.role) ? ' ' : 'n',
                         ' '};
        statement* plans = discarding ? s_archive_some_discarded : s_archive;
        run_plan(saved_plan(&plans[writes_depth]), values, nulls);
        a = statement_moved(discarding != nullptr);
    }
    if (moved)
        *moved = a.moved;
    if (!a.none_discarded)
        announce_discarded(DatumGetArrayTypeP(a.discarded_ids), DatumGetArrayTypeP(a.discarded_queues), r.status);
    // The groups the jobs left, and the jobs that may have dependents: settled at commit.
    if (!a.no_groups)
        note_groups_left(DatumGetArrayTypeP(a.group_queues), DatumGetArrayTypeP(a.group_roles),
                         DatumGetArrayTypeP(a.group_keys));
    if (a.count > 0 && dependencies_in_use())
        note_finished(a.moved);
    if (!a.none_moved && !a.no_times)
        note_latencies(a.queue, a.several_queues ? DatumGetArrayTypeP(a.every_queue) : nullptr,
                       DatumGetArrayTypeP(a.waits), DatumGetArrayTypeP(a.runs));
    // Last: it may run a statement of its own (the statement's row stays valid until SPI_finish).
    if (!a.none_moved)
        count_moved_by_queue(a.queue, a.several_queues, a.every_queue, a.count, r.status, writes_depth);
    return static_cast<uint64>(a.count);
}

Datum single_id_array(int64 id)
{
    return PointerGetDatum(job_id_array(&id, 1));
}

ArrayType* job_id_array(const int64* ids, int n)
{
    Datum* elements = static_cast<Datum*>(palloc(sizeof(Datum) * (n + 1)));
    for (int i = 0; i < n; i++)
        elements[i] = Int64GetDatum(ids[i]);
    return construct_array(elements, n, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE);
}

static int compare_job_ids(const void* a, const void* b)
{
    int64 x = *static_cast<const int64*>(a), y = *static_cast<const int64*>(b);
    return (x > y) - (x < y);
}

void sort_job_ids(int64* ids, int n)
{
    qsort(ids, n, sizeof(int64), compare_job_ids);
}

bool sorted_ids_contain(const int64* sorted, int n, int64 id)
{
    return bsearch(&id, sorted, n, sizeof(int64), compare_job_ids) != nullptr;
}

int64* distinct_job_ids(ArrayType* ids, const char* arg_name, int* distinct)
{
    if (ARR_NDIM(ids) > 1)
        ereport(ERROR,
                (errcode(ERRCODE_INVALID_PARAMETER_VALUE), errmsg("%s must be a one-dimensional array", arg_name)));
    if (array_contains_nulls(ids))
        ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED), errmsg("%s must not contain nulls", arg_name)));
    int n = ArrayGetNItems(ARR_NDIM(ids), ARR_DIMS(ids));
    if (n > k_max_batch_size)
        ereport(ERROR,
                (errcode(ERRCODE_INVALID_PARAMETER_VALUE), errmsg("%s has %d elements", arg_name, n),
                 errdetail("At most %d jobs can be completed in one call.", k_max_batch_size)));
    int64* sorted = static_cast<int64*>(palloc(sizeof(int64) * (n + 1)));
    if (n > 0)
        memcpy(sorted, ARR_DATA_PTR(ids), sizeof(int64) * n);
    sort_job_ids(sorted, n);
    *distinct = 0;
    for (int i = 0; i < n; i++)
        if (i == 0 || sorted[i] != sorted[i - 1])
            sorted[(*distinct)++] = sorted[i];
    return sorted;
}

int64 first_not_moved(ArrayType* ids, Datum moved)
{
    const int64* given = reinterpret_cast<const int64*>(ARR_DATA_PTR(ids));
    int n = ArrayGetNItems(ARR_NDIM(ids), ARR_DIMS(ids));
    ArrayType* moved_array = DatumGetArrayTypeP(moved);
    int moved_n = ArrayGetNItems(ARR_NDIM(moved_array), ARR_DIMS(moved_array));
    int64* done = static_cast<int64*>(palloc(sizeof(int64) * (moved_n + 1)));
    if (moved_n > 0)
        memcpy(done, ARR_DATA_PTR(moved_array), sizeof(int64) * moved_n);
    sort_job_ids(done, moved_n);
    for (int i = 0; i < n; i++)
        if (!sorted_ids_contain(done, moved_n, given[i]))
            return given[i];
    return given[0];
}

int64 complete_held_jobs(Oid role, ArrayType* ids, const char* worker_id, const char* arg_name)
{
    int distinct;
    distinct_job_ids(ids, arg_name, &distinct);
    if (distinct == 0)
        return 0;
    Datum moved;
    archive_request r = {PointerGetDatum(ids), "completed", worker_id, nullptr, role, nullptr, nullptr};
    uint64 count = archive_jobs(r, &moved);
    if (count < static_cast<uint64>(distinct))
        raise_not_held(first_not_moved(ids, moved), worker_id, role);
    return static_cast<int64>(count);
}

}  // namespace pgjq
