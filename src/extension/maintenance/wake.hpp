// wake.hpp: waking a database's maintenance worker when a transaction commits a job due before the
// worker's planned wake-up (a delayed enqueue, a retry with backoff, a lease recovery's requeue).
#pragma once

#include "core/pg.hpp"

namespace pgjq {

// At commit of this transaction, tells this database's maintenance worker that a job falls due at `due`.
void wake_maintenance_at_commit(TimestampTz due);

// Tells the worker of `dboid` that a job falls due at `due`, and sets its latch if it planned to sleep past
// it. Never raises (it runs after the commit).
void wake_worker_for(Oid dboid, TimestampTz due);

// _PG_init: the transaction callback behind wake_maintenance_at_commit.
void register_wake_callback();

}  // namespace pgjq
