// claim_floor.cpp: the queues' claim floors in shared memory, and what this transaction will do to them
// when it ends (see claim_floor.hpp).
//
// A slot per (database, queue, job types claimed), found by hashing the database and the queue and probing
// the next few slots, so that a commit finds every floor of its queue there. Taking a slot (the first claim
// of a queue for a set of types, or a slot that has had no floor for a minute going to another) happens
// under one LWLock, so that no floor has two slots; everything else reads and writes one slot under its
// spinlock.
#include "core/claim_floor.hpp"

#include "pg/catalog.hpp"

#include "pg/limits.hpp"

namespace {

using namespace pgjq;

constexpr int k_floor_slots = 1024;
constexpr int k_probes = 8;
constexpr int64 k_floor_lifetime_us = 1000 * 1000;
constexpr int64 k_idle_slot_us = 60 * 1000 * 1000;

struct floor_slot {
    slock_t mutex;
    Oid database;  // InvalidOid: free
    char queue_name[k_queue_name_max + 1];
    uint64 types;  // the claims' job_types (job_types_key)
    uint64 epoch;  // counts the reports of runnable jobs (and the slot's takings)
    bool valid;
    job_key key;
    TimestampTz set_at;      // when a claim that read from the start set the floor: it lapses a second later
    TimestampTz touched_at;  // the slot's last use: after a minute without, another floor may take it
};

floor_slot* s_slots = nullptr;
LWLock* s_take_lock = nullptr;

bool precedes(const job_key& a, const job_key& b)
{
    return a.priority > b.priority || (a.priority == b.priority && a.id < b.id);
}

bool of_queue(const floor_slot* s, const char* queue_name)
{
    return s->database == MyDatabaseId && strcmp(s->queue_name, queue_name) == 0;
}

bool held_by(const floor_slot* s, const char* queue_name, uint64 types)
{
    return of_queue(s, queue_name) && s->types == types;
}

int home_of(const char* queue_name)
{
    uint32 h = hash_bytes(reinterpret_cast<const unsigned char*>(queue_name), static_cast<int>(strlen(queue_name)));
    return static_cast<int>(hash_combine(h, MyDatabaseId) % k_floor_slots);
}

// The slot of the queue's floor for `types`, or -1; with `free_slot`, the first slot it could take.
int find_slot(const char* queue_name, uint64 types, TimestampTz now, int* free_slot)
{
    const int home = home_of(queue_name);
    if (free_slot != nullptr)
        *free_slot = -1;
    for (int i = 0; i < k_probes; i++) {
        const int at = (home + i) % k_floor_slots;
        floor_slot* s = &s_slots[at];
        SpinLockAcquire(&s->mutex);
        const bool mine = held_by(s, queue_name, types);
        const bool free = s->database == InvalidOid || now - s->touched_at > k_idle_slot_us;
        SpinLockRelease(&s->mutex);
        if (mine)
            return at;
        if (free && free_slot != nullptr && *free_slot < 0)
            *free_slot = at;
    }
    return -1;
}

int find_or_take_slot(const char* queue_name, uint64 types, TimestampTz now)
{
    int free_slot;
    int at = find_slot(queue_name, types, now, &free_slot);
    if (at >= 0 || free_slot < 0)
        return at;
    LWLockAcquire(s_take_lock, LW_EXCLUSIVE);
    at = find_slot(queue_name, types, now, &free_slot);
    if (at < 0 && free_slot >= 0) {
        floor_slot* s = &s_slots[free_slot];
        SpinLockAcquire(&s->mutex);
        s->database = MyDatabaseId;
        strlcpy(s->queue_name, queue_name, sizeof s->queue_name);
        s->types = types;
        s->epoch++;
        s->valid = false;
        s->touched_at = now;
        SpinLockRelease(&s->mutex);
        at = free_slot;
    }
    LWLockRelease(s_take_lock);
    return at;
}

// This transaction's notes, applied when it ends. Few queues per transaction: linear lookups, arrays kept
// in TopMemoryContext from one transaction to the next.
struct runnable_note {
    char queue_name[k_queue_name_max + 1];
    bool key_known;
    job_key first;
};
struct claimed_note {
    char queue_name[k_queue_name_max + 1];
};

template <typename T>
struct notes {
    T* items = nullptr;
    int count = 0;
    int capacity = 0;

    T* find(const char* queue_name)
    {
        for (int i = 0; i < count; i++)
            if (strcmp(items[i].queue_name, queue_name) == 0)
                return &items[i];
        return nullptr;
    }
    T* add(const char* queue_name)
    {
        if (count == capacity) {
            capacity = capacity == 0 ? 8 : capacity * 2;
            items = static_cast<T*>(items ? repalloc(items, sizeof(T) * capacity)
                                          : MemoryContextAlloc(TopMemoryContext, sizeof(T) * capacity));
        }
        T* note = &items[count++];
        strlcpy(note->queue_name, queue_name, sizeof note->queue_name);
        return note;
    }
};

notes<runnable_note> s_runnable;
notes<claimed_note> s_claimed;

// Jobs of the queue are runnable again from `first` on in claim order (nullptr: from anywhere): each of the
// queue's floors (one per set of job types claimed) moves back to it, or is dropped, and the claims that
// read one before now may not set it.
void runnable_again(const char* queue_name, const job_key* first)
{
    const int home = home_of(queue_name);
    for (int i = 0; i < k_probes; i++) {
        floor_slot* s = &s_slots[(home + i) % k_floor_slots];
        SpinLockAcquire(&s->mutex);
        if (of_queue(s, queue_name)) {
            s->epoch++;
            if (first == nullptr)
                s->valid = false;
            else if (s->valid && precedes(*first, s->key))
                s->key = *first;
        }
        SpinLockRelease(&s->mutex);
    }
}

void drop_floor(const char* queue_name)
{
    runnable_again(queue_name, nullptr);
}

void drop_claimed_floors()
{
    for (int i = 0; i < s_claimed.count; i++)
        drop_floor(s_claimed.items[i].queue_name);
}

void forget_notes()
{
    s_runnable.count = 0;
    s_claimed.count = 0;
}

}  // namespace

