// depth.cpp: the backpressure counter rows and this transaction's ledger of changes to them (see depth.hpp).
// The callbacks write the ledger at commit, empty it at the end of the transaction, and undo with a
// subtransaction what it added.
#include "core/depth.hpp"

#include "core/enqueue_counts.hpp"
#include "pg/catalog.hpp"
#include "pg/commit_work.hpp"
#include "pg/limits.hpp"
#include "pg/settings.hpp"
#include "pg/spi.hpp"
#include "tableam/counter_row.hpp"

namespace {

using namespace pgjq;

SPIPlanPtr s_reserve_writing, s_reserve_written, s_write, s_create_depth_rows;

// clang-format off
// $1 queue, $2 slot, $3 the jobs asked for, $4 what this transaction added and has not written. The slot
// row is read as locked (the first reservation writes it; later ones find it written by this transaction),
// so producers sharing a slot are exact; the other slots are read as committed, so transactions in flight
// at the same moment on other slots can each pass the check: the queue may overshoot max_pending by the
// jobs those transactions enqueue, never by more. A single producer never overshoots.
#define RESERVE_CHECK                                                                                  \
    " (q.max_pending IS NULL"                                                                          \
    "  OR d.unfinished + $3 + $4 + coalesce((SELECT sum(s.unfinished)::bigint FROM pgjq.queue_depth s"  \
    "                                        WHERE s.queue_name = $1 AND s.slot <> $2), 0)"             \
    "     <= q.max_pending)"
const plan_text k_reserve_writing = {
    "UPDATE pgjq.queue_depth d SET unfinished = d.unfinished + $3"
    "  FROM pgjq.queues q"
    " WHERE d.queue_name = $1 AND d.slot = $2 AND q.queue_name = $1 AND" RESERVE_CHECK
    " RETURNING q.max_attempts, q.fifo",
    4, {TEXTOID, INT2OID, INT8OID, INT8OID}};
const plan_text k_reserve_written = {
    "SELECT q.max_attempts, q.fifo FROM pgjq.queue_depth d, pgjq.queues q"
    " WHERE d.queue_name = $1 AND d.slot = $2 AND q.queue_name = $1 AND" RESERVE_CHECK,
    4, {TEXTOID, INT2OID, INT8OID, INT8OID}};
const plan_text k_write = {
    "UPDATE pgjq.queue_depth SET unfinished = unfinished + $3 WHERE queue_name = $1 AND slot = $2",
    3, {TEXTOID, INT2OID, INT8OID}};
// With the totals of what finished.
const plan_text k_write_finished = {
    "UPDATE pgjq.queue_depth SET unfinished = unfinished + $3, completed = completed + $4, failed = failed + $5,"
    "       cancelled = cancelled + $6"
    " WHERE queue_name = $1 AND slot = $2",
    6, {TEXTOID, INT2OID, INT8OID, INT8OID, INT8OID, INT8OID}};
SPIPlanPtr s_write_finished;
// A counter row of the queue that no other transaction holds, locked (the maintenance worker writes there,
// so that a session holding the worker's own slot row does not stop its rounds).
const plan_text k_unlocked_slot = {
    "SELECT slot FROM pgjq.queue_depth WHERE queue_name = $1 ORDER BY slot LIMIT 1 FOR UPDATE SKIP LOCKED",
    1, {TEXTOID}};
SPIPlanPtr s_unlocked_slot;
const plan_text k_create_depth_rows = {
    "INSERT INTO pgjq.queue_depth (queue_name, slot) SELECT $1, s FROM pg_catalog.generate_series(0, $2) AS s",
    2, {TEXTOID, INT4OID}};
const plan_text k_queues_with_rows = {"SELECT DISTINCT queue_name FROM pgjq.queue_depth ORDER BY queue_name", 0, {}};
SPIPlanPtr s_queues_with_rows;
// The queue's live jobs less what its rows count.
const plan_text k_uncounted = {
    "SELECT (SELECT count(*) FROM pgjq.live_jobs WHERE queue_name = $1)"
    "     - (SELECT coalesce(sum(unfinished), 0)::bigint FROM pgjq.queue_depth WHERE queue_name = $1)",
    1, {TEXTOID}};
SPIPlanPtr s_uncounted;
// clang-format on

// What one subtransaction (or the top transaction) added and has not written.
struct depth_frame {
    SubTransactionId sub;
    int64 delta;
    bool has_finished;  // `finished` holds something
    finished_counts finished;
};

void add_counts(finished_counts* sum, const finished_counts& more)
{
    sum->completed += more.completed;
    sum->failed += more.failed;
    sum->cancelled += more.cancelled;
}

void add_frames(depth_frame* into, const depth_frame& from)
{
    into->delta += from.delta;
    if (from.has_finished) {
        if (!into->has_finished)
            memset(&into->finished, 0, sizeof into->finished);
        add_counts(&into->finished, from.finished);
        into->has_finished = true;
    }
}

// The ledger's slot for the jobs enqueued into a queue without max_pending that count in shared memory at
// commit (core/enqueue_counts.hpp) instead of in a row. A prepared transaction (one that enqueued only jobs
// not due yet announces nothing, so it may be prepared) writes them to this backend's row instead: its
// commit may come from another session, or after a restart.
constexpr int16 k_shared_slot = -1;

// One counter row this transaction changed: a queue's row of one slot (or its count in shared memory).
struct depth_entry {
    char queue_name[k_queue_name_max + 1];
    int16 slot;
    // The subtransaction whose change wrote (and locked) the row; invalid when none did, or it rolled
    // back. Later reservations only read the row while it stays written.
    SubTransactionId written_in;
    // Ascending subtransaction ids: the innermost open subtransaction's frame last.
    depth_frame* frames;
    int nframes;
    int frames_capacity;
};

// The ledger: this transaction's entries, s_entries[0 .. s_count). The arrays live in TopMemoryContext and
// are reused by the next transaction (a transaction changes the rows of a few queues; creating a hash
// table per transaction cost a batch-1 drain measurably), so the end of a transaction only sets s_count
// to 0. Lookups are linear for the same reason.
depth_entry* s_entries = nullptr;
int s_count = 0;
int s_capacity = 0;

depth_entry* find_entry(const char* queue_name, int16 slot)
{
    for (int i = 0; i < s_count; i++)
        if (s_entries[i].slot == slot && strcmp(s_entries[i].queue_name, queue_name) == 0)
            return &s_entries[i];
    return nullptr;
}

// The entry of the queue's row of `slot` (this backend's, by default), created if the transaction has none
// yet. The pointer is valid until the next entry is created (a statement run meanwhile may create one: use
// the index then).
depth_entry* ledger_entry(Datum queue_name, int16 slot = depth_slot())
{
    char* name = TextDatumGetCString(queue_name);
    depth_entry* e = find_entry(name, slot);
    if (e != nullptr) {
        pfree(name);
        return e;
    }
    if (strlen(name) > static_cast<size_t>(k_queue_name_max))
        elog(ERROR, "pgjq: queue name \"%s\" is longer than %d bytes", name, k_queue_name_max);
    if (s_count == s_capacity) {
        int capacity = s_capacity == 0 ? 8 : s_capacity * 2;
        s_entries = static_cast<depth_entry*>(
            s_entries ? repalloc(s_entries, sizeof(depth_entry) * capacity)
                      : MemoryContextAllocZero(TopMemoryContext, sizeof(depth_entry) * capacity));
        memset(s_entries + s_capacity, 0, sizeof(depth_entry) * (capacity - s_capacity));
        s_capacity = capacity;
    }
    e = &s_entries[s_count++];
    strlcpy(e->queue_name, name, sizeof e->queue_name);
    pfree(name);
    e->slot = slot;
    e->written_in = InvalidSubTransactionId;
    e->nframes = 0;  // frames and frames_capacity are kept from an earlier transaction
    return e;
}

int64 unwritten(const depth_entry* e)
{
    int64 sum = 0;
    for (int i = 0; i < e->nframes; i++)
        sum += e->frames[i].delta;
    return sum;
}

// Everything the entry's frames hold, in one frame.
depth_frame unwritten_frame(const depth_entry* e)
{
    depth_frame sum = {InvalidSubTransactionId, 0, false, {}};
    for (int i = 0; i < e->nframes; i++)
        add_frames(&sum, e->frames[i]);
    return sum;
}

void add_to_frame(depth_entry* e, int64 delta, const finished_counts* finished = nullptr)
{
    depth_frame change = {GetCurrentSubTransactionId(), delta, finished != nullptr, {}};
    if (finished != nullptr)
        change.finished = *finished;
    if (e->nframes > 0 && e->frames[e->nframes - 1].sub == change.sub) {
        add_frames(&e->frames[e->nframes - 1], change);
        return;
    }
    if (e->nframes == e->frames_capacity) {
        e->frames_capacity = e->frames_capacity == 0 ? 4 : e->frames_capacity * 2;
        e->frames = static_cast<depth_frame*>(
            e->frames ? repalloc(e->frames, sizeof(depth_frame) * e->frames_capacity)
                      : MemoryContextAlloc(TopMemoryContext, sizeof(depth_frame) * e->frames_capacity));
    }
    e->frames[e->nframes++] = change;
}

// Writes a change of one counter row (the caller has an SPI connection); false when the row does not exist.
// In place where the table is as pgjq made it (tableam/counter_row.hpp), else with a statement.
bool write_row(const char* queue_name, int16 slot, const depth_frame& change)
{
    const counter_change in_place = {change.delta, change.has_finished, change.finished.completed,
                                     change.finished.failed, change.finished.cancelled};
    switch (add_to_counter_row(pgjq_relation("queue_depth"), queue_name, slot, in_place)) {
    case counter_write::written:
        return true;
    case counter_write::no_row:
        return false;
    case counter_write::not_in_place:
        break;
    }
    if (!change.has_finished) {
        Datum values[3] = {CStringGetTextDatum(queue_name), Int16GetDatum(slot), Int64GetDatum(change.delta)};
        return run_plan(saved_plan(&s_write, k_write), values, nullptr) == 1;
    }
    const finished_counts& f = change.finished;
    Datum values[6] = {CStringGetTextDatum(queue_name), Int16GetDatum(slot),     Int64GetDatum(change.delta),
                       Int64GetDatum(f.completed),      Int64GetDatum(f.failed), Int64GetDatum(f.cancelled)};
    return run_plan(saved_plan(&s_write_finished, k_write_finished), values, nullptr) == 1;
}

// The row an entry is written to.
int16 row_slot(const depth_entry& e)
{
    return e.slot == k_shared_slot ? depth_slot() : e.slot;
}

int compare_entries(const void* a, const void* b)
{
    const depth_entry& x = **static_cast<depth_entry* const*>(a);
    const depth_entry& y = **static_cast<depth_entry* const*>(b);
    int by_name = strcmp(x.queue_name, y.queue_name);
    const int16 xs = row_slot(x), ys = row_slot(y);
    return by_name != 0 ? by_name : (xs > ys) - (xs < ys);
}

// Writes what the ledger holds, one UPDATE per counter row, in key order (so that two committing
// transactions take the rows' locks in the same order). The shared counts are added after the commit
// (publish_enqueue_counts), unless the transaction is `preparing`.
void write_ledger(bool preparing)
{
    if (s_count == 0)
        return;
    depth_entry** due = static_cast<depth_entry**>(palloc(sizeof(depth_entry*) * s_count));
    int ndue = 0;
    for (int i = 0; i < s_count; i++) {
        if (s_entries[i].slot == k_shared_slot && !preparing)
            continue;
        depth_frame change = unwritten_frame(&s_entries[i]);
        if (change.delta != 0 || change.has_finished)
            due[ndue++] = &s_entries[i];
    }
    // Nothing to write, or the extension was dropped in this transaction.
    if (ndue == 0 || !OidIsValid(pgjq_relation("queue_depth"))) {
        pfree(due);
        return;
    }
    qsort(due, ndue, sizeof(depth_entry*), compare_entries);

    commit_work work = begin_commit_work();
    for (int i = 0; i < ndue; i++) {
        write_row(due[i]->queue_name, row_slot(*due[i]), unwritten_frame(due[i]));
        due[i]->nframes = 0;
    }
    end_commit_work(work);
    pfree(due);
}

// A subtransaction's frame becomes its parent's when it commits and goes when it rolls back, and so does
// the row write (and lock) of its reservation. Subtransaction ids grow, and a subtransaction ends after its
// children, so an aborting one owns every frame labelled with its id or a later one.
void follow_subtransaction(bool aborted, SubTransactionId sub, SubTransactionId parent)
{
    for (int i = 0; i < s_count; i++) {
        depth_entry* e = &s_entries[i];
        if (aborted) {
            while (e->nframes > 0 && e->frames[e->nframes - 1].sub >= sub)
                e->nframes--;
            if (e->written_in != InvalidSubTransactionId && e->written_in >= sub)
                e->written_in = InvalidSubTransactionId;
            continue;
        }
        if (e->nframes > 0 && e->frames[e->nframes - 1].sub == sub) {
            if (e->nframes > 1 && e->frames[e->nframes - 2].sub == parent) {
                add_frames(&e->frames[e->nframes - 2], e->frames[e->nframes - 1]);
                e->nframes--;
            } else {
                e->frames[e->nframes - 1].sub = parent;
            }
        }
        if (e->written_in == sub)
            e->written_in = parent;
    }
}

}  // namespace

