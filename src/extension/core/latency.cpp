// latency.cpp: the wait and run time histograms (see latency.hpp). Shared memory holds a fixed table of
// k_latency_slots histograms, one per database and queue, found by open addressing; a slot is taken under
// the exclusive lock, and counted into under the shared lock with atomic adds, so committing transactions
// of different queues (or the same) never wait on each other. A table that is full keeps no times for new
// queues and says so in the server log, once per backend (rare: it holds k_latency_slots queues across all
// databases since the start, and slots are freed only by a restart).
#include "core/latency.hpp"

#include "pg/subtransaction_notes.hpp"

namespace pgjq {

const double k_latency_bound_seconds[k_latency_bounds] = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,  1,     2.5,
                                                          5,     10,   30,    60,   300, 900,  3600, 21600, 86400};

}  // namespace pgjq

namespace {

using namespace pgjq;

constexpr int k_latency_slots = 4096;

struct latency_slot {
    Oid database;  // InvalidOid: free
    char queue_name[k_queue_name_max + 1];
    pg_atomic_uint64 counts[2][k_latency_buckets];
    pg_atomic_uint64 sum_us[2];
};

struct latency_shared {
    latency_slot slots[k_latency_slots];
};

latency_shared* s_shared = nullptr;
LWLock* s_latency_lock = nullptr;

// What this transaction noted, by subtransaction and queue, in TopMemoryContext and reused by the next
// transaction (the end of one only sets s_count to 0).
struct noted {
    SubTransactionId sub;
    char queue_name[k_queue_name_max + 1];
    uint32 counts[2][k_latency_buckets];
    uint64 sum_us[2];
};
noted* s_noted = nullptr;
int s_count = 0;
int s_capacity = 0;
bool s_said_full = false;  // this backend has logged that the table is full

int bucket_of(double seconds)
{
    int b = 0;
    while (b < k_latency_bounds && seconds > k_latency_bound_seconds[b])
        b++;
    return b;
}

noted* noted_for(const char* queue_name)
{
    const SubTransactionId sub = GetCurrentSubTransactionId();
    for (int i = s_count - 1; i >= 0; i--)
        if (s_noted[i].sub == sub && strcmp(s_noted[i].queue_name, queue_name) == 0)
            return &s_noted[i];
    if (s_count == s_capacity) {
        int capacity = s_capacity == 0 ? 8 : s_capacity * 2;
        s_noted =
            static_cast<noted*>(s_noted == nullptr ? MemoryContextAlloc(TopMemoryContext, sizeof(noted) * capacity)
                                                   : repalloc(s_noted, sizeof(noted) * capacity));
        s_capacity = capacity;
    }
    noted* n = &s_noted[s_count++];
    memset(n, 0, sizeof *n);
    n->sub = sub;
    strlcpy(n->queue_name, queue_name, sizeof n->queue_name);
    return n;
}

void add_time(noted* n, latency_kind kind, double seconds)
{
    if (seconds < 0 || std::isnan(seconds))
        seconds = 0;  // clocks of different backends may disagree by a little
    n->counts[kind][bucket_of(seconds)]++;
    const double us = seconds * 1e6;
    const uint64 add = us >= 1.8e19 ? PG_UINT64_MAX / 2 : static_cast<uint64>(us);
    n->sum_us[kind] = add > PG_UINT64_MAX - n->sum_us[kind] ? PG_UINT64_MAX : n->sum_us[kind] + add;
}

// The slot of (database, queue); taken if `take` and free. Requires s_latency_lock (exclusive if `take`).
latency_slot* find_slot(Oid database, const char* queue_name, bool take)
{
    uint32 start = hash_bytes(reinterpret_cast<const unsigned char*>(queue_name), strlen(queue_name)) ^ database;
    for (int probe = 0; probe < k_latency_slots; probe++) {
        latency_slot* s = &s_shared->slots[(start + probe) % k_latency_slots];
        if (s->database == database && strcmp(s->queue_name, queue_name) == 0)
            return s;
        if (s->database == InvalidOid) {
            if (!take)
                return nullptr;
            strlcpy(s->queue_name, queue_name, sizeof s->queue_name);
            s->database = database;
            return s;
        }
    }
    return nullptr;
}

void add_to_slot(latency_slot* s, const noted& n)
{
    for (int k = 0; k < 2; k++) {
        for (int b = 0; b < k_latency_buckets; b++)
            if (n.counts[k][b] != 0)
                pg_atomic_fetch_add_u64(&s->counts[k][b], n.counts[k][b]);
        if (n.sum_us[k] != 0)
            pg_atomic_fetch_add_u64(&s->sum_us[k], n.sum_us[k]);
    }
}

// Adds s_noted[0 .. count) to their queues' slots, taking free slots if `create` (under the exclusive
// lock); moves those left without one to the front and returns how many they are.
int add_to_slots(int count, bool create)
{
    int missing = 0;
    for (int i = 0; i < count; i++) {
        latency_slot* s = find_slot(MyDatabaseId, s_noted[i].queue_name, create);
        if (s != nullptr)
            add_to_slot(s, s_noted[i]);
        else
            s_noted[missing++] = s_noted[i];
    }
    return missing;
}

}  // namespace

