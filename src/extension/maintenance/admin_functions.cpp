// admin_functions.cpp: pgjq.worker_status(), pgjq.maintenance_duties(), pgjq.start_worker() and
// pgjq.stop_worker(), the maintenance side's own SQL functions: they read and change its shared state.
#include "core/api_function.hpp"
#include "maintenance/duty.hpp"
#include "maintenance/launcher.hpp"

namespace {

using namespace pgjq;

constexpr long k_wait_ms = 10000;  // how long start/stop wait for the worker to come or go

// A datname as the SQL type name.
Datum name_datum(const char* name)
{
    NameData* value = static_cast<NameData*>(palloc0(sizeof(NameData)));
    namestrcpy(value, name);
    return NameGetDatum(value);
}

// One duty's count, or 0 when there is no duty of that name.
int64 duty_done(const db_slot* s, const char* name)
{
    int i = duty_index(name);
    return i < 0 ? 0 : s->duties[i].done;
}

// The slot's errors, its own and its duties', with the latest message (prefixed with the duty's name).
int64 slot_errors(const db_slot* s, const char** last_error, TimestampTz* last_error_at)
{
    int64 errors = s->errors;
    *last_error = s->last_error[0] ? s->last_error : nullptr;
    *last_error_at = s->last_error_at;
    for (int i = 0; i < k_duty_count; i++) {
        const duty_stats* d = &s->duties[i];
        errors += d->errors;
        if (d->last_error[0] && d->last_error_at >= *last_error_at) {
            *last_error = psprintf("%s: %s", k_duties[i]->name, d->last_error);
            *last_error_at = d->last_error_at;
        }
    }
    return errors;
}

// What a database's row says about its service (0.2.0's columns state, waiting_since, wake_reason).
const char* service_state(const db_slot* s)
{
    if (s->disabled)
        return "stopped";
    if (s->pid != 0)
        return "running";
    if (s->waiting_since != 0)
        return "waiting";  // due, but every one of pgjq.max_maintenance_workers is busy
    if (!s->idle_exit && s->exited_at != 0)
        return "restarting";  // the worker exited with an error or was terminated
    return "idle";            // nothing to do until next_wake, or until a transaction needs a worker
}

// The row of the launcher (s == nullptr) or of one database. A database at 0.1.0 declares the first 13
// columns only; tuplestore_putvalues reads as many as the caller's result type has.
void append_status_row(ReturnSetInfo* rsinfo, const char* type, pid_t pid, const char* datname, const db_slot* s,
                       TimestampTz started_at, TimestampTz last_run, TimestampTz now)
{
    Datum values[16];
    bool nulls[16];
    memset(nulls, 0, sizeof nulls);
    values[0] = CStringGetTextDatum(type);
    values[1] = Int32GetDatum(static_cast<int32>(pid));
    nulls[1] = pid == 0;
    nulls[2] = datname == nullptr;
    values[2] = datname ? name_datum(datname) : (Datum) 0;
    values[3] = TimestampTzGetDatum(started_at);
    nulls[3] = started_at == 0;
    values[4] = TimestampTzGetDatum(last_run);
    nulls[4] = last_run == 0;
    bool has_slot = s != nullptr;
    // Served: when the worker wakes next. Not served: when the launcher plans to start one.
    const char* wake_reason = nullptr;
    TimestampTz next_wake = 0;
    if (has_slot && pid != 0)
        next_wake = s->next_wake;
    else if (has_slot && !s->disabled) {
        next_wake = next_service(s, now, &wake_reason);
        if (next_wake == DT_NOEND)
            next_wake = 0;
    }
    values[5] = TimestampTzGetDatum(next_wake);
    nulls[5] = next_wake == 0;
    const char* last_error = nullptr;
    TimestampTz last_error_at = 0;
    values[6] = Int64GetDatum(has_slot ? duty_done(s, "lease_recovery") : 0);
    values[7] = Int64GetDatum(has_slot ? duty_done(s, "due_jobs") : 0);
    values[8] = Int64GetDatum(has_slot ? duty_done(s, "prune") : 0);
    values[9] = Int64GetDatum(has_slot ? slot_errors(s, &last_error, &last_error_at) : 0);
    nulls[6] = nulls[7] = nulls[8] = nulls[9] = !has_slot;
    values[10] = last_error ? CStringGetTextDatum(last_error) : (Datum) 0;
    nulls[10] = last_error == nullptr;
    values[11] = TimestampTzGetDatum(last_error_at);
    nulls[11] = last_error_at == 0;
    values[12] = BoolGetDatum(has_slot && s->disabled);
    values[13] = has_slot ? CStringGetTextDatum(service_state(s)) : CStringGetTextDatum(pid != 0 ? "running" : "idle");
    values[14] = has_slot ? TimestampTzGetDatum(s->waiting_since) : (Datum) 0;
    nulls[14] = !has_slot || s->waiting_since == 0;
    values[15] = wake_reason ? CStringGetTextDatum(wake_reason) : (Datum) 0;
    nulls[15] = wake_reason == nullptr;
    tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
}

// Waits until the database's slot is served by a process (want_running) or by none; returns its pid.
pid_t wait_for_slot(worker_shared* state, bool want_running, pid_t old_pid, BackgroundWorkerHandle* handle)
{
    TimestampTz give_up = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), k_wait_ms);
    for (;;) {
        LWLockAcquire(&state->lock, LW_EXCLUSIVE);
        db_slot* slot = find_slot(state, MyDatabaseId);
        pid_t pid = slot != nullptr ? slot->pid : 0;
        LWLockRelease(&state->lock);
        if (want_running ? pid != 0 : pid != old_pid)
            return pid;
        pid_t started;
        if (want_running && handle != nullptr && GetBackgroundWorkerPid(handle, &started) == BGWH_STOPPED) {
            // Exited without taking the slot, unless another worker took it meanwhile (checked above).
            return 0;
        }
        if (GetCurrentTimestamp() >= give_up)
            return want_running ? 0 : pid;
        (void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, 20L, PG_WAIT_EXTENSION);
        ResetLatch(MyLatch);
        CHECK_FOR_INTERRUPTS();
    }
}

