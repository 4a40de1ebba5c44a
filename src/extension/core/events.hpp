// events.hpp: named events (pgjq.signal) and the jobs parked until one arrives (wait_for_event) or until a
// time (sleep_until). A parked job is pending with run_at at its deadline: it holds no lease and no worker,
// the maintenance worker announces it when that time comes (as a retry's delay), and an event that arrives
// first makes it due at once. An event is kept until it expires, so a job that waits after the signal still
// receives it. A signal and a wait of the same queue and name take one lock (lock_event) until their
// transaction ends and look with the latest snapshot after it, so whichever comes second sees the other.
#pragma once

#include "pg/pg.hpp"

namespace pgjq {

// Takes the lock of event `event_name` of `queue_name` until the transaction ends.
void lock_event(const char* queue_name, const char* event_name);

// Records the event (unless one of that name and audience has not expired: the first payload holds) and
// wakes the jobs waiting for it: of `audience` (enqueued by that role), or every one (InvalidOid). Takes
// the event's lock. Returns how many jobs it woke. Requires an SPI connection.
int64 deliver_event(const char* queue_name, const char* event_name, Oid audience, Jsonb* payload,
                    TimestampTz expires_at, Oid signalled_by);

// Parks a held job until `until`: pending, due then, without its worker and lease, and with the attempt
// it ran not counted. Requires an SPI connection.
void park_job(int64 job_id, TimestampTz until);

}  // namespace pgjq
