// worker_state.hpp: the maintenance workers' shared state, GUCs and entry points.
//
// One slot per database in shared memory records which process serves it (so no two workers ever do
// one database's work, whoever started them: the launcher or pgjq.start_worker()), its latch (so
// backends can wake it early) and what it has done (pgjq.worker_status()). With preload the space is
// reserved at server start; without it the same struct is created on first use from the spare shared
// memory PostgreSQL keeps for add-ins, as contrib/pg_prewarm's autoprewarm does.
#pragma once

#include "pg.hpp"


namespace pgjq {

// GUCs (module.cpp defines them; the README's background-worker section documents them).
extern int worker_naptime_ms;        // pgjq.naptime: longest sleep of a database worker
extern int launcher_naptime_s;       // pgjq.launcher_naptime: how often the launcher rescans databases
extern int prune_interval_s;         // pgjq.prune_interval: how often finished jobs are pruned
extern int prune_batch_size;         // pgjq.prune_batch_size: rows deleted per prune transaction
extern int restart_delay_s;          // pgjq.restart_delay: delay before a failed worker is started again
extern char* worker_databases;       // pgjq.databases: databases the launcher serves ("" = all)
extern bool worker_preloaded;        // loaded through shared_preload_libraries

constexpr int k_error_len = 256;

enum class worker_role : int32 { maintenance = 0, launcher = 1 };

struct db_slot {
    Oid dboid;                  // InvalidOid: free
    pid_t pid;                  // serving process, 0 when none
    Latch* latch;               // its latch, for early wake-ups
    bool disabled;              // pgjq.stop_worker(): the launcher leaves this database alone
    bool by_launcher;           // started by the launcher (obeys pgjq.databases)
    TimestampTz started_at;
    TimestampTz exited_at;      // last exit of a worker for this database
    TimestampTz absent_at;      // last time a worker found the extension missing
    bool absent;                // the last worker exited because the extension is not installed
    TimestampTz last_run;       // end of the last successful tick
    TimestampTz next_wake;      // when the worker plans to wake next; 0 while a tick runs
    TimestampTz reported_due;   // earliest due time backends reported since the last tick; 0 = none
    uint32 generation;          // bumped by each pgjq.start_worker(); older registrations exit when revived
    uint32 terminated_gen;      // generation whose worker was stopped by SIGTERM: the postmaster must not revive it
    int64 ticks;
    int64 recovered;            // jobs whose lease expired and were requeued or failed
    int64 notified;             // delayed jobs whose queue was notified when they fell due
    int64 pruned;               // finished jobs deleted past their queue's retention
    int64 errors;
    TimestampTz last_error_at;
    char last_error[k_error_len];
    char datname[NAMEDATALEN];
};

struct worker_shared {
    slock_t mutex;              // protects everything below; held only for a few loads and stores
    pid_t launcher_pid;
    Latch* launcher_latch;
    TimestampTz launcher_started_at;
    TimestampTz launcher_last_run;
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
void worker_shmem_startup();

// With the mutex held: the slot of `dboid`, or nullptr.
db_slot* find_slot(worker_shared* state, Oid dboid);
// With the mutex held: the slot of `dboid`, taking a free (or the longest idle) one. nullptr if all are busy.
db_slot* find_or_add_slot(worker_shared* state, Oid dboid);

// Registers a dynamic maintenance worker for `dboid`. Returns false when no worker slot is free.
// `generation` is 0 for the launcher's workers, the slot's generation for pgjq.start_worker()'s.
bool launch_maintenance_worker(Oid dboid, const char* datname, bool by_launcher, uint32 generation,
                               pid_t notify_pid, BackgroundWorkerHandle** handle);
// Registers the launcher at server start (preload only).
void register_launcher();

// Is `datname` in pgjq.databases (always true when the GUC is empty)?
bool database_allowed(const char* datname);

// Backends call this at commit when they scheduled a job due at `due`: wakes the database's worker
// if it planned to sleep past it.
void wake_worker_for(Oid dboid, TimestampTz due);
void register_wake_callback();
// At commit, tells this database's maintenance worker that a delayed job falls due at `due`.
void wake_maintenance_at_commit(TimestampTz due);

} // namespace pgjq

extern "C" {
PGDLLEXPORT void pgjq_maintenance_main(Datum main_arg);
PGDLLEXPORT void pgjq_launcher_main(Datum main_arg);
}
