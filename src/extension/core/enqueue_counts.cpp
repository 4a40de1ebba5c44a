// enqueue_counts.cpp: the shared-memory counts of enqueues (see enqueue_counts.hpp). A fixed table of
// k_count_slots entries found by open addressing, each taken under the exclusive lock and never freed until a
// restart; committing transactions add to an entry with an atomic add under the shared lock, so producers
// never wait on each other. Moving a count between `counted` and `taken` (a fold, and its settling) holds the
// exclusive lock, so that a reader, under the shared one, never sees it in both or in neither.
#include "core/enqueue_counts.hpp"

#include "pg/catalog.hpp"
#include "pg/limits.hpp"
#include "pg/settings.hpp"
#include "pg/subtransaction_notes.hpp"

namespace {

using namespace pgjq;

constexpr int k_count_slots = 4096;
constexpr int k_ready_slots = 256;

struct count_slot {
    Oid database;  // InvalidOid: free
    Oid depth_relid;
    char queue_name[k_queue_name_max + 1];
    pg_atomic_uint64 counted;  // int64: jobs whose enqueue committed, not taken by a fold yet
    pg_atomic_uint64 taken;    // int64: taken by transactions that have not ended yet
};

// A database whose rows agree with its jobs since the start (the worker reconciled them, or they were just
// created), with its queue_depth; its enqueues count here while a worker serves it to fold them (`counting`).
struct reconciled_database {
    Oid database;
    Oid depth_relid;
    bool counting;
};

struct counts_shared {
    // Bumped whenever a database stops being reconciled (a COPY into its tables committed): backends then look
    // again, and a reconcile that began before it does not count.
    pg_atomic_uint32 epoch;
    int nreconciled;
    reconciled_database reconciled[k_ready_slots];
    count_slot slots[k_count_slots];
};

counts_shared* s_shared = nullptr;
LWLock* s_counts_lock = nullptr;

// The queue_depth this backend last found reconciled, and the epoch it was found in.
Oid s_reconciled_relid = InvalidOid;
Oid s_reconciled_database = InvalidOid;
uint32 s_reconciled_epoch = 0;
// This transaction loaded rows into pgjq's tables in bulk: the database is not reconciled once it commits.
bool s_unreconcile_at_commit = false;
// This transaction created the extension: its empty tables are reconciled once it commits.
Oid s_created_relid = InvalidOid;
uint32 s_created_epoch = 0;
bool s_table_full = false;  // this backend found no free entry (and logged it)

// What this transaction took out of the entries, by subtransaction, in TopMemoryContext (reused).
struct taken_note {
    SubTransactionId sub;
    Oid depth_relid;
    char queue_name[k_queue_name_max + 1];
    int64 count;
};
taken_note* s_taken = nullptr;
int s_ntaken = 0;
int s_taken_capacity = 0;

bool s_stop_registered = false;  // this worker stops its database's counting when it exits

// This database's entry with queue_depth `depth_relid`, or nullptr. Requires s_counts_lock.
reconciled_database* find_reconciled(Oid depth_relid)
{
    for (int i = 0; i < s_shared->nreconciled; i++)
        if (s_shared->reconciled[i].database == MyDatabaseId && s_shared->reconciled[i].depth_relid == depth_relid)
            return &s_shared->reconciled[i];
    return nullptr;
}

// A worker leaves its database (stop_worker(), idle, the extension dropped, an error): nobody would fold the
// counts, so enqueues write their rows until a worker serves it again. What is counted stays.
void stop_counting_at_exit(int, Datum database)
{
    LWLockAcquire(s_counts_lock, LW_EXCLUSIVE);
    for (int i = 0; i < s_shared->nreconciled; i++)
        if (s_shared->reconciled[i].database == DatumGetObjectId(database))
            s_shared->reconciled[i].counting = false;
    pg_atomic_fetch_add_u32(&s_shared->epoch, 1);
    LWLockRelease(s_counts_lock);
}

int64 read_int64(pg_atomic_uint64* value)
{
    return static_cast<int64>(pg_atomic_read_u64(value));
}

// The entry of (this database, queue_depth, queue); taken if `take` and one is free. Requires s_counts_lock
// (exclusive if `take`).
count_slot* find_slot(Oid depth_relid, const char* queue_name, bool take)
{
    uint32 start =
        hash_bytes(reinterpret_cast<const unsigned char*>(queue_name), strlen(queue_name)) ^ MyDatabaseId ^ depth_relid;
    for (int probe = 0; probe < k_count_slots; probe++) {
        count_slot* s = &s_shared->slots[(start + probe) % k_count_slots];
        if (s->database == MyDatabaseId && s->depth_relid == depth_relid && strcmp(s->queue_name, queue_name) == 0)
            return s;
        if (s->database == InvalidOid) {
            if (!take)
                return nullptr;
            strlcpy(s->queue_name, queue_name, sizeof s->queue_name);
            s->depth_relid = depth_relid;
            pg_atomic_write_u64(&s->counted, 0);
            pg_atomic_write_u64(&s->taken, 0);
            s->database = MyDatabaseId;
            return s;
        }
    }
    return nullptr;
}

// The queue's count lock: an object of pgjq.queue_depth's class, numbered by the hash of the queue's name.
void lock_tag(LOCKTAG* tag, Oid depth_relid, const char* queue_name)
{
    uint32 hash = hash_bytes(reinterpret_cast<const unsigned char*>(queue_name), strlen(queue_name));
    SET_LOCKTAG_OBJECT(*tag, MyDatabaseId, depth_relid, hash, 0);
}

void note_taken(Oid depth_relid, const char* queue_name, int64 count)
{
    if (s_ntaken == s_taken_capacity) {
        int capacity = s_taken_capacity == 0 ? 8 : s_taken_capacity * 2;
        s_taken = static_cast<taken_note*>(s_taken == nullptr
                                               ? MemoryContextAlloc(TopMemoryContext, sizeof(taken_note) * capacity)
                                               : repalloc(s_taken, sizeof(taken_note) * capacity));
        s_taken_capacity = capacity;
    }
    taken_note* n = &s_taken[s_ntaken++];
    n->sub = GetCurrentSubTransactionId();
    n->depth_relid = depth_relid;
    strlcpy(n->queue_name, queue_name, sizeof n->queue_name);
    n->count = count;
}

// Settles one note, with s_counts_lock held exclusively: the count leaves the entry (committed) or goes back.
void settle_note(const taken_note& note, bool committed)
{
    // Entries are freed only by a restart: the entry is there.
    count_slot* s = find_slot(note.depth_relid, note.queue_name, false);
    if (s == nullptr)
        return;
    if (!committed)
        pg_atomic_fetch_add_u64(&s->counted, note.count);
    pg_atomic_fetch_sub_u64(&s->taken, note.count);
}

}  // namespace

