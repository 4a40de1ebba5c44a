// transaction_claims.hpp: which jobs the current transaction claimed with claim_in_transaction, and which
// of them it has already reported (completed or failed). A job claimed that way is held by the
// transaction's row lock alone, so nothing in the database says who holds it: this backend-local record
// is what lets complete_in_transaction and fail_in_transaction refuse a job the transaction does not hold.
// It follows subtransactions: a claim or a report made in a subtransaction that rolls back is forgotten,
// as the row lock or the row change that went with it is.
#pragma once

#include "pg/pg.hpp"

namespace pgjq {

// Records that this transaction has just locked job `id` for `worker_id`, as role `role`.
void remember_claimed_here(int64 id, const char* worker_id, Oid role);

enum class claim_here_state { not_claimed, other_worker, other_role, already_reported, held };

// What this transaction may do with job `id` as `worker_id` and `role` (which must have the privileges of
// the role that claimed it: a session may SET ROLE in between).
claim_here_state claimed_here(int64 id, const char* worker_id, Oid role);

// Marks job `id` as completed or failed by this transaction (it must be held).
void mark_reported_here(int64 id);

// The ids this transaction claimed, reported or not, as an int8[] ('{}' when none).
ArrayType* ids_claimed_here();

// The transaction hub (hooks/transaction_hub.cpp): the record ends with its transaction, and follows its
// subtransactions.
void forget_transaction_claims();
void transaction_claims_subtransaction_committed(SubTransactionId sub, SubTransactionId parent);
void transaction_claims_subtransaction_aborted(SubTransactionId sub);

}  // namespace pgjq
