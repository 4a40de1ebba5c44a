// maintenance_worker.cpp: the per-database maintenance worker: its slot, its main loop and the error
// boundary around each duty (duty.hpp).
//
// Each round runs the duties whose time has come or whom a wake-up concerns, then the worker sleeps on its
// latch until the earliest duty's time (capped by pgjq.naptime). Backends set the latch when they commit a
// job due earlier than that (core/deadlines.hpp) or hand over notifications (notification_relay.cpp).
//
// PG-facing code only: locals are trivially destructible. An ERROR inside a duty is caught around that duty
// alone: logged, counted in its statistics, and the duty is retried after a backoff while the others go on
// (as autovacuum's launcher recovers from an error per pass, but per duty). An ERROR outside the duties
// reaches the loop's own sigsetjmp block, which cleans up and sleeps a second.
#include "maintenance/duty.hpp"
#include "maintenance/launcher.hpp"
#include "maintenance/notification_relay.hpp"
#include "pg/boundary.hpp"
#include "pg/catalog.hpp"
#include "pg/settings.hpp"

namespace {

using namespace pgjq;

constexpr int k_first_backoff_ms = 1000;
constexpr int k_max_backoff_ms = 60 * 1000;
// How long the worker stays awake after relaying notices, gathering the next commits' (see the main loop).
// Each wake-up that relays is a transaction: 200 -> 500 us took 6 % off a single enqueue's server CPU.
constexpr long k_relay_gather_us = 500;

Oid s_dboid = InvalidOid;
bool s_by_launcher = false;
uint32 s_generation = 0;
db_slot* s_slot = nullptr;
char s_datname[NAMEDATALEN];
volatile sig_atomic_t s_got_sigterm = false;
MemoryContext s_round_context = nullptr;  // reset every round
MemoryContext s_duty_context = nullptr;   // reset after every duty
bool s_relaying = false;                  // attached to the notification relay

// Each duty's schedule; the worker is the only writer, worker_status() reads the copies in the slot.
TimestampTz s_next_run[k_max_duties];
TimestampTz s_retry_at[k_max_duties];
int32 s_failures_in_row[k_max_duties];
TimestampTz s_deadline[k_max_duties];  // when each duty next has work due (duty_outcome::deadline)
TimestampTz s_last_busy = 0;           // the last round in which a duty handled anything
TimestampTz s_serving_since = 0;       // when this worker took its database's slot: its turn began
bool s_announce_everything = false;    // notifications may have been lost with another ring: say so
bool s_leaving = false;                // exiting on purpose (idle, or to let other databases be served)
char s_server_synchronous_commit[32];  // the server's synchronous_commit, which the worker overrides

// A worker whose database's next deadline is this close stays when others wait, until its turn ends
// (pgjq.maintenance_turn): leaving and coming back would cost more than serving it.
constexpr int k_urgent_ms = 250;

// SIGTERM: `die` as usual, and remember it so that a worker the postmaster would restart (one started
// by pgjq.start_worker()) stays stopped after pg_terminate_backend or DROP DATABASE ... WITH (FORCE).
void handle_sigterm(SIGNAL_ARGS)
{
    s_got_sigterm = true;
    die(postgres_signal_arg);
}

// Takes the database's slot; false if another worker serves it or it was stopped with stop_worker().
// Whether the slot's previous holder is alive is asked without the lock held (no system call under the
// shared state's lock), then the slot is taken only if it still names that same process.
bool claim_slot()
{
    worker_shared* state = worker_state();
    TimestampTz now = GetCurrentTimestamp();
    pid_t other = 0, dead = 0;
    bool disabled = false, stale = false, full = false;
    for (;;) {
        bool retry = false;
        LWLockAcquire(&state->lock, LW_EXCLUSIVE);
        db_slot* slot = find_or_add_slot(state, s_dboid);
        if (slot == nullptr) {
            full = true;
        } else if (slot->pid != 0 && slot->pid != MyProcPid && slot->pid != dead) {
            other = slot->pid;
            retry = true;
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
            slot->idle_exit = false;
            slot->requested_at = 0;  // served now: the first round runs every duty
            slot->waiting_since = 0;
            s_announce_everything = slot->relay_orphaned;
            slot->relay_orphaned = false;
            s_slot = slot;
        }
        LWLockRelease(&state->lock);
        if (!retry)
            break;
        if (process_alive(other))
            break;
        dead = other;  // its holder is gone: look again, and take the slot if it still names it
        other = 0;
    }

    if (full)
        ereport(WARNING,
                (errmsg("pgjq maintenance worker for database %u not started: all %d slots are in use", s_dboid,
                        state->nslots),
                 errhint("Raise max_worker_processes.")));
    else if (other != 0)
        ereport(DEBUG1,
                (errmsg("pgjq maintenance worker for database %u not started: process %d serves it", s_dboid,
                        static_cast<int>(other))));
    else if (disabled)
        ereport(
            DEBUG1,
            (errmsg("pgjq maintenance worker for database %u not started: stopped by pgjq.stop_worker()", s_dboid)));
    else if (stale)
        ereport(
            DEBUG1,
            (errmsg("pgjq maintenance worker for database %u not restarted: it was terminated or replaced", s_dboid)));
    return s_slot != nullptr;
}

void release_slot(int code, Datum arg)
{
    worker_shared* state = worker_state_if_attached();
    if (state == nullptr || s_slot == nullptr)
        return;
    TimestampTz now = GetCurrentTimestamp();
    LWLockAcquire(&state->lock, LW_EXCLUSIVE);
    if (s_slot->pid == MyProcPid) {
        s_slot->pid = 0;
        s_slot->latch = nullptr;
        s_slot->exited_at = now;
        s_slot->next_wake = 0;
        s_slot->idle_exit = s_leaving;
        if (s_got_sigterm && !s_by_launcher)
            s_slot->terminated_gen = s_generation;
    }
    LWLockRelease(&state->lock);
}

// An error outside the duties (the worker's own checks), for worker_status().
void record_worker_error(const char* message)
{
    worker_shared* state = worker_state_if_attached();
    if (state == nullptr || s_slot == nullptr)
        return;
    TimestampTz now = GetCurrentTimestamp();
    LWLockAcquire(&state->lock, LW_EXCLUSIVE);
    s_slot->errors++;
    s_slot->last_error_at = now;
    strlcpy(s_slot->last_error, message ? message : "unknown error", sizeof s_slot->last_error);
    LWLockRelease(&state->lock);
}

[[noreturn]] void exit_quietly(const char* why, int elevel = LOG)
{
    ereport(elevel, (errmsg("pgjq maintenance worker for database \"%s\" stops: %s", s_datname, why)));
    proc_exit(0);
}

// Exits on purpose: backends notify by themselves from the moment the ring is detached, what it already
// holds is sent, and the slot keeps the deadline for the launcher (run_round published it).
[[noreturn]] void leave(const char* why)
{
    relay_detach();
    MemoryContext caller = CurrentMemoryContext;
    PG_TRY();
    {
        (void) relay_deliver();
    }
    PG_CATCH();
    {
        // The events stay marked as taken (the ring announces everything again); the next worker sends them.
        HOLD_INTERRUPTS();
        EmitErrorReport();
        FlushErrorState();
        AbortCurrentTransaction();
        MemoryContextSwitchTo(caller);
        doorbell::request_service(s_dboid, true);
        RESUME_INTERRUPTS();
    }
    PG_END_TRY();
    s_leaving = true;
    exit_quietly(why, DEBUG1);
}

// After a package upgrade the database keeps its older SQL objects until ALTER EXTENSION pgjq UPDATE:
// say so once per database and version, not at every round nor at every start of a worker there (workers
// come and go with the database's work). The slot keeps what was said. Every duty works on every version
// since 0.1.0.
void report_older_version(const char* version)
{
    worker_shared* state = worker_state();
    LWLockAcquire(&state->lock, LW_EXCLUSIVE);
    bool said = strcmp(version, s_slot->reported_version) == 0;
    if (!said)
        strlcpy(s_slot->reported_version, version, sizeof s_slot->reported_version);
    LWLockRelease(&state->lock);
    if (!said && version_number(version) < version_number(k_library_version))
        ereport(LOG,
                (errmsg("database \"%s\" has version %s of extension pgjq, the server's pgjq library is %s", s_datname,
                        version, k_library_version),
                 errhint("Run ALTER EXTENSION pgjq UPDATE in database \"%s\" to get the features of %s.", s_datname,
                         k_library_version)));
}

// Before a round with timed duties (run_round has just checked that the worker is still wanted here): may
// it write? Exits when the extension is gone; false on a standby (nothing may be written).
bool database_ready()
{
    worker_shared* state = worker_state();
    SetCurrentStatementStartTimestamp();
    StartTransactionCommand();
    char* version = installed_version();
    bool recovering = RecoveryInProgress();
    if (version != nullptr)
        report_older_version(version);
    CommitTransactionCommand();
    MemoryContextSwitchTo(s_round_context);
    if (version == nullptr) {
        TimestampTz now = GetCurrentTimestamp();
        LWLockAcquire(&state->lock, LW_EXCLUSIVE);
        s_slot->absent_at = now;
        s_slot->absent = true;
        // Reports that brought the worker here are answered: the extension has gone since.
        s_slot->reported_due = s_slot->reported_lease_end = s_slot->reported_schedule = s_slot->requested_at = 0;
        LWLockRelease(&state->lock);
        // The launcher tries every database: where pgjq is absent this is routine, not news.
        exit_quietly("extension pgjq is not installed in this database", DEBUG1);
    }
    return !recovering;
}

int backoff_ms(int32 failures_in_row)
{
    int64 ms = k_first_backoff_ms;
    for (int32 i = 1; i < failures_in_row && ms < k_max_backoff_ms; i++)
        ms *= 2;
    return static_cast<int>(ms < k_max_backoff_ms ? ms : k_max_backoff_ms);
}

struct duty_error_context_arg {
    const char* name;
    int retry_in_ms;
};

void duty_error_context(void* arg)
{
    auto* what = static_cast<duty_error_context_arg*>(arg);
    errcontext("pgjq maintenance duty \"%s\" of database \"%s\" (retried in %d s; the other duties go on)", what->name,
               s_datname, (what->retry_in_ms + 999) / 1000);
}

void publish_duty(int i, const duty_outcome* outcome, const ErrorData* error, TimestampTz now)
{
    worker_shared* state = worker_state();
    LWLockAcquire(&state->lock, LW_EXCLUSIVE);
    duty_stats* stats = &s_slot->duties[i];
    if (error == nullptr) {
        stats->runs++;
        stats->done += outcome->done;
        stats->last_run = now;
    } else {
        stats->errors++;
        stats->last_error_at = now;
        strlcpy(stats->last_error, error->message ? error->message : "unknown error", sizeof stats->last_error);
    }
    stats->failures_in_row = s_failures_in_row[i];
    stats->next_run = s_next_run[i];
    stats->retry_at = s_retry_at[i];
    LWLockRelease(&state->lock);
}

// Runs duty i inside its own error boundary.
void run_duty(int i, maintenance_round& round)
{
    const duty* d = k_duties[i];
    duty_error_context_arg context_arg = {d->name, backoff_ms(s_failures_in_row[i] + 1)};
    ErrorContextCallback context;
    context.callback = duty_error_context;
    context.arg = &context_arg;
    MemoryContextSwitchTo(s_duty_context);
    duty_outcome outcome = {DT_NOEND, 0};
    ErrorData* volatile error = nullptr;

    PG_TRY();
    {
        context.previous = error_context_stack;
        error_context_stack = &context;
        outcome = d->run(round);
        error_context_stack = context.previous;
    }
    PG_CATCH();
    {
        // The duty's transaction (if any) is rolled back and its locks released; the error is logged with
        // the duty's name and kept for worker_status().
        HOLD_INTERRUPTS();
        disable_all_timeouts(false);
        QueryCancelPending = false;
        EmitErrorReport();
        MemoryContextSwitchTo(s_round_context);
        error = CopyErrorData();
        FlushErrorState();
        AbortCurrentTransaction();
        LWLockReleaseAll();
        MemoryContextSwitchTo(s_round_context);
        debug_query_string = nullptr;
        pgstat_report_activity(STATE_IDLE, nullptr);
        RESUME_INTERRUPTS();
    }
    PG_END_TRY();

    TimestampTz now = GetCurrentTimestamp();
    if (error == nullptr) {
        s_failures_in_row[i] = 0;
        s_next_run[i] = outcome.next_run;
        s_retry_at[i] = 0;
        s_deadline[i] = outcome.deadline;
        if (outcome.done > 0)
            s_last_busy = now;
    } else {
        s_failures_in_row[i]++;
        s_retry_at[i] = TimestampTzPlusMilliseconds(now, backoff_ms(s_failures_in_row[i]));
        if (s_next_run[i] < s_retry_at[i])
            s_next_run[i] = s_retry_at[i];
        s_deadline[i] = s_retry_at[i];  // a failing duty is work due: its retry keeps or brings a worker
    }
    publish_duty(i, &outcome, error, now);
    MemoryContextSwitchTo(s_round_context);
    MemoryContextReset(s_duty_context);
}

// One round: the duties whose time has come, or whom the wake-up concerns. Returns when to wake next.
TimestampTz run_round(maintenance_round& round)
{
    // pgjq.stop_worker(), or a DROP DATABASE that needs the worker gone, says so through the slot.
    worker_shared* state = worker_state();
    LWLockAcquire(&state->lock, LW_EXCLUSIVE);
    bool disabled = s_slot->disabled;
    LWLockRelease(&state->lock);
    if (disabled)
        exit_quietly("asked to leave (pgjq.stop_worker(), or a command on the database)");
    round.now = GetCurrentTimestamp();
    bool timed = false;
    for (int i = 0; i < k_duty_count; i++)
        timed = timed || (round.now >= s_next_run[i] && round.now >= s_retry_at[i]);
    bool writable = true;
    if (timed) {
        writable = database_ready();
        if (!s_relaying) {
            relay_attach(s_dboid, s_announce_everything);  // the extension exists here: backends relay to us
            s_relaying = true;
        }
    }

    LWLockAcquire(&state->lock, LW_EXCLUSIVE);
    s_slot->next_wake = 0;  // from here on, backends that schedule a job set the latch
    LWLockRelease(&state->lock);

    for (int i = 0; writable && i < k_duty_count; i++) {
        CHECK_FOR_INTERRUPTS();
        const duty* d = k_duties[i];
        TimestampTz now = GetCurrentTimestamp();
        if (now < s_retry_at[i])
            continue;
        if (now >= s_next_run[i] || (d->woken != nullptr && d->woken(round)))
            run_duty(i, round);
    }

    TimestampTz done = GetCurrentTimestamp();
    TimestampTz wake = writable ? naptime_from(done) : TimestampTzPlusMilliseconds(done, maintenance_naptime_ms);
    for (int i = 0; writable && i < k_duty_count; i++)
        if (s_next_run[i] < wake)
            wake = s_next_run[i];
    int deadline_duty = -1;
    TimestampTz deadline = DT_NOEND;
    for (int i = 0; writable && i < k_duty_count; i++)
        if (s_deadline[i] < deadline) {
            deadline = s_deadline[i];
            deadline_duty = i;
        }
    LWLockAcquire(&state->lock, LW_EXCLUSIVE);
    s_slot->rounds++;
    s_slot->last_run = done;
    s_slot->next_wake = wake;
    s_slot->deadline = deadline;  // kept after an exit, for the launcher
    s_slot->deadline_duty = deadline_duty;
    int waiting = state->waiting;
    LWLockRelease(&state->lock);

    // Serving in turn: a worker the launcher started leaves when nothing is due here for a while. When other
    // databases wait for a worker it leaves after this round if nothing here is urgent, and in any case once
    // it has served for pgjq.maintenance_turn: a database whose work never pauses must not keep a worker
    // from the others for good (the launcher serves the one that has waited longest). It comes back (a new
    // process) at the deadline it left, or when a transaction needs it.
    if (s_by_launcher && writable) {
        bool idle = TimestampDifferenceExceeds(s_last_busy, done, maintenance_idle_timeout_s * 1000) &&
            TimestampDifferenceExceeds(done, deadline, maintenance_idle_timeout_s * 1000);
        TimestampTz turn_ends = TimestampTzPlusMilliseconds(s_serving_since, maintenance_turn_ms);
        bool yield = waiting > 0 && (done >= turn_ends || TimestampDifferenceExceeds(done, deadline, k_urgent_ms));
        if (idle || yield)
            leave(yield ? "other databases wait for a worker" : "idle");
        if (waiting > 0 && turn_ends < wake)
            wake = turn_ends;  // to leave when the turn ends, even if nothing here wakes it
    }
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
    s_last_busy = s_serving_since = GetCurrentTimestamp();
    for (int i = 0; i < k_max_duties; i++)
        s_deadline[i] = DT_NOEND;
    before_shmem_exit(release_slot, (Datum) 0);

    BackgroundWorkerInitializeConnectionByOid(s_dboid, InvalidOid, 0);
    pgstat_report_appname("pgjq maintenance");
    // Like autovacuum: nothing the worker runs depends on a search_path (all names are qualified).
    SetConfigOption("search_path", "", PGC_SUSET, PGC_S_OVERRIDE);
    // Nothing of the worker's bookkeeping needs to wait for a flush: a recovery or prune lost in a crash
    // is redone at the next pass, and notifications are not durable anyway. What creates jobs does
    // (commit_as_enqueues_do), with the server's own setting, kept here.
    strlcpy(s_server_synchronous_commit, GetConfigOption("synchronous_commit", false, false),
            sizeof s_server_synchronous_commit);
    SetConfigOption("synchronous_commit", "off", PGC_SUSET, PGC_S_OVERRIDE);
    // As in the SQL functions: no JIT compile per pass, and the partial indexes in every plan even
    // while the statistics still describe an empty table.
    SetConfigOption("jit", "off", PGC_SUSET, PGC_S_OVERRIDE);
    SetConfigOption("enable_seqscan", "off", PGC_SUSET, PGC_S_OVERRIDE);

    StartTransactionCommand();
    char* datname = get_database_name(MyDatabaseId);
    strlcpy(s_datname, datname ? datname : "?", sizeof s_datname);
    CommitTransactionCommand();
    worker_shared* state = worker_state();
    LWLockAcquire(&state->lock, LW_EXCLUSIVE);
    strlcpy(s_slot->datname, s_datname, sizeof s_slot->datname);
    // The database's previous worker may have left a failing duty backing off: keep its backoff, so that
    // serving in turn does not retry it at every start.
    for (int i = 0; i < k_duty_count; i++) {
        s_failures_in_row[i] = s_slot->duties[i].failures_in_row;
        s_retry_at[i] = s_slot->duties[i].retry_at;
    }
    LWLockRelease(&state->lock);
    if (s_by_launcher && !database_allowed(s_datname))
        exit_quietly("the database is not listed in pgjq.databases");

    s_round_context = AllocSetContextCreate(TopMemoryContext, "pgjq maintenance round", ALLOCSET_DEFAULT_SIZES);
    s_duty_context = AllocSetContextCreate(TopMemoryContext, "pgjq maintenance duty", ALLOCSET_DEFAULT_SIZES);
    maintenance_round round = {s_dboid, s_datname, s_slot, 0, false, false};

    sigjmp_buf local_sigjmp_buf;
    if (sigsetjmp(local_sigjmp_buf, 1) != 0) {
        // An ERROR outside the duties: log it, keep it for worker_status(), clean up and carry on.
        HOLD_INTERRUPTS();
        disable_all_timeouts(false);
        QueryCancelPending = false;
        error_context_stack = nullptr;
        EmitErrorReport();
        MemoryContextSwitchTo(s_round_context);
        ErrorData* edata = CopyErrorData();
        record_worker_error(edata->message);
        AbortCurrentTransaction();
        LWLockReleaseAll();
        MemoryContextSwitchTo(s_round_context);
        FlushErrorState();
        MemoryContextReset(s_round_context);
        MemoryContextReset(s_duty_context);
        debug_query_string = nullptr;
        pgstat_report_activity(STATE_IDLE, nullptr);
        RESUME_INTERRUPTS();
        // Sleep at least a second after an error, so that a persistent one does not flood the log.
        (void) WaitLatch(MyLatch, WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, 1000L, PG_WAIT_EXTENSION);
        CHECK_FOR_INTERRUPTS();
    }
    PG_exception_stack = &local_sigjmp_buf;

    bool first_round = true;
    for (;;) {
        MemoryContextSwitchTo(s_round_context);
        MemoryContextReset(s_round_context);
        CHECK_FOR_INTERRUPTS();
        if (ConfigReloadPending) {
            ConfigReloadPending = false;
            ProcessConfigFile(PGC_SIGHUP);
            if (s_by_launcher && !database_allowed(s_datname))
                exit_quietly("the database is no longer listed in pgjq.databases");
            for (int i = 0; i < k_duty_count; i++)
                s_next_run[i] = 0;  // settings may have moved every deadline
        }
        round.relayed = false;
        TimestampTz wake = run_round(round);
        pgstat_report_activity(STATE_IDLE, nullptr);
        // While commits keep coming, gather them for a moment before sleeping: a latch set while this
        // process is awake costs the committing backend nothing, one set while it sleeps costs a signal
        // (measured: an eighth of a single enqueue's server CPU). Delivery waits at most this long more.
        if (round.relayed)
            pg_usleep(k_relay_gather_us);
        if (first_round) {
            first_round = false;
            ereport(LOG, (errmsg("pgjq maintenance worker started for database \"%s\"", s_datname)));
        }
        long timeout = TimestampDifferenceMilliseconds(GetCurrentTimestamp(), wake);
        if (timeout > 0) {
            (void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, timeout, PG_WAIT_EXTENSION);
            ResetLatch(MyLatch);
        }
    }
}

}  // namespace

