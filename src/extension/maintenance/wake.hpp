// wake.hpp: waking a database's maintenance worker when a transaction commits something the worker must
// act on before its planned wake-up: a job that falls due (a delayed enqueue, a retry with backoff, a lease
// recovery's requeue), a lease that ends (a claim) or a schedule's firing (pgjq.schedule).
#pragma once

#include "pg/pg.hpp"

namespace pgjq {

enum class deadline_kind { job_due, lease_ends, schedule_due };
constexpr int k_deadline_kinds = 3;

// At commit of this transaction, tells this database's maintenance worker of the deadline.
void wake_maintenance_at_commit(TimestampTz when, deadline_kind kind = deadline_kind::job_due);

// Tells the worker of `dboid` of a deadline, and sets its latch if it planned to sleep past it. Never raises
// (it runs after the commit).
void wake_worker_for(Oid dboid, TimestampTz when, deadline_kind kind);

// The transaction hub (hooks/transaction_hub.cpp): after the commit, tells the worker of what
// wake_maintenance_at_commit noted; at any other end, forgets it.
void wake_maintenance_for_commit();
void forget_wakes();

}  // namespace pgjq