// The slots of the databases pgjq knows that the caller may see, copied out (nothing is built under the
// lock). One slot per hold: committing transactions take the same lock to wake a worker, and must not wait
// behind a copy of every slot. The other databases of the server, their names and errors included, are
// shown only to roles with pg_read_all_stats, as pg_stat_activity shows other sessions' details.
db_slot* copy_used_slots(worker_shared* state, const api_call& call, int* count)
{
    bool every_database = has_privs_of_role(call.caller, ROLE_PG_READ_ALL_STATS);
    int n = state->nslots;
    auto* copy = static_cast<db_slot*>(palloc(sizeof(db_slot) * (n + 1)));
    *count = 0;
    for (int i = 0; i < n; i++) {
        LWLockAcquire(&state->lock, LW_EXCLUSIVE);
        Oid dboid = state->slots[i].dboid;
        bool used = dboid != InvalidOid && (every_database || dboid == MyDatabaseId);
        if (used)
            memcpy(&copy[*count], &state->slots[i], sizeof(db_slot));
        LWLockRelease(&state->lock);
        if (used)
            (*count)++;
    }
    return copy;
}

// The start of a listing of the maintenance state: the caller may see it (admin or observer of every queue)
// and the result set is ready. The shared state, or nullptr (no preload, nothing started yet): an empty one.
worker_shared* begin_listing(FunctionCallInfo fcinfo, const api_call& call, ReturnSetInfo** rsinfo)
{
    require_every(call, cap_admin | cap_observer);
    InitMaterializedSRF(fcinfo, 0);
    *rsinfo = reinterpret_cast<ReturnSetInfo*>(fcinfo->resultinfo);
    return worker_state_no_error();
}

}  // namespace

PGJQ_API_FUNCTION(worker_status)
{
    ReturnSetInfo* rsinfo;
    worker_shared* state = begin_listing(fcinfo, call, &rsinfo);
    if (state == nullptr)
        return (Datum) 0;
    LWLockAcquire(&state->lock, LW_EXCLUSIVE);
    pid_t launcher_pid = state->launcher_pid;
    TimestampTz launcher_started = state->launcher_started_at;
    TimestampTz launcher_last = state->launcher_last_run;
    LWLockRelease(&state->lock);
    int n;
    db_slot* copy = copy_used_slots(state, call, &n);

    TimestampTz now = GetCurrentTimestamp();
    if (launcher_pid != 0)
        append_status_row(rsinfo, "launcher", launcher_pid, nullptr, nullptr, launcher_started, launcher_last, now);
    for (int i = 0; i < n; i++) {
        const db_slot* s = &copy[i];
        // Databases served now or before (absent-only slots are the launcher's bookkeeping).
        const char* ignored_error;
        TimestampTz ignored_at;
        if (s->pid == 0 && s->rounds == 0 && slot_errors(s, &ignored_error, &ignored_at) == 0 && !s->disabled)
            continue;
        append_status_row(rsinfo, "maintenance", s->pid, s->datname[0] ? s->datname : nullptr, s, s->started_at,
                          s->last_run, now);
    }
    return (Datum) 0;
}

