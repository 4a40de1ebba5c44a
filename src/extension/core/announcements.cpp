// announcements.cpp: a transaction's announcements (see announcements.hpp). A transaction that relays keeps
// its events in TopTransactionContext, labelled with the subtransaction that made them, so that an aborted
// subtransaction drops its own; after the commit, when the jobs are visible, they are handed to the relay. A
// rolled back transaction tells nobody.
#include "core/announcements.hpp"

#include "pg/compat.hpp"
#include "pg/subtransaction_notes.hpp"

namespace {

using namespace pgjq;
using doorbell::finished_note;
using doorbell::k_queue_len;
using doorbell::queue_note;

enum class mode { undecided, relay, direct };

mode s_mode = mode::undecided;
doorbell::relay_ring* s_ring = nullptr;
queue_note* s_queues = nullptr;
int s_nqueues = 0, s_queue_cap = 0;
finished_note* s_finished = nullptr;
int s_nfinished = 0, s_finished_cap = 0;
// Rows of live_jobs replaced other than by finishing jobs (those are in s_finished). Kept when the
// subtransaction aborts: the worst that leaves is a vacuum that finds nothing.
bool s_rows_replaced = false;

void reset_transaction_state()
{
    s_mode = mode::undecided;
    s_ring = nullptr;
    s_queues = nullptr;  // memory belongs to TopTransactionContext
    s_nqueues = s_queue_cap = 0;
    s_finished = nullptr;
    s_nfinished = s_finished_cap = 0;
    s_rows_replaced = false;
}

mode transaction_mode()
{
    if (s_mode == mode::undecided) {
        s_ring = doorbell::serving_ring(MyDatabaseId);
        s_mode = s_ring ? mode::relay : mode::direct;
    }
    return s_mode;
}

template <typename T>
T* grow(T* items, int* cap)
{
    int new_cap = *cap == 0 ? 16 : *cap * 2;
    T* grown = items == nullptr ? static_cast<T*>(MemoryContextAlloc(TopTransactionContext, sizeof(T) * new_cap))
                                : static_cast<T*>(repalloc(items, sizeof(T) * new_cap));
    *cap = new_cap;
    return grown;
}

// The queues already notified directly in this (sub)transaction: Async_Notify would de-duplicate too,
// but only after building the notification; this keeps a 1000-row batch at one call.
constexpr int k_direct_remembered = 8;
LocalTransactionId s_direct_lxid = InvalidLocalTransactionId;
SubTransactionId s_direct_subxid = InvalidSubTransactionId;
int s_direct_count = 0;
char s_direct_queues[k_direct_remembered][k_queue_len];

bool direct_already_notified(const char* queue_name)
{
    LocalTransactionId lxid = compat::local_transaction_id();
    SubTransactionId subxid = GetCurrentSubTransactionId();
    if (lxid != s_direct_lxid || subxid != s_direct_subxid) {
        s_direct_lxid = lxid;
        s_direct_subxid = subxid;
        s_direct_count = 0;
    }
    for (int i = 0; i < s_direct_count; i++)
        if (strcmp(s_direct_queues[i], queue_name) == 0)
            return true;
    if (s_direct_count < k_direct_remembered)
        strlcpy(s_direct_queues[s_direct_count++], queue_name, k_queue_len);
    return false;
}

}  // namespace

namespace pgjq {

char* finished_payload(const doorbell::finished_event& e)
{
    return psprintf("{\"id\":%lld,\"queue\":\"%s\",\"status\":\"%s\"}", (long long) e.id, e.queue, e.status);
}

void refuse_prepare_with_announcements()
{
    // Like NOTIFY itself: a prepared transaction may commit in another session, after the relay could have
    // delivered anything.
    if (s_mode == mode::relay && (s_nqueues > 0 || s_nfinished > 0))
        ereport(ERROR,
                (errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
                 errmsg("cannot PREPARE a transaction that enqueued or finished pgjq jobs")));
}

void hand_over_announcements()
{
    if (s_mode == mode::relay && (s_nqueues > 0 || s_nfinished > 0 || s_rows_replaced))
        doorbell::hand_over(s_ring, {s_queues, s_nqueues, s_finished, s_nfinished, s_rows_replaced});
    else if (s_mode == mode::direct)
        doorbell::request_service(MyDatabaseId, false);  // notified itself; the launcher brings the relay back
    reset_transaction_state();
}

void forget_announcements()
{
    reset_transaction_state();
}

// A subtransaction's events become its parent's when it commits, and go when it aborts. Subtransaction ids
// grow, so an aborting one drops every event labelled with its id or a later one (its children's, already
// relabelled to it when they committed).
void announcements_subtransaction_committed(SubTransactionId subid, SubTransactionId parent)
{
    if (s_mode != mode::relay)
        return;
    for (int i = 0; i < s_nqueues; i++)
        if (s_queues[i].subid == subid)
            s_queues[i].subid = parent;
    for (int i = 0; i < s_nfinished; i++)
        if (s_finished[i].subid == subid)
            s_finished[i].subid = parent;
}

void announcements_subtransaction_aborted(SubTransactionId subid)
{
    if (s_mode != mode::relay)
        return;
    s_nqueues = drop_notes_of_aborted(s_queues, s_nqueues, subid, &queue_note::subid);
    s_nfinished = drop_notes_of_aborted(s_finished, s_nfinished, subid, &finished_note::subid);
}

void announce_new_jobs(const char* queue_name, const job_key* first)
{
    runnable_at_commit(queue_name, first);
    if (transaction_mode() == mode::direct) {
        if (!direct_already_notified(queue_name))
            Async_Notify(k_new_job_channel, queue_name);
        return;
    }
    for (int i = 0; i < s_nqueues; i++)
        if (strcmp(s_queues[i].queue, queue_name) == 0)
            return;  // recorded by this (sub)transaction or one of its still-open ancestors
    if (s_nqueues == s_queue_cap)
        s_queues = grow(s_queues, &s_queue_cap);
    s_queues[s_nqueues].subid = GetCurrentSubTransactionId();
    strlcpy(s_queues[s_nqueues].queue, queue_name, k_queue_len);
    s_nqueues++;
}

void announce_requeued_jobs(const char* queue_name)
{
    announce_new_jobs(queue_name);
    s_rows_replaced = true;
}

void note_live_rows_replaced()
{
    // Without a worker serving the database nobody is told, and a transaction that announces nothing must
    // not count as one that notified by itself (which asks the launcher for a worker at commit).
    if (s_mode == mode::undecided && doorbell::serving_ring(MyDatabaseId) == nullptr)
        return;
    if (transaction_mode() == mode::relay)
        s_rows_replaced = true;
}

void announce_finished(int64 job_id, const char* queue_name, const char* status)
{
    doorbell::finished_event e;
    e.id = job_id;
    strlcpy(e.status, status, sizeof e.status);
    strlcpy(e.queue, queue_name, sizeof e.queue);
    if (transaction_mode() == mode::direct) {
        Async_Notify(k_finished_channel, finished_payload(e));
        return;
    }
    if (s_nfinished == s_finished_cap)
        s_finished = grow(s_finished, &s_finished_cap);
    s_finished[s_nfinished].subid = GetCurrentSubTransactionId();
    s_finished[s_nfinished].event = e;
    s_nfinished++;
}

}  // namespace pgjq