namespace pgjq {

void note_latencies(Datum queue_name, ArrayType* every_queue, ArrayType* waits, ArrayType* runs)
{
    if (s_shared == nullptr)
        return;
    Datum *wait_values, *run_values, *queue_values = nullptr;
    bool *wait_nulls, *run_nulls, *queue_nulls = nullptr;
    int n, n_runs, n_queues = 0;
    deconstruct_array(waits, FLOAT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE, &wait_values, &wait_nulls, &n);
    deconstruct_array(runs, FLOAT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE, &run_values, &run_nulls, &n_runs);
    if (every_queue != nullptr)
        deconstruct_array(every_queue, TEXTOID, -1, false, TYPALIGN_INT, &queue_values, &queue_nulls, &n_queues);
    if (n_runs != n || (every_queue != nullptr && n_queues != n))
        return;  // cannot happen: one statement aggregates them all over the same rows
    char* one_queue = every_queue == nullptr ? TextDatumGetCString(queue_name) : nullptr;
    noted* current = nullptr;
    const char* current_queue = nullptr;
    for (int i = 0; i < n; i++) {
        const char* queue = one_queue ? one_queue : TextDatumGetCString(queue_values[i]);
        if (current == nullptr || strcmp(queue, current_queue) != 0) {
            current = noted_for(queue);
            current_queue = current->queue_name;
        }
        if (!wait_nulls[i])
            add_time(current, latency_wait, DatumGetFloat8(wait_values[i]));
        if (!run_nulls[i])
            add_time(current, latency_run, DatumGetFloat8(run_values[i]));
    }
}

void publish_latencies()
{
    if (s_count == 0 || s_shared == nullptr) {
        s_count = 0;
        return;
    }
    // After commit: nothing here may fail. Taking a slot needs the exclusive lock, so first try every
    // queue under the shared one.
    LWLockAcquire(s_latency_lock, LW_SHARED);
    int missing = add_to_slots(s_count, false);
    LWLockRelease(s_latency_lock);
    if (missing > 0) {
        LWLockAcquire(s_latency_lock, LW_EXCLUSIVE);
        missing = add_to_slots(missing, true);
        LWLockRelease(s_latency_lock);
    }
    const char* untracked = missing > 0 ? s_noted[0].queue_name : nullptr;
    // LOG never raises an error, so it is safe after commit.
    if (untracked != nullptr && !s_said_full) {
        s_said_full = true;
        ereport(
            LOG,
            (errmsg("pgjq: no room to keep wait and run times for queue \"%s\"", untracked),
             errdetail("The table of latency histograms holds %d queues until the server restarts.", k_latency_slots)));
    }
    s_count = 0;
}

void forget_latencies()
{
    s_count = 0;
}

void latencies_subtransaction_aborted(SubTransactionId sub)
{
    s_count = drop_notes_of_aborted(s_noted, s_count, sub, &noted::sub);
}

Size latency_shmem_size()
{
    return sizeof(latency_shared);
}

void attach_latencies(void* memory, bool created, LWLockPadded* locks)
{
    s_shared = static_cast<latency_shared*>(memory);
    if (created) {
        memset(s_shared, 0, latency_shmem_size());
        for (latency_slot& s : s_shared->slots) {
            for (auto& kind : s.counts)
                for (pg_atomic_uint64& c : kind)
                    pg_atomic_init_u64(&c, 0);
            for (pg_atomic_uint64& sum : s.sum_us)
                pg_atomic_init_u64(&sum, 0);
        }
    }
    s_latency_lock = &locks[0].lock;
}

const shared_region k_latency_region = {"pgjq latency", latency_shmem_size, one_lwlock, attach_latencies};

latency_reading* read_latencies(int* count)
{
    *count = 0;
    if (s_shared == nullptr)
        return nullptr;
    int capacity = 128;
    latency_reading* out = static_cast<latency_reading*>(palloc(sizeof(latency_reading) * capacity));
    LWLockAcquire(s_latency_lock, LW_SHARED);
    for (const latency_slot& s : s_shared->slots) {
        if (s.database != MyDatabaseId)
            continue;
        for (int k = 0; k < 2; k++) {
            if (*count == capacity) {
                capacity *= 2;
                out = static_cast<latency_reading*>(repalloc(out, sizeof(latency_reading) * capacity));
            }
            latency_reading* r = &out[(*count)++];
            strlcpy(r->queue_name, s.queue_name, sizeof r->queue_name);
            r->kind = static_cast<latency_kind>(k);
            for (int b = 0; b < k_latency_buckets; b++)
                r->counts[b] = static_cast<int64>(pg_atomic_read_u64(const_cast<pg_atomic_uint64*>(&s.counts[k][b])));
            r->sum_seconds = static_cast<double>(pg_atomic_read_u64(const_cast<pg_atomic_uint64*>(&s.sum_us[k]))) / 1e6;
        }
    }
    LWLockRelease(s_latency_lock);
    return out;
}

}  // namespace pgjq
