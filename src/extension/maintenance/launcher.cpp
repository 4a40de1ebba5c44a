// launcher.cpp: registering workers, and the launcher that starts one maintenance worker per database.
//
// With shared_preload_libraries = 'pgjq' the postmaster starts the launcher. It connects to no database
// (it reads only the shared catalog pg_database), and every pgjq.launcher_naptime, or when one of its
// workers exits, starts a maintenance worker for each database that allows connections, is not a
// template and is listed in pgjq.databases (all when empty) unless that database already has one. A
// worker exits at once where the extension is not installed; the launcher then leaves that database
// alone for pgjq.launcher_naptime. Workers it starts are never restarted by the postmaster: the launcher
// restarts them itself, after pgjq.restart_delay, and only while their database still exists.
#include "maintenance/launcher.hpp"

#include "core/boundary.hpp"
#include "core/settings.hpp"
#include "maintenance/shared_state.hpp"

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
    SpinLockAcquire(&state->mutex);
    if (state->launcher_pid == MyProcPid) {
        state->launcher_pid = 0;
        state->launcher_latch = nullptr;
    }
    SpinLockRelease(&state->mutex);
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

// Starts the workers that are missing; returns the time of the next pass.
TimestampTz launcher_pass(worker_shared* state, MemoryContext pass_context)
{
    int count;
    database_entry* dbs = list_databases(&count, pass_context);
    MemoryContextSwitchTo(pass_context);  // the commit left us in TopMemoryContext
    TimestampTz now = GetCurrentTimestamp();
    TimestampTz next = TimestampTzPlusMilliseconds(now, launcher_naptime_s * 1000L);

    // Forget handles of workers that exited, so their databases can be served again.
    for (int i = 0; i < s_nlaunched; i++) {
        pid_t pid;
        if (s_launched[i].dboid != InvalidOid && GetBackgroundWorkerPid(s_launched[i].handle, &pid) == BGWH_STOPPED) {
            pfree(s_launched[i].handle);
            s_launched[i].dboid = InvalidOid;
            s_launched[i].handle = nullptr;
        }
    }

    for (int i = 0; i < count; i++) {
        Oid dboid = dbs[i].oid;
        launched* entry = launched_entry(dboid);
        if (entry != nullptr && entry->dboid == dboid)
            continue;  // starting or running
        bool busy, disabled, absent;
        TimestampTz exited_at, absent_at;
        SpinLockAcquire(&state->mutex);
        db_slot* slot = find_slot(state, dboid);
        busy = slot != nullptr && slot->pid != 0;
        disabled = slot != nullptr && slot->disabled;
        absent = slot != nullptr && slot->absent;
        exited_at = slot != nullptr ? slot->exited_at : 0;
        absent_at = slot != nullptr ? slot->absent_at : 0;
        SpinLockRelease(&state->mutex);
        if (busy || disabled)
            continue;
        // Where the extension was missing, look again after pgjq.launcher_naptime; after any other
        // exit (an error, pg_terminate_backend) restart after pgjq.restart_delay.
        TimestampTz not_before = 0;
        if (absent)
            not_before = TimestampTzPlusMilliseconds(absent_at, launcher_naptime_s * 1000L);
        else if (exited_at != 0)
            not_before = TimestampTzPlusMilliseconds(exited_at, restart_delay_s * 1000L);
        if (now < not_before) {
            if (not_before < next)
                next = not_before;
            continue;
        }
        if (entry == nullptr) {
            ereport(WARNING,
                    (errmsg("pgjq launcher cannot track more than %d maintenance workers", s_nlaunched),
                     errhint("Raise max_worker_processes.")));
            break;
        }
        // The handle is the launcher's for as long as the worker lives: keep it out of pass_context.
        BackgroundWorkerHandle* handle = nullptr;
        MemoryContext caller = MemoryContextSwitchTo(TopMemoryContext);
        bool started = launch_maintenance_worker(dboid, NameStr(dbs[i].name), true, 0, MyProcPid, &handle);
        MemoryContextSwitchTo(caller);
        if (!started) {
            ereport(
                WARNING,
                (errmsg("pgjq launcher could not start a maintenance worker for database \"%s\"", NameStr(dbs[i].name)),
                 errhint("Raise max_worker_processes.")));
            TimestampTz retry = TimestampTzPlusMilliseconds(now, restart_delay_s * 1000L);
            if (retry < next)
                next = retry;
            break;
        }
        entry->dboid = dboid;
        entry->handle = handle;
    }
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
    // Another launcher (of a previous postmaster generation) may still be alive: ask without the mutex
    // held, then take over only if the record still names the same process.
    pid_t other = 0, dead = 0;
    for (;;) {
        SpinLockAcquire(&state->mutex);
        pid_t recorded = state->launcher_pid;
        bool taken = recorded == 0 || recorded == MyProcPid || recorded == dead;
        if (taken) {
            state->launcher_pid = MyProcPid;
            state->launcher_latch = MyLatch;
            state->launcher_started_at = now;
        }
        SpinLockRelease(&state->mutex);
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
        SpinLockAcquire(&state->mutex);
        state->launcher_last_run = done;
        SpinLockRelease(&state->mutex);
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
