// shared_state.hpp: the maintenance workers' shared memory. One slot per database records which process
// serves it (so no two workers ever do one database's work, whoever started them: the launcher or
// pgjq.start_worker()), its latch (so backends can wake it early) and what each of its duties has done
// (pgjq.worker_status()). With preload the space is reserved at server start; without it the same struct
// is created on first use from the spare shared memory PostgreSQL keeps for add-ins, as contrib/pg_prewarm's
// autoprewarm does.
#pragma once

#include "core/doorbell.hpp"
#include "maintenance/shared_memory.hpp"
#include "pg/pg.hpp"

namespace pgjq {

constexpr int k_error_len = 256;
constexpr int k_max_duties = 12;  // room in each slot for the duties of maintenance/duties.cpp

// What one duty of one database's maintenance worker has done (maintenance/duty.hpp).
struct duty_stats {
    int64 runs;  // successful runs
    int64 done;  // what they handled: jobs recovered, notified, pruned; notices relayed; vacuums
    int64 errors;
    int32 failures_in_row;  // consecutive failed runs: the backoff doubles with each
    TimestampTz last_run;   // end of the last successful run
    TimestampTz next_run;   // when it runs next on its own (DT_NOEND: only when woken)
    TimestampTz retry_at;   // after a failure: not before this time
    TimestampTz last_error_at;
    char last_error[k_error_len];
};

struct db_slot {
    Oid dboid;         // InvalidOid: free
    pid_t pid;         // serving process, 0 when none
    Latch* latch;      // its latch, for early wake-ups
    bool disabled;     // pgjq.stop_worker(): the launcher leaves this database alone
    bool by_launcher;  // started by the launcher (obeys pgjq.databases)
    TimestampTz started_at;
    TimestampTz exited_at;           // last exit of a worker for this database
    TimestampTz absent_at;           // last time a worker found the extension missing
    bool absent;                     // the last worker exited because the extension is not installed
    TimestampTz last_run;            // end of the last round of duties
    TimestampTz next_wake;           // when the worker plans to wake next; 0 while a round runs
    TimestampTz reported_due;        // earliest due time backends reported since the last look; 0 = none
    TimestampTz reported_lease_end;  // earliest lease end claims reported since the last look; 0 = none
    TimestampTz reported_schedule;   // earliest firing schedules reported since the last look; 0 = none
    // Reports of each kind so far (deadline_kind): a duty forgets only what it saw.
    uint32 reports[k_deadline_kinds];
    // Serving in turn (launcher.cpp): what the last worker left, and what backends asked for since.
    bool idle_exit;            // the last worker left on purpose: idle, or to let other databases be served
    TimestampTz deadline;      // when work is next due here, as the last worker left it; DT_NOEND: none
    int32 deadline_duty;       // the duty (index in duties.cpp) that is due then; -1: none
    TimestampTz requested_at;  // a transaction needs a worker now (its notifications, start_worker()); 0: no
    bool relay_orphaned;       // notifications were handed to a ring nobody serves: announce everything
    TimestampTz
        waiting_since;      // due but not served: every one of pgjq.max_maintenance_workers was busy; 0: not waiting
    uint32 generation;      // bumped by each pgjq.start_worker(); older registrations exit when revived
    uint32 terminated_gen;  // generation whose worker was stopped by SIGTERM: the postmaster must not revive it
    int64 rounds;
    int64 errors;  // errors outside the duties (the worker's own checks)
    TimestampTz last_error_at;
    char last_error[k_error_len];
    duty_stats duties[k_max_duties];  // in the order of the table in maintenance/duties.cpp
    char datname[NAMEDATALEN];
    char reported_version[NAMEDATALEN];  // the older extension version last logged for this database
};

struct worker_shared {
    // Protects everything below. An LWLock, not a spinlock: lookups loop over the slots (and the launcher over
    // databases and slots). Held for loads, stores and those loops, never across a wait or a system call.
    LWLock lock;
    int lock_tranche;  // LWLockNewTrancheId(), named in each process that attaches
    pid_t launcher_pid;
    Latch* launcher_latch;
    TimestampTz launcher_started_at;
    TimestampTz launcher_last_run;
    int waiting;  // databases due but not served for want of a free worker: running workers should yield
    int nslots;
    db_slot slots[FLEXIBLE_ARRAY_MEMBER];
};

Size worker_shmem_size();
// Attaches to (creating if needed) the shared state. Raises an ERROR when there is no room.
worker_shared* worker_state();
// The shared state if this backend is already attached or preload reserved it, else nullptr; never raises.
worker_shared* worker_state_if_attached();
// worker_state(), but nullptr instead of an ERROR when there is no room.
worker_shared* worker_state_no_error();

// With the lock held: the slot's field for the reports of `kind` (reported_due, ...).
TimestampTz* reported_deadline_field(db_slot* slot, deadline_kind kind);

// With the lock held: the slot of `dboid`, or nullptr.
db_slot* find_slot(worker_shared* state, Oid dboid);
// With the lock held: the slot of `dboid`, taking a free (or the longest idle) one. nullptr if all are busy.
// `only_absent_before`: when not 0, reuse only the slots of databases found without pgjq before that time
// (the launcher, so that more databases than slots do not make it start workers in a loop); when 0, also
// the slot of a database with pgjq that nobody serves now, which loses its deadlines.
db_slot* find_or_add_slot(worker_shared* state, Oid dboid, TimestampTz only_absent_before = 0);

// When the database of `slot`, served by nobody now, next needs a worker (DT_NOEND: only when a
// transaction asks), and why (a duty's name, or what else brings the worker; nullptr with DT_NOEND). The
// launcher's rule (launcher.cpp), also shown by worker_status(). With the lock held; never raises.
// `with_requests`: count requests too (a transaction that notified by itself); without, only what must
// happen by a time (the launcher lets such databases wait without making busy workers yield).
TimestampTz next_service(const db_slot* slot, TimestampTz now, const char** reason, bool with_requests = true);

// Is a process with this pid alive? (A signal-0 kill: call it without the lock held.)
bool process_alive(pid_t pid);

// Is `datname` in pgjq.databases (always true when the setting is empty)?
bool database_allowed(const char* datname);

}  // namespace pgjq