namespace pgjq {

bool enqueue_counts_available()
{
    return s_shared != nullptr;
}

bool enqueue_counts_reconciled()
{
    if (s_shared == nullptr)
        return false;
    Oid relid = pgjq_relation("queue_depth");
    LWLockAcquire(s_counts_lock, LW_SHARED);
    bool found = OidIsValid(relid) && find_reconciled(relid) != nullptr;
    LWLockRelease(s_counts_lock);
    return found;
}

bool enqueue_counts_ready()
{
    if (!shared_enqueue_counts || s_shared == nullptr)
        return false;
    // queue_depth gets a new OID only from a CREATE EXTENSION, which moves the epoch when it commits: the
    // table need not be looked up while the epoch stands.
    const uint32 epoch = pg_atomic_read_u32(&s_shared->epoch);
    if (MyDatabaseId == s_reconciled_database && epoch == s_reconciled_epoch && OidIsValid(s_reconciled_relid))
        return true;
    Oid relid = pgjq_relation("queue_depth");
    if (!OidIsValid(relid))
        return false;
    LWLockAcquire(s_counts_lock, LW_SHARED);
    const reconciled_database* r = find_reconciled(relid);
    bool counting = r != nullptr && r->counting;
    LWLockRelease(s_counts_lock);
    if (counting) {
        s_reconciled_relid = relid;
        s_reconciled_database = MyDatabaseId;
        s_reconciled_epoch = epoch;
    }
    return counting;
}

void start_counting()
{
    if (s_shared == nullptr)
        return;
    Oid relid = pgjq_relation("queue_depth");
    LWLockAcquire(s_counts_lock, LW_EXCLUSIVE);
    reconciled_database* r = OidIsValid(relid) ? find_reconciled(relid) : nullptr;
    if (r != nullptr)
        r->counting = true;
    LWLockRelease(s_counts_lock);
}

bool counting_may_start()
{
    if (s_shared == nullptr)
        return false;
    bool waiting = false;
    LWLockAcquire(s_counts_lock, LW_SHARED);
    for (int i = 0; i < s_shared->nreconciled && !waiting; i++)
        waiting = s_shared->reconciled[i].database == MyDatabaseId && !s_shared->reconciled[i].counting;
    LWLockRelease(s_counts_lock);
    return waiting;
}

void stop_counting_when_leaving()
{
    if (s_shared != nullptr && !s_stop_registered) {
        before_shmem_exit(stop_counting_at_exit, ObjectIdGetDatum(MyDatabaseId));
        s_stop_registered = true;
    }
}

bool begin_counting_enqueues(const char* queue_name)
{
    LWLockAcquire(s_counts_lock, LW_SHARED);
    count_slot* s = find_slot(s_reconciled_relid, queue_name, false);
    LWLockRelease(s_counts_lock);
    // Entries are freed only by a restart: once this backend found the table full, it stays full.
    if (s == nullptr && !s_table_full) {
        LWLockAcquire(s_counts_lock, LW_EXCLUSIVE);
        s = find_slot(s_reconciled_relid, queue_name, true);
        LWLockRelease(s_counts_lock);
    }
    if (s == nullptr) {
        if (!s_table_full) {
            s_table_full = true;
            ereport(LOG,
                    (errmsg("pgjq: no room to count the enqueues of queue \"%s\" in shared memory", queue_name),
                     errdetail("The table holds %d queues until the server restarts; the queue's enqueues "
                               "write its counter rows.",
                               k_count_slots)));
        }
        return false;
    }
    LOCKTAG tag;
    lock_tag(&tag, s_reconciled_relid, queue_name);
    (void) LockAcquire(&tag, RowExclusiveLock, false, false);
    return true;
}

void add_enqueue_count(const char* queue_name, int64 n)
{
    LWLockAcquire(s_counts_lock, LW_SHARED);
    count_slot* s = find_slot(s_reconciled_relid, queue_name, false);
    if (s != nullptr)
        pg_atomic_fetch_add_u64(&s->counted, n);
    LWLockRelease(s_counts_lock);
    // LOG never raises, so it is safe after commit. Cannot happen: the enqueue took the entry.
    if (s == nullptr)
        ereport(LOG,
                (errmsg("pgjq: the shared count of queue \"%s\" is missing; %lld jobs are not counted until "
                        "the server restarts",
                        queue_name, static_cast<long long>(n))));
}

int64 unfolded_enqueues(const char* queue_name)
{
    if (s_shared == nullptr)
        return 0;
    Oid relid = pgjq_relation("queue_depth");
    LWLockAcquire(s_counts_lock, LW_SHARED);
    count_slot* s = find_slot(relid, queue_name, false);
    int64 sum = s == nullptr ? 0 : read_int64(&s->counted) + read_int64(&s->taken);
    LWLockRelease(s_counts_lock);
    return sum;
}

void lock_queue_count(const char* queue_name, LOCKMODE mode)
{
    (void) try_lock_queue_count(queue_name, mode, false);
}

bool try_lock_queue_count(const char* queue_name, LOCKMODE mode, bool dont_wait)
{
    if (s_shared == nullptr)
        return false;
    LOCKTAG tag;
    lock_tag(&tag, pgjq_relation("queue_depth"), queue_name);
    return LockAcquire(&tag, mode, false, dont_wait) != LOCKACQUIRE_NOT_AVAIL;
}

int64 take_enqueue_count(const char* queue_name)
{
    if (s_shared == nullptr)
        return 0;
    Oid relid = pgjq_relation("queue_depth");
    LWLockAcquire(s_counts_lock, LW_EXCLUSIVE);
    count_slot* s = find_slot(relid, queue_name, false);
    int64 count = s == nullptr ? 0 : read_int64(&s->counted);
    if (count != 0) {
        pg_atomic_fetch_add_u64(&s->taken, count);
        pg_atomic_fetch_sub_u64(&s->counted, count);
    }
    LWLockRelease(s_counts_lock);
    if (count != 0)
        note_taken(relid, queue_name, count);
    return count;
}

char** queues_with_enqueue_counts(int* count)
{
    *count = 0;
    Oid relid = s_shared == nullptr ? InvalidOid : pgjq_relation("queue_depth");
    if (!OidIsValid(relid))
        return nullptr;
    int capacity = 16;
    char** names = static_cast<char**>(palloc(sizeof(char*) * capacity));
    LWLockAcquire(s_counts_lock, LW_SHARED);
    for (count_slot& s : s_shared->slots) {
        if (s.database != MyDatabaseId || s.depth_relid != relid || read_int64(&s.counted) == 0)
            continue;
        if (*count == capacity) {
            capacity *= 2;
            names = static_cast<char**>(repalloc(names, sizeof(char*) * capacity));
        }
        names[(*count)++] = pstrdup(s.queue_name);
    }
    LWLockRelease(s_counts_lock);
    return names;
}

uint32 enqueue_counts_epoch()
{
    return s_shared == nullptr ? 0 : pg_atomic_read_u32(&s_shared->epoch);
}

void mark_enqueue_counts_ready(Oid depth_relid, uint32 epoch, bool counting)
{
    if (s_shared == nullptr || !OidIsValid(depth_relid))
        return;
    LWLockAcquire(s_counts_lock, LW_EXCLUSIVE);
    if (pg_atomic_read_u32(&s_shared->epoch) != epoch) {
        LWLockRelease(s_counts_lock);
        return;
    }
    int i = 0;
    while (i < s_shared->nreconciled && s_shared->reconciled[i].database != MyDatabaseId)
        i++;
    if (i < k_ready_slots) {
        s_shared->reconciled[i] = {MyDatabaseId, depth_relid, counting};
        if (i == s_shared->nreconciled)
            s_shared->nreconciled++;
    }
    LWLockRelease(s_counts_lock);
}

void unreconcile_at_commit()
{
    if (s_shared != nullptr)
        s_unreconcile_at_commit = true;
}

void reconciled_at_commit(Oid depth_relid, uint32 epoch)
{
    s_created_relid = depth_relid;
    s_created_epoch = epoch;
}

void settle_taken_counts(bool committed)
{
    if (OidIsValid(s_created_relid) && committed) {
        if (!s_unreconcile_at_commit)
            mark_enqueue_counts_ready(s_created_relid, s_created_epoch, false);
        pg_atomic_fetch_add_u32(&s_shared->epoch, 1);  // other backends look the table up again
    }
    s_created_relid = InvalidOid;
    if (s_unreconcile_at_commit && committed) {
        LWLockAcquire(s_counts_lock, LW_EXCLUSIVE);
        int kept = 0;
        for (int i = 0; i < s_shared->nreconciled; i++)
            if (s_shared->reconciled[i].database != MyDatabaseId)
                s_shared->reconciled[kept++] = s_shared->reconciled[i];
        s_shared->nreconciled = kept;
        pg_atomic_fetch_add_u32(&s_shared->epoch, 1);
        LWLockRelease(s_counts_lock);
    }
    s_unreconcile_at_commit = false;
    if (s_ntaken == 0)
        return;
    LWLockAcquire(s_counts_lock, LW_EXCLUSIVE);
    for (int i = 0; i < s_ntaken; i++)
        settle_note(s_taken[i], committed);
    LWLockRelease(s_counts_lock);
    s_ntaken = 0;
}

void refuse_prepare_with_count_changes()
{
    if (s_unreconcile_at_commit)
        ereport(ERROR,
                (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
                 errmsg("cannot PREPARE a transaction that loaded pgjq's tables with COPY"),
                 errdetail("The database's counters must be reconciled when the load commits.")));
    // A prepared CREATE EXTENSION is reconciled by the maintenance worker instead.
    s_created_relid = InvalidOid;
    if (s_ntaken > 0)
        ereport(ERROR,
                (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
                 errmsg("cannot PREPARE a transaction that altered or dropped queue \"%s\"", s_taken[0].queue_name),
                 errdetail("It took the queue's enqueue count out of shared memory, which a prepared transaction "
                           "cannot hold.")));
}

// A rolled-back subtransaction puts back what it (or its children) took; the other notes stay, in order.
void enqueue_counts_subtransaction_aborted(SubTransactionId sub)
{
    if (s_ntaken == 0)
        return;
    LWLockAcquire(s_counts_lock, LW_EXCLUSIVE);
    for (int i = 0; i < s_ntaken; i++)
        if (s_taken[i].sub >= sub)
            settle_note(s_taken[i], false);
    LWLockRelease(s_counts_lock);
    s_ntaken = drop_notes_of_aborted(s_taken, s_ntaken, sub, &taken_note::sub);
}

Size enqueue_counts_shmem_size()
{
    return sizeof(counts_shared);
}

void attach_enqueue_counts(void* memory, bool created, LWLockPadded* locks)
{
    s_shared = static_cast<counts_shared*>(memory);
    if (created) {
        memset(s_shared, 0, enqueue_counts_shmem_size());
        pg_atomic_init_u32(&s_shared->epoch, 0);
        for (count_slot& s : s_shared->slots) {
            pg_atomic_init_u64(&s.counted, 0);
            pg_atomic_init_u64(&s.taken, 0);
        }
    }
    s_counts_lock = &locks[0].lock;
}

const shared_region k_enqueue_counts_region = {"pgjq enqueue counts", enqueue_counts_shmem_size, one_lwlock,
                                               attach_enqueue_counts};

}  // namespace pgjq