// One row per database and duty, in the order the duties run: each duty's own counters (the table of
// duties in maintenance/duties.cpp is the one list; a new duty shows here without any change).
PGJQ_API_FUNCTION(maintenance_duties)
{
    ReturnSetInfo* rsinfo;
    worker_shared* state = begin_listing(fcinfo, call, &rsinfo);
    if (state == nullptr)
        return (Datum) 0;
    int n;
    db_slot* copy = copy_used_slots(state, call, &n);
    for (int i = 0; i < n; i++) {
        const db_slot* s = &copy[i];
        if (s->datname[0] == '\0')
            continue;  // the launcher's bookkeeping of a database no worker has served yet
        for (int d = 0; d < k_duty_count; d++) {
            const duty_stats* stats = &s->duties[d];
            Datum values[11];
            bool nulls[11];
            memset(nulls, 0, sizeof nulls);
            values[0] = name_datum(s->datname);
            values[1] = CStringGetTextDatum(k_duties[d]->name);
            values[2] = Int64GetDatum(stats->runs);
            values[3] = Int64GetDatum(stats->done);
            values[4] = Int64GetDatum(stats->errors);
            values[5] = Int32GetDatum(stats->failures_in_row);
            values[6] = TimestampTzGetDatum(stats->last_run);
            nulls[6] = stats->last_run == 0;
            values[7] = TimestampTzGetDatum(stats->next_run);
            nulls[7] = stats->next_run == 0 || stats->next_run == DT_NOEND;
            values[8] = TimestampTzGetDatum(stats->retry_at);
            nulls[8] = stats->retry_at == 0;
            values[9] = stats->last_error[0] ? CStringGetTextDatum(stats->last_error) : (Datum) 0;
            nulls[9] = stats->last_error[0] == '\0';
            values[10] = TimestampTzGetDatum(stats->last_error_at);
            nulls[10] = stats->last_error_at == 0;
            tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
        }
    }
    return (Datum) 0;
}

PGJQ_API_FUNCTION(start_worker)
{
    require_every(call, cap_admin);
    if (RecoveryInProgress())
        ereport(ERROR,
                (errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
                 errmsg("cannot start the pgjq maintenance worker during recovery")));
    worker_shared* state = worker_state();
    bool full = false;
    pid_t running = 0;
    LWLockAcquire(&state->lock, LW_EXCLUSIVE);
    db_slot* slot = find_or_add_slot(state, MyDatabaseId);
    if (slot == nullptr)
        full = true;
    else
        running = slot->pid;
    LWLockRelease(&state->lock);
    if (full)
        ereport(ERROR,
                (errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
                 errmsg("no free pgjq worker slot for database \"%s\"", get_database_name(MyDatabaseId)),
                 errhint("Raise max_worker_processes.")));
    // Asked without the lock held: no system call under it.
    bool alive = process_alive(running);
    uint32 generation = 0;
    LWLockAcquire(&state->lock, LW_EXCLUSIVE);
    slot = find_or_add_slot(state, MyDatabaseId);
    if (slot != nullptr) {
        slot->disabled = false;
        if (!alive)
            generation = ++slot->generation;  // supersedes registrations still waiting for a restart
    }
    LWLockRelease(&state->lock);
    if (alive)
        PG_RETURN_INT32(static_cast<int32>(running));
    // With preload the launcher serves the database: ask it for a worker now (within pgjq.max_maintenance_workers).
    // A database outside pgjq.databases gets a worker of its own, as without preload.
    LWLockAcquire(&state->lock, LW_EXCLUSIVE);
    bool launcher = state->launcher_pid != 0;
    LWLockRelease(&state->lock);
    if (launcher && database_allowed(get_database_name(MyDatabaseId))) {
        doorbell::request_service(MyDatabaseId, false);
        pid_t pid = wait_for_slot(state, true, 0, nullptr);
        if (pid == 0)
            ereport(
                ERROR,
                (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
                 errmsg("the pgjq launcher did not start a maintenance worker for database \"%s\" in time",
                        get_database_name(MyDatabaseId)),
                 errhint(
                     "pgjq.worker_status() shows whether it waits for a free worker (pgjq.max_maintenance_workers).")));
        PG_RETURN_INT32(static_cast<int32>(pid));
    }

    BackgroundWorkerHandle* handle;
    if (!launch_maintenance_worker(MyDatabaseId, get_database_name(MyDatabaseId), false, generation, MyProcPid,
                                   &handle))
        ereport(ERROR,
                (errcode(ERRCODE_CONFIGURATION_LIMIT_EXCEEDED),
                 errmsg("could not register the pgjq maintenance worker"), errhint("Raise max_worker_processes.")));
    pid_t pid = wait_for_slot(state, true, 0, handle);
    if (pid == 0)
        ereport(
            ERROR,
            (errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
             errmsg("the pgjq maintenance worker for database \"%s\" did not start", get_database_name(MyDatabaseId)),
             errhint("See the server log.")));
    PG_RETURN_INT32(static_cast<int32>(pid));
}

PGJQ_API_FUNCTION(stop_worker)
{
    require_every(call, cap_admin);
    worker_shared* state = worker_state();
    pid_t pid = 0;
    LWLockAcquire(&state->lock, LW_EXCLUSIVE);
    db_slot* slot = find_or_add_slot(state, MyDatabaseId);
    if (slot != nullptr) {
        slot->disabled = true;  // keeps the launcher (and a postmaster restart) from starting it again
        pid = slot->pid;
    }
    LWLockRelease(&state->lock);
    if (pid == 0)
        PG_RETURN_BOOL(false);
    if (kill(pid, SIGTERM) != 0 && errno != ESRCH)
        ereport(WARNING,
                (errmsg("could not signal the pgjq maintenance worker (process %d): %m", static_cast<int>(pid))));
    pid_t after = wait_for_slot(state, false, pid, nullptr);
    if (after == pid)
        ereport(WARNING,
                (errmsg("the pgjq maintenance worker (process %d) has not exited yet", static_cast<int>(pid))));
    PG_RETURN_BOOL(true);
}