namespace pgjq {

bool reserve_depth(Datum queue_name, int64 count)
{
    depth_entry* e = ledger_entry(queue_name);
    const int index = static_cast<int>(e - s_entries);
    bool writing = e->written_in == InvalidSubTransactionId;
    Datum values[4] = {queue_name, Int16GetDatum(e->slot), Int64GetDatum(count), Int64GetDatum(unwritten(e))};
    SPIPlanPtr plan =
        writing ? saved_plan(&s_reserve_writing, k_reserve_writing) : saved_plan(&s_reserve_written, k_reserve_written);
    if (run_plan(plan, values, nullptr) != 1)
        return false;
    e = &s_entries[index];
    if (writing)
        e->written_in = GetCurrentSubTransactionId();
    else
        add_to_frame(e, count);
    return true;
}

int64 unwritten_depth(Datum queue_name)
{
    char* name = TextDatumGetCString(queue_name);
    int64 sum = 0;
    for (int i = 0; i < s_count; i++)
        if (strcmp(s_entries[i].queue_name, name) == 0)
            sum += unwritten(&s_entries[i]);
    pfree(name);
    return sum;
}

static bool adjust_entry(depth_entry* e, int64 delta, const finished_counts* finished)
{
    if (e->written_in != InvalidSubTransactionId) {
        add_to_frame(e, delta, finished);
        return true;
    }
    // The first change of the row in this transaction writes it, as a reservation does: the row is then
    // locked until the transaction ends, so drop_queue waits for this transaction's jobs of the queue.
    const int index = static_cast<int>(e - s_entries);
    depth_frame change = {InvalidSubTransactionId, delta, finished != nullptr, {}};
    if (finished != nullptr)
        change.finished = *finished;
    if (!write_row(e->queue_name, e->slot, change))
        return false;
    s_entries[index].written_in = GetCurrentSubTransactionId();
    return true;
}

bool adjust_depth(Datum queue_name, int64 delta, const finished_counts* finished)
{
    // The counter rows of a database at 0.1.0 count no finished jobs.
    if (finished != nullptr && database_at_0_1_0())
        finished = nullptr;
    return adjust_entry(ledger_entry(queue_name), delta, finished);
}

bool adjust_depth_in_slot(Datum queue_name, int16 slot, int64 delta)
{
    return adjust_entry(ledger_entry(queue_name, slot), delta, nullptr);
}

int16 unlocked_depth_slot(Datum queue_name)
{
    if (run_plan(saved_plan(&s_unlocked_slot, k_unlocked_slot), &queue_name, nullptr) == 0)
        return -1;
    bool isnull, found;
    return DatumGetInt16(first_value(&isnull, &found));
}

bool depth_untouched()
{
    for (int i = 0; i < s_count; i++)
        if (s_entries[i].slot != k_shared_slot)
            return false;
    return true;
}

void count_enqueue(Datum queue_name, int64 count)
{
    add_to_frame(ledger_entry(queue_name, k_shared_slot), count);
}

void give_back_depth(Datum queue_name, int64 count)
{
    char* name = TextDatumGetCString(queue_name);
    depth_entry* shared = find_entry(name, k_shared_slot);
    pfree(name);
    if (shared != nullptr && unwritten(shared) >= count)
        add_to_frame(shared, -count);
    else
        adjust_depth(queue_name, -count);
}

int64 fold_enqueue_counts(Datum queue_name, int16 slot)
{
    char* name = TextDatumGetCString(queue_name);
    int64 count = take_enqueue_count(name);
    // This transaction's own enqueues into the queue, not counted yet, go to the row too.
    depth_entry* own = find_entry(name, k_shared_slot);
    pfree(name);
    int64 own_count = own == nullptr ? 0 : unwritten(own);
    if (own_count != 0)
        add_to_frame(own, -own_count);
    if (count + own_count != 0)
        adjust_depth_in_slot(queue_name, slot, count + own_count);
    return count;
}

void depth_written(Datum queue_name)
{
    depth_entry* e = ledger_entry(queue_name);
    if (e->written_in == InvalidSubTransactionId)
        e->written_in = GetCurrentSubTransactionId();
}

void create_depth_rows(Datum queue_name)
{
    Datum values[2] = {queue_name, Int32GetDatum(k_depth_slots - 1)};
    run_plan(saved_plan(&s_create_depth_rows, k_create_depth_rows), values, nullptr);
}

char** queues_with_depth_rows(uint64* count)
{
    MemoryContext caller = CurrentMemoryContext;
    *count = run_plan(saved_plan(&s_queues_with_rows, k_queues_with_rows), nullptr, nullptr);
    MemoryContext spi = MemoryContextSwitchTo(caller);
    char** queues = static_cast<char**>(palloc(sizeof(char*) * (*count + 1)));
    for (uint64 i = 0; i < *count; i++)
        queues[i] = SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1);
    MemoryContextSwitchTo(spi);
    return queues;
}