namespace pgjq {

void commit_as_enqueues_do()
{
    (void) set_config_option("synchronous_commit", s_server_synchronous_commit, PGC_SUSET, PGC_S_SESSION,
                             GUC_ACTION_LOCAL, true, 0, false);
}

void begin_duty_transaction(const char* activity)
{
    SetCurrentStatementStartTimestamp();
    StartTransactionCommand();
    SPI_connect();
    PushActiveSnapshot(GetTransactionSnapshot());
    debug_query_string = activity;
    pgstat_report_activity(STATE_RUNNING, activity);
}

void commit_duty_transaction()
{
    SPI_finish();
    PopActiveSnapshot();
    CommitTransactionCommand();
    MemoryContextSwitchTo(s_duty_context);
    debug_query_string = nullptr;
    pgstat_report_stat(false);
}

// How many reports of each kind the duty concerned had seen at its last look: a report made after it (even
// one of a later time, absorbed by the earlier one still recorded) keeps the record for the next look.
static uint32 s_reports_seen[k_deadline_kinds];

TimestampTz reported_deadline(const maintenance_round& round, deadline_kind kind)
{
    int k = static_cast<int>(kind);
    worker_shared* state = worker_state();
    LWLockAcquire(&state->lock, LW_EXCLUSIVE);
    TimestampTz reported = *reported_deadline_field(round.slot, kind);
    s_reports_seen[k] = round.slot->reports[k];
    LWLockRelease(&state->lock);
    return reported;
}

void forget_reported_deadline(const maintenance_round& round, deadline_kind kind, TimestampTz reported)
{
    int k = static_cast<int>(kind);
    worker_shared* state = worker_state();
    LWLockAcquire(&state->lock, LW_EXCLUSIVE);
    TimestampTz* field = reported_deadline_field(round.slot, kind);
    if (*field == reported && round.slot->reports[k] == s_reports_seen[k])
        *field = 0;
    LWLockRelease(&state->lock);
}

void test_failure_point(const char* duty_name)
{
    if (test_failing_duty != nullptr && strcmp(test_failing_duty, duty_name) == 0)
        ereport(ERROR, (errmsg("duty \"%s\" fails because pgjq.test_failing_duty names it", duty_name)));
}

TimestampTz naptime_from(TimestampTz now)
{
    return TimestampTzPlusMilliseconds(now, maintenance_naptime_ms);
}

}  // namespace pgjq

extern "C" {

// A C++ exception must not reach the postmaster as an abort(): it would restart the whole cluster.
void pgjq_maintenance_main(Datum main_arg)
{
    pgjq::worker_entry("pgjq maintenance worker", [&] { maintenance_main(main_arg); });
}
}
