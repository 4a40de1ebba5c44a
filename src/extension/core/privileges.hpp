// privileges.hpp: who may do what.
//
// From 0.2.0 on a capability is a row of pgjq.grants: a role, one of producer, worker, admin and observer,
// and a queue (or NULL: every queue). The API functions are executable by every role; each checks here
// first, then acts as the extension's owner (the tables are granted to nobody). Being data, capabilities
// survive dump and restore, and the functions a later version adds serve their holders without a GRANT. A
// role holds the capabilities of the roles it has the privileges of (membership with INHERIT, as for
// PostgreSQL's own privileges); a superuser and the extension's owner hold every capability.
//
// A database still at 0.1.0 keeps the model it was created with: its functions are SECURITY DEFINER and
// PostgreSQL checked EXECUTE before the call, so nothing is checked here and no role is recorded.
#pragma once

#include "pg/pg.hpp"

namespace pgjq {

enum capability : uint8 {
    cap_producer = 1,  // enqueue; cancel and read the jobs its role enqueued
    cap_worker = 2,    // claim, and report on the jobs its role claimed
    cap_admin = 4,     // queues, retry, recovery, pruning; cancel and read every job
    cap_observer = 8,  // read every job and statistic; change nothing
};

// One call of an API function, from its start to its return.
struct api_call {
    Oid caller;       // current_user when the function was called: the role recorded on jobs
    bool privileged;  // a superuser or the extension's owner (and every call in a database at 0.1.0)
    Oid saved_user;
    int saved_security_context;
    bool switched;
};

// Records the caller and acts as the extension's owner from here on. Needs a transaction.
api_call begin_api_call();
// What `call` may do as `role` instead of its caller: the identity checked and recorded for work done on
// that role's behalf (the steps a worker adds to another role's workflow). Switches nothing.
api_call on_behalf_of(const api_call& call, Oid role);
// Acts as the caller again. (An ERROR restores the caller with the (sub)transaction's abort.)
void end_api_call(const api_call& call);

// The capability of that name ("producer", "worker", "admin", "observer"), or 0 for none.
uint8 capability_named(const char* name);

// Does the caller hold one of `caps` for `queue_name`?
bool holds(const api_call& call, uint8 caps, const char* queue_name);
// Refuses the call (42501, naming the role, the capability and the queue, with the grant to ask for)
// unless the caller holds `cap` for `queue_name`.
void require(const api_call& call, capability cap, const char* queue_name);
// The same for at least one queue: what every function checks first, before it reads its arguments.
void require_some(const api_call& call, uint8 caps);
// The same for every queue (a grant without a queue): for what concerns the whole database.
void require_every(const api_call& call, uint8 caps);

// What a role may read through pgjq.jobs and pgjq.queue_stats: a queue's jobs and statistics if it holds
// any capability there; a job's payload and result only as its queue's worker, admin or observer, or as
// the producer whose role enqueued it (jobs of 0.1.0, which did not record it, are read by the queue's
// producers as before).
bool may_read_queue(Oid role, const char* queue_name);
bool may_read_job(Oid role, const char* queue_name, Oid enqueued_by);

// The invalidation hub (hooks/invalidation_hub.cpp): forget the grants when pgjq.grants changes.
void grants_relation_invalidated(Oid relid);

}  // namespace pgjq
