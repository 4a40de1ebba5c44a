// notification_relay.hpp: the maintenance worker's side of NOTIFY without serializing commits
// (core/announcements.hpp says why): a ring per served database in shared memory (reserved at server start,
// with preload), which committed transactions fill through the doorbell (core/doorbell.hpp), and the worker's
// delivery of what it holds.
#pragma once

#include "pg/pg.hpp"

namespace pgjq {

// The worker claims its database's ring once the extension is there (so that backends relay to it) and
// keeps it; its notification_relay duty (duties.cpp) sends what the ring holds.
// `announce_everything`: events may have been lost with another ring (shared_state.hpp, relay_orphaned).
void relay_attach(Oid dboid, bool announce_everything);
// A worker about to exit on purpose: backends notify by themselves from now on (and ask the launcher for a
// worker); what the ring holds is still sent by relay_deliver().
void relay_detach();
// Sends what the ring holds now, in a transaction of its own.
struct relay_delivery {
    int64 sent;          // notifications
    bool rows_replaced;  // some of the delivered transactions finished or requeued jobs (dead row versions)
};
relay_delivery relay_deliver();

}  // namespace pgjq
