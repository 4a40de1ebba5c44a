// maintenance_worker.cpp: the per-database maintenance worker: its main loop, one tick, pruning and
// per-tick error recovery.
//
// Each tick is one transaction: it recovers expired leases (pgjq.recover_stale(), whose requeue fires
// the pgjq_new_job trigger), notifies the queues of delayed jobs that fell due since the previous tick,
// and computes when the next deadline is: the earliest future run_at, lease expiry or prune time. The
// worker then sleeps on its latch until that deadline (capped by pgjq.naptime); backends that commit a
// job due earlier set the latch (worker_wake.cpp), so a due job is notified at its time, not at a tick.
// Pruning runs every pgjq.prune_interval in transactions of pgjq.prune_batch_size rows.
//
// PG-facing code only: locals are trivially destructible, errors are ereport'ed and caught by the
// sigsetjmp block of the main loop, which logs them, records them for pgjq.worker_status() and sleeps
// a second before the next tick (autovacuum launcher pattern).
#include "spi_plans.hpp"
#include "boundary.hpp"
#include "extension_version.hpp"
#include "live_table_vacuum.hpp"
#include "notify_relay.hpp"
#include "worker_state.hpp"


namespace {

using namespace pgjq;

constexpr int k_max_prune_batches_per_tick = 20;

SPIPlanPtr s_recover, s_due, s_next, s_prune;

const plan_text k_recover = {"SELECT pgjq.recover_stale()", 0, {}};
// Delayed jobs (the live_jobs_scheduled_idx partial index) that fell due after $1.
const plan_text k_due = {
    "SELECT queue_name, count(*) FROM pgjq.live_jobs"
    " WHERE status = 'pending' AND run_at > created_at AND run_at > $1 AND run_at <= now()"
    " GROUP BY queue_name",
    1, {TIMESTAMPTZOID}};
// Only future deadlines: an expired lease that recovery skipped (its row is locked by a worker that is
// finishing the job) must not make the worker spin; it is looked at again after pgjq.naptime.
const plan_text k_next = {
    "SELECT least((SELECT min(run_at) FROM pgjq.live_jobs"
    "               WHERE status = 'pending' AND run_at > created_at AND run_at > now()),"
    "             (SELECT min(lease_expires_at) FROM pgjq.live_jobs WHERE status <> 'pending'"
    "               AND lease_expires_at > now()))",
    0, {}};
// Any row past its queue's retention is older than the shortest retention: that bound lets the BRIN
// index on finished_at skip the recent part of the table.
const plan_text k_prune = {
    "WITH doomed AS MATERIALIZED ("
    "  SELECT f.id FROM pgjq.finished_jobs f JOIN pgjq.queues q ON q.queue_name = f.queue_name"
    "   WHERE f.finished_at < (SELECT now() - min(retention) FROM pgjq.queues)"
    "     AND f.finished_at < now() - q.retention"
    "   LIMIT $1 FOR UPDATE OF f SKIP LOCKED)"
    " DELETE FROM pgjq.finished_jobs f WHERE f.id = ANY (ARRAY(SELECT id FROM doomed))",
    1, {INT4OID}};

Oid s_dboid = InvalidOid;
bool s_relaying = false;  // attached to the notification relay
TimestampTz s_vacuum_checked = 0;  // last look at pgjq.live_jobs' dead rows
bool s_jobs_moved = false;          // notifications relayed since that look
bool s_by_launcher = false;
uint32 s_generation = 0;
db_slot* s_slot = nullptr;
char s_datname[NAMEDATALEN];
volatile sig_atomic_t s_got_sigterm = false;
MemoryContext s_tick_context = nullptr;
// Delayed jobs due after this time have not been notified yet. -infinity at start: after a restart
// every due delayed job is notified once more, which is harmless (workers find nothing or claim it).
TimestampTz s_due_bound = DT_NOBEGIN;
TimestampTz s_next_prune = 0;
bool s_first_tick = true;
char s_reported_version[NAMEDATALEN];  // the installed version last reported to the log

// SIGTERM: `die` as usual, and remember it so that a worker the postmaster would restart (one started
// by pgjq.start_worker()) stays stopped after pg_terminate_backend or DROP DATABASE ... WITH (FORCE).
void handle_sigterm(SIGNAL_ARGS)
{
    s_got_sigterm = true;
    die(postgres_signal_arg);
}

// Takes the database's slot; false if another worker serves it or it was stopped with stop_worker().
bool claim_slot()
{
    worker_shared* state = worker_state();
    TimestampTz now = GetCurrentTimestamp();
    pid_t other = 0;
    bool disabled = false, stale = false, full = false;
    SpinLockAcquire(&state->mutex);
    db_slot* slot = find_or_add_slot(state, s_dboid);
    if (slot == nullptr) {
        full = true;
    } else if (slot->pid != 0 && slot->pid != MyProcPid && kill(slot->pid, 0) == 0) {
        other = slot->pid;
    } else if (slot->disabled) {
        disabled = true;
    } else if (!s_by_launcher && (slot->generation > s_generation || slot->terminated_gen == s_generation)) {
        stale = true;  // superseded by a later start_worker(), or terminated: the postmaster revived it
    } else {
        if (!s_by_launcher)
            slot->generation = s_generation;  // after a crash the slot starts over at 0
        slot->pid = MyProcPid;
        slot->latch = MyLatch;
        slot->by_launcher = s_by_launcher;
        slot->absent = false;
        slot->started_at = now;
        slot->next_wake = 0;
        s_slot = slot;
    }
    SpinLockRelease(&state->mutex);

    if (full)
        ereport(WARNING, (errmsg("pgjq maintenance worker for database %u not started: all %d slots are in use",
                                 s_dboid, state->nslots),
                          errhint("Raise max_worker_processes.")));
    else if (other != 0)
        ereport(DEBUG1, (errmsg("pgjq maintenance worker for database %u not started: process %d serves it",
                                s_dboid, static_cast<int>(other))));
    else if (disabled)
        ereport(DEBUG1, (errmsg("pgjq maintenance worker for database %u not started: stopped by pgjq.stop_worker()",
                                s_dboid)));
    else if (stale)
        ereport(DEBUG1, (errmsg("pgjq maintenance worker for database %u not restarted: it was terminated or replaced",
                                s_dboid)));
    return s_slot != nullptr;
}

void release_slot(int code, Datum arg)
{
    worker_shared* state = worker_state_if_attached();
    if (state == nullptr || s_slot == nullptr)
        return;
    TimestampTz now = GetCurrentTimestamp();
    SpinLockAcquire(&state->mutex);
    if (s_slot->pid == MyProcPid) {
        s_slot->pid = 0;
        s_slot->latch = nullptr;
        s_slot->exited_at = now;
        s_slot->next_wake = 0;
        if (s_got_sigterm && !s_by_launcher)
            s_slot->terminated_gen = s_generation;
    }
    SpinLockRelease(&state->mutex);
}

void record_error(const char* message)
{
    worker_shared* state = worker_state_if_attached();
    if (state == nullptr || s_slot == nullptr)
        return;
    TimestampTz now = GetCurrentTimestamp();
    SpinLockAcquire(&state->mutex);
    s_slot->errors++;
    s_slot->last_error_at = now;
    strlcpy(s_slot->last_error, message ? message : "unknown error", sizeof s_slot->last_error);
    SpinLockRelease(&state->mutex);
}

[[noreturn]] void exit_quietly(const char* why, int elevel = LOG)
{
    ereport(elevel, (errmsg("pgjq maintenance worker for database \"%s\" stops: %s", s_datname, why)));
    proc_exit(0);
}

void begin_transaction(const char* activity)
{
    SetCurrentStatementStartTimestamp();
    StartTransactionCommand();
    SPI_connect();
    PushActiveSnapshot(GetTransactionSnapshot());
    debug_query_string = activity;
    pgstat_report_activity(STATE_RUNNING, activity);
}

void end_transaction()
{
    SPI_finish();
    PopActiveSnapshot();
    CommitTransactionCommand();
    MemoryContextSwitchTo(s_tick_context);
    debug_query_string = nullptr;
    pgstat_report_stat(false);
}

// Deletes finished jobs past their queue's retention, one short transaction per batch. Returns true
// if rows remain (the batch limit per tick was reached).
bool prune_pass()
{
    for (int batch = 0; batch < k_max_prune_batches_per_tick; batch++) {
        CHECK_FOR_INTERRUPTS();
        begin_transaction("pgjq maintenance: pruning finished jobs");
        Datum values[1] = {Int32GetDatum(prune_batch_size)};
        uint64 pruned = run_plan(saved_plan(&s_prune, k_prune), values, nullptr);
        end_transaction();
        SpinLockAcquire(&worker_state()->mutex);
        s_slot->pruned += static_cast<int64>(pruned);
        SpinLockRelease(&worker_state()->mutex);
        if (pruned < static_cast<uint64>(prune_batch_size))
            return false;
    }
    return true;
}

// After a package upgrade the database keeps its older SQL objects until ALTER EXTENSION pgjq UPDATE:
// say so once per version seen, not at every tick. Everything the worker runs works on every version
// since 0.1.0.
void report_older_version(const char* version)
{
    if (strcmp(version, s_reported_version) == 0)
        return;
    strlcpy(s_reported_version, version, sizeof s_reported_version);
    if (version_number(version) < version_number(k_library_version))
        ereport(LOG, (errmsg("database \"%s\" has version %s of extension pgjq, the server's pgjq library is %s",
                             s_datname, version, k_library_version),
                      errhint("Run ALTER EXTENSION pgjq UPDATE in database \"%s\" to get the features of %s.",
                              s_datname, k_library_version)));
}

// Has a backend reported a job due before the planned wake-up since the last tick?
bool due_reported()
{
    worker_shared* state = worker_state();
    SpinLockAcquire(&state->mutex);
    bool reported = s_slot->reported_due != 0;
    SpinLockRelease(&state->mutex);
    return reported;
}

// One pass; returns when the worker should wake next.
TimestampTz run_tick()
{
    worker_shared* state = worker_state();
    SpinLockAcquire(&state->mutex);
    s_slot->next_wake = 0;  // from here on, backends that schedule a job set the latch
    TimestampTz reported = s_slot->reported_due;
    s_slot->reported_due = 0;
    bool disabled = s_slot->disabled;
    SpinLockRelease(&state->mutex);
    if (disabled)
        exit_quietly("stopped by pgjq.stop_worker()");

    TimestampTz lower = s_due_bound;
    if (reported != 0 && reported - 1 < lower)
        lower = reported - 1;

    begin_transaction("pgjq maintenance: recovering expired leases, notifying due jobs");
    char* version = installed_version();
    if (version == nullptr) {
        end_transaction();
        TimestampTz now = GetCurrentTimestamp();
        SpinLockAcquire(&state->mutex);
        s_slot->absent_at = now;
        s_slot->absent = true;
        SpinLockRelease(&state->mutex);
        // The launcher tries every database: where pgjq is absent this is routine, not news.
        exit_quietly("extension pgjq is not installed in this database", DEBUG1);
    }

    if (RecoveryInProgress()) {
        end_transaction();
        return TimestampTzPlusMilliseconds(GetCurrentTimestamp(), worker_naptime_ms);
    }
    report_older_version(version);
    TimestampTz tick_time = GetCurrentTransactionStartTimestamp();  // now() of the statements below

    run_plan(saved_plan(&s_recover, k_recover), nullptr, nullptr);
    bool isnull, found;
    Datum value = first_value(&isnull, &found);
    int64 recovered = (found && !isnull) ? DatumGetInt32(value) : 0;

    Datum due_args[1] = {TimestampTzGetDatum(lower)};
    uint64 queues = run_plan(saved_plan(&s_due, k_due), due_args, nullptr);
    int64 notified = 0;
    for (uint64 i = 0; i < queues; i++) {
        HeapTuple row = SPI_tuptable->vals[i];
        char* queue_name = SPI_getvalue(row, SPI_tuptable->tupdesc, 1);
        bool count_null;
        notified += DatumGetInt64(SPI_getbinval(row, SPI_tuptable->tupdesc, 2, &count_null));
        if (queue_name != nullptr)
            Async_Notify(k_new_job_channel, queue_name);
    }

    run_plan(saved_plan(&s_next, k_next), nullptr, nullptr);
    value = first_value(&isnull, &found);
    TimestampTz next_deadline = (found && !isnull) ? DatumGetTimestampTz(value) : DT_NOEND;
    end_transaction();  // the notifications go out at this commit
    s_due_bound = tick_time;
    if (s_first_tick) {
        s_first_tick = false;
        ereport(LOG, (errmsg("pgjq maintenance worker started for database \"%s\"", s_datname)));
    }

    bool more_to_prune = false;
    if (tick_time >= s_next_prune) {
        more_to_prune = prune_pass();
        s_next_prune = more_to_prune ? tick_time : TimestampTzPlusMilliseconds(tick_time, prune_interval_s * 1000L);
    }

    TimestampTz now = GetCurrentTimestamp();
    TimestampTz wake = TimestampTzPlusMilliseconds(now, worker_naptime_ms);
    if (next_deadline < wake)
        wake = next_deadline;
    if (s_next_prune < wake)
        wake = s_next_prune;
    SpinLockAcquire(&state->mutex);
    s_slot->ticks++;
    s_slot->recovered += recovered;
    s_slot->notified += notified;
    s_slot->last_run = now;
    s_slot->next_wake = wake;
    SpinLockRelease(&state->mutex);
    return wake;
}

void maintenance_main(Datum main_arg)
{
    s_dboid = DatumGetObjectId(main_arg);
    s_by_launcher = MyBgworkerEntry->bgw_extra[0] != 0;
    memcpy(&s_generation, MyBgworkerEntry->bgw_extra + sizeof(uint32), sizeof s_generation);
    pqsignal(SIGHUP, SignalHandlerForConfigReload);
    pqsignal(SIGTERM, handle_sigterm);
    BackgroundWorkerUnblockSignals();

    if (!claim_slot())
        proc_exit(0);
    before_shmem_exit(release_slot, (Datum) 0);

    BackgroundWorkerInitializeConnectionByOid(s_dboid, InvalidOid, 0);
    pgstat_report_appname("pgjq maintenance");
    // Like autovacuum: nothing the worker runs depends on a search_path (all names are qualified).
    SetConfigOption("search_path", "", PGC_SUSET, PGC_S_OVERRIDE);
    // Nothing the worker commits needs to wait for a flush: a recovery or prune lost in a crash is
    // redone at the next pass, and notifications are not durable anyway.
    SetConfigOption("synchronous_commit", "off", PGC_SUSET, PGC_S_OVERRIDE);
    // As in the SQL functions: no JIT compile per pass, and the partial indexes in every plan even
    // while the statistics still describe an empty table.
    SetConfigOption("jit", "off", PGC_SUSET, PGC_S_OVERRIDE);
    SetConfigOption("enable_seqscan", "off", PGC_SUSET, PGC_S_OVERRIDE);

    StartTransactionCommand();
    char* datname = get_database_name(MyDatabaseId);
    strlcpy(s_datname, datname ? datname : "?", sizeof s_datname);
    CommitTransactionCommand();
    SpinLockAcquire(&worker_state()->mutex);
    strlcpy(s_slot->datname, s_datname, sizeof s_slot->datname);
    SpinLockRelease(&worker_state()->mutex);
    if (s_by_launcher && !database_allowed(s_datname))
        exit_quietly("the database is not listed in pgjq.databases");

    s_tick_context = AllocSetContextCreate(TopMemoryContext, "pgjq maintenance tick", ALLOCSET_DEFAULT_SIZES);

    sigjmp_buf local_sigjmp_buf;
    if (sigsetjmp(local_sigjmp_buf, 1) != 0) {
        // An ERROR in a tick: log it, keep it for worker_status(), clean up and carry on.
        HOLD_INTERRUPTS();
        error_context_stack = nullptr;
        EmitErrorReport();
        MemoryContextSwitchTo(s_tick_context);
        ErrorData* edata = CopyErrorData();
        record_error(edata->message);
        AbortCurrentTransaction();
        MemoryContextSwitchTo(s_tick_context);
        FlushErrorState();
        MemoryContextReset(s_tick_context);
        debug_query_string = nullptr;
        pgstat_report_activity(STATE_IDLE, nullptr);
        RESUME_INTERRUPTS();
        // Sleep at least a second after an error, so that a persistent one does not flood the log.
        (void) WaitLatch(MyLatch, WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, 1000L, PG_WAIT_EXTENSION);
        CHECK_FOR_INTERRUPTS();
    }
    PG_exception_stack = &local_sigjmp_buf;

    TimestampTz wake = 0;  // the first tick runs at once
    for (;;) {
        MemoryContextSwitchTo(s_tick_context);
        MemoryContextReset(s_tick_context);
        CHECK_FOR_INTERRUPTS();
        if (ConfigReloadPending) {
            ConfigReloadPending = false;
            ProcessConfigFile(PGC_SIGHUP);
            if (s_by_launcher && !database_allowed(s_datname))
                exit_quietly("the database is no longer listed in pgjq.databases");
            wake = 0;
        }
        // A wake-up for relayed notifications alone does not run a tick: a tick runs when its time has
        // come or a backend reported a job due before it.
        if (GetCurrentTimestamp() >= wake || due_reported()) {
            wake = run_tick();
            pgstat_report_activity(STATE_IDLE, nullptr);
            if (!s_relaying) {
                relay_attach(s_dboid);  // the extension exists here: from now on backends relay to us
                s_relaying = true;
            }
        }
        // A busy queue wakes the worker at every commit (relay): the relayed notifications say that
        // jobs moved, and so that pgjq.live_jobs has new dead rows.
        if (relay_deliver() > 0)
            s_jobs_moved = true;
        if (s_relaying &&
            TimestampDifferenceExceeds(s_vacuum_checked, GetCurrentTimestamp(), k_live_jobs_vacuum_interval_ms)) {
            s_vacuum_checked = GetCurrentTimestamp();
            vacuum_live_jobs_if_needed(s_jobs_moved);
            s_jobs_moved = false;
        }
        long timeout = TimestampDifferenceMilliseconds(GetCurrentTimestamp(), wake);
        if (timeout > 0) {
            (void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, timeout, PG_WAIT_EXTENSION);
            ResetLatch(MyLatch);
        }
    }
}

} // namespace

extern "C" {

// A C++ exception must not reach the postmaster as an abort(): it would restart the whole cluster.
void pgjq_maintenance_main(Datum main_arg)
{
    pgjq::worker_entry("pgjq maintenance worker", [&] { maintenance_main(main_arg); });
}

}