namespace pgjq {

uint64 job_types_key(ArrayType* job_types)
{
    if (job_types == nullptr)
        return 0;
    Datum* names;
    bool* nulls;
    int count;
    deconstruct_array(job_types, TEXTOID, -1, false, TYPALIGN_INT, &names, &nulls, &count);
    // A sum: the same types in another order claim the same jobs.
    uint64 key = static_cast<uint64>(count);
    for (int i = 0; i < count; i++) {
        text* name = DatumGetTextPP(names[i]);
        key += hash_bytes_extended(reinterpret_cast<const unsigned char*>(VARDATA_ANY(name)),
                                   static_cast<int>(VARSIZE_ANY_EXHDR(name)), 0);
    }
    return key == 0 ? 1 : key;  // 0 is any type's
}

claim_floor read_claim_floor(const char* queue_name, uint64 types)
{
    const TimestampTz now = GetCurrentTimestamp();
    claim_floor seen = {-1, types, 0, false, {0, 0}, now};
    // A database at 0.1.0 claims from the start: its claim statements have no form that starts at a floor.
    if (s_slots == nullptr || database_at_0_1_0())
        return seen;
    seen.slot = find_or_take_slot(queue_name, types, now);
    if (seen.slot < 0)
        return seen;
    floor_slot* s = &s_slots[seen.slot];
    SpinLockAcquire(&s->mutex);
    if (held_by(s, queue_name, types)) {
        s->touched_at = now;
        seen.epoch = s->epoch;
        seen.valid = s->valid && now - s->set_at <= k_floor_lifetime_us;
        seen.key = s->key;
    } else {
        seen.slot = -1;
    }
    SpinLockRelease(&s->mutex);
    return seen;
}

void advance_claim_floor(const char* queue_name, const claim_floor& seen, const job_key& last_taken,
                         bool read_from_start)
{
    if (seen.slot < 0)
        return;
    floor_slot* s = &s_slots[seen.slot];
    SpinLockAcquire(&s->mutex);
    if (held_by(s, queue_name, seen.types) && s->epoch == seen.epoch) {
        if (read_from_start || !s->valid || precedes(s->key, last_taken))
            s->key = last_taken;
        s->valid = true;
        if (read_from_start)
            s->set_at = seen.read_at;
    }
    SpinLockRelease(&s->mutex);
}

void runnable_at_commit(const char* queue_name, const job_key* first)
{
    if (s_slots == nullptr)
        return;
    runnable_note* note = s_runnable.find(queue_name);
    if (note == nullptr) {
        note = s_runnable.add(queue_name);
        note->key_known = first != nullptr;
        if (first != nullptr)
            note->first = *first;
        return;
    }
    if (first == nullptr)
        note->key_known = false;
    else if (note->key_known && precedes(*first, note->first))
        note->first = *first;
}

void claimed_in_transaction(const char* queue_name)
{
    if (s_slots != nullptr && s_claimed.find(queue_name) == nullptr)
        s_claimed.add(queue_name);
}

void apply_floor_notes_at_commit()
{
    if (s_slots != nullptr)
        for (int i = 0; i < s_runnable.count; i++)
            runnable_again(s_runnable.items[i].queue_name,
                           s_runnable.items[i].key_known ? &s_runnable.items[i].first : nullptr);
    forget_notes();
}

void apply_floor_notes_at_abort()
{
    if (s_slots != nullptr)
        drop_claimed_floors();
    forget_notes();
}

void apply_floor_notes_at_prepare()
{
    // The prepared transaction ends elsewhere, later: its jobs are runnable (or pending again) only then.
    if (s_slots != nullptr) {
        drop_claimed_floors();
        for (int i = 0; i < s_runnable.count; i++)
            drop_floor(s_runnable.items[i].queue_name);
    }
    forget_notes();
}

Size claim_floors_size()
{
    return sizeof(floor_slot) * k_floor_slots;
}

void attach_claim_floors(void* memory, bool created, LWLockPadded* locks)
{
    s_slots = static_cast<floor_slot*>(memory);
    if (created) {
        memset(s_slots, 0, claim_floors_size());
        for (int i = 0; i < k_floor_slots; i++)
            SpinLockInit(&s_slots[i].mutex);
    }
    s_take_lock = &locks[0].lock;
}

const shared_region k_claim_floors_region = {"pgjq claim floors", claim_floors_size, one_lwlock, attach_claim_floors};

// A savepoint rolled back: the jobs claimed in it are pending again at once (for other sessions too), so
// the floors of every queue this transaction claimed from are dropped now.
void claim_floors_subtransaction_aborted()
{
    if (s_slots != nullptr)
        drop_claimed_floors();
}

}  // namespace pgjq