int64 recount_unfinished(const char* queue_name, int16 slot)
{
    Datum name = CStringGetTextDatum(queue_name);
    // The count below sees every job whose enqueue counted in shared memory: the caller's lock keeps any in
    // flight out. (The latest snapshot, whatever the isolation level: taken after the lock.) What this
    // transaction counted and has not written yet is among the live jobs too.
    take_enqueue_count(queue_name);
    run_plan_latest(saved_plan(&s_uncounted, k_uncounted), &name, nullptr);
    bool isnull, found;
    int64 missing = DatumGetInt64(first_value(&isnull, &found)) - unwritten_depth(name);
    if (missing != 0 && !adjust_depth_in_slot(name, slot, missing))
        missing = 0;  // the queue's rows went meanwhile (a drop_queue that committed)
    return missing;
}

void recount_every_queue()
{
    SPI_connect();
    uint64 count;
    char** queues = queues_with_depth_rows(&count);
    for (uint64 i = 0; i < count; i++) {
        lock_queue_count(queues[i], ExclusiveLock);
        (void) recount_unfinished(queues[i], depth_slot());
    }
    SPI_finish();
}

void forget_depth(const char* queue_name)
{
    for (int i = 0; i < s_count; i++) {
        depth_entry* e = &s_entries[i];
        if (strcmp(e->queue_name, queue_name) != 0)
            continue;
        // Cancelled in a frame of its own, so that a rollback of the drop's subtransaction brings it back.
        depth_frame held = unwritten_frame(e);
        finished_counts undo = {-held.finished.completed, -held.finished.failed, -held.finished.cancelled};
        add_to_frame(e, -held.delta, held.has_finished ? &undo : nullptr);
        // A queue created again has new rows: its first reservation writes one of them. (After a rollback
        // of the drop, this costs one more write of the old row, nothing else.)
        e->written_in = InvalidSubTransactionId;
    }
}

void write_depth_ledger(bool preparing)
{
    write_ledger(preparing);
}

void publish_enqueue_counts()
{
    for (int i = 0; i < s_count; i++) {
        if (s_entries[i].slot != k_shared_slot)
            continue;
        int64 count = unwritten(&s_entries[i]);
        if (count != 0)
            add_enqueue_count(s_entries[i].queue_name, count);
    }
}

void forget_depth_ledger()
{
    s_count = 0;
}

void depth_ledger_subtransaction_committed(SubTransactionId sub, SubTransactionId parent)
{
    follow_subtransaction(false, sub, parent);
}

void depth_ledger_subtransaction_aborted(SubTransactionId sub)
{
    follow_subtransaction(true, sub, InvalidSubTransactionId);
}

}  // namespace pgjq
