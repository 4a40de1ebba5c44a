// transaction_claims.cpp: the per-transaction record of in-transaction claims (see transaction_claims.hpp).
// It lives in TopTransactionContext, so it is freed with the transaction; the callbacks below only drop the
// pointer to it and keep it in step with subtransactions.
#include "core/transaction_claims.hpp"

#include "core/lifecycle.hpp"

namespace {

using namespace pgjq;

struct claim_entry {
    int64 id;                      // hash key
    SubTransactionId claimed_in;   // the subtransaction whose row lock holds the job
    SubTransactionId reported_in;  // InvalidSubTransactionId until completed or failed here
    const char* worker_id;         // in TopTransactionContext
    Oid role;                      // the role that claimed it
};

HTAB* s_claims = nullptr;

void follow_subtransaction(bool aborted, SubTransactionId sub, SubTransactionId parent)
{
    if (s_claims == nullptr)
        return;
    HASH_SEQ_STATUS scan;
    hash_seq_init(&scan, s_claims);
    while (claim_entry* e = static_cast<claim_entry*>(hash_seq_search(&scan))) {
        if (aborted) {
            // the subtransaction's row locks and row changes are undone with it
            if (e->claimed_in == sub)
                hash_search(s_claims, &e->id, HASH_REMOVE, nullptr);
            else if (e->reported_in == sub)
                e->reported_in = InvalidSubTransactionId;
        } else {
            if (e->claimed_in == sub)
                e->claimed_in = parent;
            if (e->reported_in == sub)
                e->reported_in = parent;
        }
    }
}

claim_entry* find(int64 id)
{
    return s_claims ? static_cast<claim_entry*>(hash_search(s_claims, &id, HASH_FIND, nullptr)) : nullptr;
}

}  // namespace

namespace pgjq {

void forget_transaction_claims()
{
    s_claims = nullptr;  // the memory goes with TopTransactionContext
}

void transaction_claims_subtransaction_committed(SubTransactionId sub, SubTransactionId parent)
{
    follow_subtransaction(false, sub, parent);
}

void transaction_claims_subtransaction_aborted(SubTransactionId sub)
{
    follow_subtransaction(true, sub, InvalidSubTransactionId);
}

void remember_claimed_here(int64 id, const char* worker_id, Oid role)
{
    if (s_claims == nullptr) {
        HASHCTL ctl;
        ctl.keysize = sizeof(int64);
        ctl.entrysize = sizeof(claim_entry);
        ctl.hcxt = TopTransactionContext;
        s_claims = hash_create("pgjq claims of this transaction", 64, &ctl, HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
    }
    bool found;
    claim_entry* e = static_cast<claim_entry*>(hash_search(s_claims, &id, HASH_ENTER, &found));
    e->claimed_in = GetCurrentSubTransactionId();
    e->reported_in = InvalidSubTransactionId;
    e->worker_id = MemoryContextStrdup(TopTransactionContext, worker_id);
    e->role = role;
}

claim_here_state claimed_here(int64 id, const char* worker_id, Oid role)
{
    claim_entry* e = find(id);
    if (e == nullptr)
        return claim_here_state::not_claimed;
    if (strcmp(e->worker_id, worker_id) != 0)
        return claim_here_state::other_worker;
    if (role != e->role && !has_privs_of_role(role, e->role))
        return claim_here_state::other_role;
    if (e->reported_in != InvalidSubTransactionId)
        return claim_here_state::already_reported;
    return claim_here_state::held;
}

void mark_reported_here(int64 id)
{
    claim_entry* e = find(id);
    Assert(e != nullptr);
    if (e)
        e->reported_in = GetCurrentSubTransactionId();
}

ArrayType* ids_claimed_here()
{
    long n = s_claims ? hash_get_num_entries(s_claims) : 0;
    int64* ids = static_cast<int64*>(palloc(sizeof(int64) * (n + 1)));
    int i = 0;
    if (n > 0) {
        HASH_SEQ_STATUS scan;
        hash_seq_init(&scan, s_claims);
        while (claim_entry* e = static_cast<claim_entry*>(hash_seq_search(&scan)))
            ids[i++] = e->id;
    }
    return job_id_array(ids, i);
}

}  // namespace pgjq
