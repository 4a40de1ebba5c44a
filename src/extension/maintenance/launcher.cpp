// launcher.cpp: registering workers, and the launcher that serves every database with at most
// pgjq.max_maintenance_workers maintenance workers.
//
// With shared_preload_libraries = 'pgjq' the postmaster starts the launcher. It connects to no database
// (it reads only the shared catalog pg_database). A database (one that allows connections, is not a
// template and is listed in pgjq.databases, all when empty) needs a worker only while it has work: the
// launcher starts one when the database's time comes and exits it when its work is done, much as
// autovacuum serves databases in turn. Its time comes
// - at once when the launcher has never seen it since the server started (to learn its deadlines);
// - at the deadline its last worker left in its slot (a lease that ends, a job that falls due, finished
//   jobs to prune, a failing duty's retry), or earlier when a committing transaction reports an earlier
//   one (core/deadlines.hpp) or has notifications that no worker relays (notification_relay.cpp);
// - pgjq.restart_delay after a worker exited with an error or was terminated;
// - pgjq.launcher_naptime after a worker found the extension missing.
// Databases whose time has come are started most urgent first (a waiting one by when it began to wait) while
// fewer than pgjq.max_maintenance_workers run; the others wait, and running workers leave after their round
// unless their own work is urgent, and in any case after pgjq.maintenance_turn. A worker
// leaves by itself after pgjq.maintenance_idle_timeout without work. Workers it starts are never restarted by
// the postmaster: the launcher restarts them itself, and only while their database still exists. The
// launcher wakes when one of its workers exits (bgw_notify_pid), when a backend reports a deadline earlier
// than the one it planned for, and at the earliest planned time.
#include "maintenance/launcher.hpp"

#include "maintenance/shared_state.hpp"
#include "pg/boundary.hpp"
#include "pg/settings.hpp"

namespace pgjq {

bool launch_maintenance_worker(Oid dboid, const char* datname, bool by_launcher, uint32 generation, pid_t notify_pid,
                               BackgroundWorkerHandle** handle)
{
    BackgroundWorker worker;
    memset(&worker, 0, sizeof worker);
    worker.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
    worker.bgw_start_time = BgWorkerStart_RecoveryFinished;
    // Started by pgjq.start_worker(), the postmaster restarts it after a crash; the launcher restarts its own.
    worker.bgw_restart_time = by_launcher ? BGW_NEVER_RESTART : restart_delay_s;
    strlcpy(worker.bgw_library_name, "pgjq", sizeof worker.bgw_library_name);
    strlcpy(worker.bgw_function_name, "pgjq_maintenance_main", sizeof worker.bgw_function_name);
    snprintf(worker.bgw_name, sizeof worker.bgw_name, "pgjq maintenance worker for database %s", datname);
    strlcpy(worker.bgw_type, "pgjq maintenance", sizeof worker.bgw_type);
    worker.bgw_main_arg = ObjectIdGetDatum(dboid);
    worker.bgw_extra[0] = by_launcher ? 1 : 0;
    memcpy(worker.bgw_extra + sizeof(uint32), &generation, sizeof generation);
    worker.bgw_notify_pid = notify_pid;
    return RegisterDynamicBackgroundWorker(&worker, handle);
}

void register_launcher()
{
    BackgroundWorker worker;
    memset(&worker, 0, sizeof worker);
    worker.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
    worker.bgw_start_time = BgWorkerStart_RecoveryFinished;
    worker.bgw_restart_time = restart_delay_s;
    strlcpy(worker.bgw_library_name, "pgjq", sizeof worker.bgw_library_name);
    strlcpy(worker.bgw_function_name, "pgjq_launcher_main", sizeof worker.bgw_function_name);
    strlcpy(worker.bgw_name, "pgjq launcher", sizeof worker.bgw_name);
    strlcpy(worker.bgw_type, "pgjq launcher", sizeof worker.bgw_type);
    RegisterBackgroundWorker(&worker);
}

}  // namespace pgjq

