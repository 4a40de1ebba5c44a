// deadlines.hpp: telling the maintenance worker, when a transaction commits, of what it must act on before its
// planned wake-up: a job that falls due (a delayed enqueue, a retry with backoff, a job rescheduled by an
// UPDATE), a lease that ends (a claim) or a schedule's firing (pgjq.schedule). The earliest of each kind is
// kept for the transaction; after the commit, when the jobs are visible, the database's worker is told
// through the doorbell (core/doorbell.hpp). A rolled-back transaction tells nobody.
#pragma once

#include "core/doorbell.hpp"
#include "pg/pg.hpp"

namespace pgjq {

// At commit of this transaction, tells this database's maintenance worker of the deadline.
void wake_maintenance_at_commit(TimestampTz when, deadline_kind kind = deadline_kind::job_due);

// A WARNING that `what` (a schedule, a job timeout) will not take effect, when no maintenance worker serves
// this database (pgjq not preloaded, and pgjq.start_worker() not called here): only the worker acts on it.
void warn_without_maintenance(const char* what);

// The transaction hub (hooks/transaction_hub.cpp): after the commit, tells the worker of what
// wake_maintenance_at_commit noted (never raises); at any other end, forgets it.
void wake_maintenance_for_commit();
void forget_wakes();

}  // namespace pgjq