namespace {

using namespace pgjq;

struct database_entry {
    Oid oid;
    NameData name;
};

struct launched {
    Oid dboid;
    BackgroundWorkerHandle* handle;
};

launched* s_launched = nullptr;  // the launcher's handles, one per slot, in TopMemoryContext
int s_nlaunched = 0;

void clear_launcher(int code, Datum arg)
{
    worker_shared* state = worker_state_if_attached();
    if (state == nullptr)
        return;
    LWLockAcquire(&state->lock, LW_EXCLUSIVE);
    if (state->launcher_pid == MyProcPid) {
        state->launcher_pid = 0;
        state->launcher_latch = nullptr;
    }
    LWLockRelease(&state->lock);
}

// The databases a worker may serve, read from the shared catalog (as autovacuum's get_database_list).
database_entry* list_databases(int* count, MemoryContext into)
{
    StartTransactionCommand();
    (void) GetTransactionSnapshot();
    Relation rel = table_open(DatabaseRelationId, AccessShareLock);
    TableScanDesc scan = table_beginscan_catalog(rel, 0, nullptr);
    int capacity = 16, n = 0;
    auto* entries = static_cast<database_entry*>(MemoryContextAlloc(into, capacity * sizeof(database_entry)));
    HeapTuple tuple;
    while (HeapTupleIsValid(tuple = heap_getnext(scan, ForwardScanDirection))) {
        auto* db = reinterpret_cast<Form_pg_database>(GETSTRUCT(tuple));
        if (!db->datallowconn || db->datistemplate || database_is_invalid_form(db))
            continue;
        if (!database_allowed(NameStr(db->datname)))
            continue;
        if (n == capacity) {
            capacity *= 2;
            entries = static_cast<database_entry*>(repalloc(entries, capacity * sizeof(database_entry)));
        }
        entries[n].oid = db->oid;
        entries[n].name = db->datname;
        n++;
    }
    table_endscan(scan);
    table_close(rel, AccessShareLock);
    CommitTransactionCommand();
    *count = n;
    return entries;
}

launched* launched_entry(Oid dboid)
{
    launched* free_entry = nullptr;
    for (int i = 0; i < s_nlaunched; i++) {
        if (s_launched[i].dboid == dboid)
            return &s_launched[i];
        if (free_entry == nullptr && s_launched[i].dboid == InvalidOid)
            free_entry = &s_launched[i];
    }
    return free_entry;
}

struct candidate {
    int db;  // index in the pass's database list
    TimestampTz due;
    bool requested_only;   // due only because a transaction asked (it notified by itself meanwhile)
    TimestampTz must_run;  // when something must happen there by a time (a lease ends, a job or schedule falls due)
};

int by_urgency(const void* a, const void* b)
{
    TimestampTz x = static_cast<const candidate*>(a)->due, y = static_cast<const candidate*>(b)->due;
    return x < y ? -1 : (x > y ? 1 : 0);
}

TimestampTz s_warned_at = 0;  // the last "could not start" warning: at most one per pgjq.launcher_naptime

// Starts workers for the databases whose time has come, most urgent first, while fewer than
// pgjq.max_maintenance_workers run; returns the time of the next pass.
TimestampTz launcher_pass(worker_shared* state, MemoryContext pass_context)
{
    int count;
    database_entry* dbs = list_databases(&count, pass_context);
    MemoryContextSwitchTo(pass_context);  // the commit left us in TopMemoryContext
    TimestampTz now = GetCurrentTimestamp();
    TimestampTz next = TimestampTzPlusMilliseconds(now, launcher_naptime_s * 1000L);

    // Forget handles of workers that exited, so their databases can be served again.
    int running = 0;
    for (int i = 0; i < s_nlaunched; i++) {
        pid_t pid;
        if (s_launched[i].dboid != InvalidOid && GetBackgroundWorkerPid(s_launched[i].handle, &pid) == BGWH_STOPPED) {
            pfree(s_launched[i].handle);
            s_launched[i].dboid = InvalidOid;
            s_launched[i].handle = nullptr;
        }
        if (s_launched[i].dboid != InvalidOid)
            running++;
    }

    auto* candidates = static_cast<candidate*>(palloc(sizeof(candidate) * (count > 0 ? count : 1)));
    int ncandidates = 0;
    bool untracked = false;
    TimestampTz absent_before = TimestampTzPlusMilliseconds(now, -launcher_naptime_s * 1000L);
    LWLockAcquire(&state->lock, LW_EXCLUSIVE);
    // Workers of a previous launcher (one that crashed or was terminated) count too: this one has no handle.
    int serving = 0;
    for (int i = 0; i < state->nslots; i++)
        if (state->slots[i].pid != 0 && state->slots[i].by_launcher)
            serving++;
    if (serving > running)
        running = serving;
    for (int i = 0; i < count; i++) {
        launched* entry = launched_entry(dbs[i].oid);
        if (entry != nullptr && entry->dboid == dbs[i].oid)
            continue;  // starting or running
        db_slot* slot = find_or_add_slot(state, dbs[i].oid, absent_before);
        if (slot == nullptr) {
            untracked = true;
            continue;
        }
        if (slot->pid != 0 || slot->disabled)
            continue;
        TimestampTz due = next_service(slot, now, nullptr);
        TimestampTz must_run = next_service(slot, now, nullptr, false);
        bool requested_only = due <= now && must_run > now && !slot->relay_orphaned;
        // A database that waits for a worker ranks by when it began to wait: a busy database whose worker
        // has just left is due again at once, and must not go before it.
        if (due != DT_NOEND && slot->waiting_since != 0 && slot->waiting_since < due)
            due = slot->waiting_since;
        if (due != DT_NOEND)
            candidates[ncandidates++] = {i, due, requested_only, must_run};
    }
    LWLockRelease(&state->lock);
    if (untracked)
        ereport(DEBUG1, (errmsg("pgjq launcher: more databases than pgjq.max_databases; some wait for a slot")));
    qsort(candidates, ncandidates, sizeof(candidate), by_urgency);

    int free_workers = max_maintenance_workers - running;
    int waiting = 0;
    Oid* waiting_oids = static_cast<Oid*>(palloc(sizeof(Oid) * (ncandidates > 0 ? ncandidates : 1)));
    bool registration_failed = false;
    for (int c = 0; c < ncandidates; c++) {
        const database_entry* db = &dbs[candidates[c].db];
        if (candidates[c].due > now) {
            if (candidates[c].due < next)
                next = candidates[c].due;
            continue;
        }
        launched* entry = launched_entry(db->oid);
        if (free_workers <= 0 || registration_failed || entry == nullptr) {
            // A database whose transactions notify by themselves loses only the relay's batching: it takes
            // a free worker, but makes none leave (which would churn processes between busy databases)
            // until what must happen there by a time falls due: the next pass is planned for then.
            if (!candidates[c].requested_only)
                waiting_oids[waiting++] = db->oid;
            else if (candidates[c].must_run < next)
                next = candidates[c].must_run;
            continue;
        }
        // The handle is the launcher's for as long as the worker lives: keep it out of pass_context.
        BackgroundWorkerHandle* handle = nullptr;
        MemoryContext caller = MemoryContextSwitchTo(TopMemoryContext);
        bool started = launch_maintenance_worker(db->oid, NameStr(db->name), true, 0, MyProcPid, &handle);
        MemoryContextSwitchTo(caller);
        if (!started) {
            // Every background worker slot is taken (parallel query, other extensions): try again after
            // pgjq.restart_delay, and say so once per pgjq.launcher_naptime, not once per attempt.
            registration_failed = true;
            if (!candidates[c].requested_only)
                waiting_oids[waiting++] = db->oid;
            TimestampTz retry = TimestampTzPlusMilliseconds(now, restart_delay_s * 1000L);
            if (retry < next)
                next = retry;
            bool warn = TimestampDifferenceExceeds(s_warned_at, now, launcher_naptime_s * 1000);
            if (warn)
                s_warned_at = now;
            ereport(warn ? WARNING : DEBUG1,
                    (errmsg("pgjq launcher could not start a maintenance worker for database \"%s\": no free "
                            "background worker slot",
                            NameStr(db->name)),
                     errdetail("Databases waiting for a maintenance worker are served as slots free up; this is "
                               "logged at most once per pgjq.launcher_naptime."),
                     errhint("Raise max_worker_processes, or lower pgjq.max_maintenance_workers.")));
            continue;
        }
        entry->dboid = db->oid;
        entry->handle = handle;
        free_workers--;
    }

    // Databases that wait: worker_status() shows since when, and the running workers yield after their
    // current round (maintenance_worker.cpp) unless their own work is urgent.
    Latch* latches[64];
    int nlatches = 0;
    LWLockAcquire(&state->lock, LW_EXCLUSIVE);
    state->waiting = waiting;
    for (int i = 0; i < state->nslots; i++) {
        db_slot* slot = &state->slots[i];
        if (slot->dboid == InvalidOid)
            continue;
        bool is_waiting = false;
        for (int w = 0; w < waiting && !is_waiting; w++)
            is_waiting = waiting_oids[w] == slot->dboid;
        if (!is_waiting)
            slot->waiting_since = 0;
        else if (slot->waiting_since == 0)
            slot->waiting_since = now;
        if (waiting > 0 && slot->pid != 0 && slot->by_launcher && slot->latch != nullptr && nlatches < 64)
            latches[nlatches++] = slot->latch;
    }
    LWLockRelease(&state->lock);
    for (int i = 0; i < nlatches; i++)
        SetLatch(latches[i]);
    return next;
}

void launcher_main()
{
    pqsignal(SIGHUP, SignalHandlerForConfigReload);
    pqsignal(SIGTERM, die);
    BackgroundWorkerUnblockSignals();
    // No database: only the shared catalogs are readable, which is all the launcher needs.
    BackgroundWorkerInitializeConnection(nullptr, nullptr, 0);
    pgstat_report_appname("pgjq launcher");

    worker_shared* state = worker_state();
    TimestampTz now = GetCurrentTimestamp();
    // Another launcher (of a previous postmaster generation) may still be alive: ask without the lock
    // held, then take over only if the record still names the same process.
    pid_t other = 0, dead = 0;
    for (;;) {
        LWLockAcquire(&state->lock, LW_EXCLUSIVE);
        pid_t recorded = state->launcher_pid;
        bool taken = recorded == 0 || recorded == MyProcPid || recorded == dead;
        if (taken) {
            state->launcher_pid = MyProcPid;
            state->launcher_latch = MyLatch;
            state->launcher_started_at = now;
        }
        LWLockRelease(&state->lock);
        if (taken)
            break;
        if (process_alive(recorded)) {
            other = recorded;
            break;
        }
        dead = recorded;  // take its place if nobody else did meanwhile
    }
    if (other != 0) {
        ereport(LOG, (errmsg("pgjq launcher not started: process %d is the launcher", static_cast<int>(other))));
        proc_exit(0);
    }
    before_shmem_exit(clear_launcher, (Datum) 0);

    s_nlaunched = state->nslots;
    s_launched = static_cast<launched*>(MemoryContextAllocZero(TopMemoryContext, sizeof(launched) * s_nlaunched));
    MemoryContext pass_context = AllocSetContextCreate(TopMemoryContext, "pgjq launcher pass", ALLOCSET_DEFAULT_SIZES);
    ereport(LOG, (errmsg("pgjq launcher started")));

    for (;;) {
        CHECK_FOR_INTERRUPTS();
        if (ConfigReloadPending) {
            ConfigReloadPending = false;
            ProcessConfigFile(PGC_SIGHUP);
        }
        MemoryContextSwitchTo(pass_context);
        MemoryContextReset(pass_context);
        pgstat_report_activity(STATE_RUNNING, "pgjq launcher: starting maintenance workers");
        TimestampTz next = launcher_pass(state, pass_context);
        pgstat_report_activity(STATE_IDLE, nullptr);
        TimestampTz done = GetCurrentTimestamp();
        LWLockAcquire(&state->lock, LW_EXCLUSIVE);
        state->launcher_last_run = done;
        LWLockRelease(&state->lock);
        long timeout = TimestampDifferenceMilliseconds(done, next);
        if (timeout > 0) {
            // Our workers' starts and exits set the latch (bgw_notify_pid), so an exit is noticed at once.
            (void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, timeout, PG_WAIT_EXTENSION);
            ResetLatch(MyLatch);
        }
    }
}

}  // namespace

extern "C" {

void pgjq_launcher_main(Datum main_arg)
{
    pgjq::worker_entry("pgjq launcher", [&] { launcher_main(); });
}
}
