// shared_state.cpp: the maintenance workers' shared memory (see shared_state.hpp).
#include "maintenance/shared_state.hpp"

#include "maintenance/duty.hpp"
#include "pg/settings.hpp"

namespace pgjq {

static worker_shared* s_state = nullptr;

static bool s_launcher_sized = false;  // the region the shared-memory hub reserved with preload

// With the launcher, one slot per database it tracks: a slot keeps the deadlines of a database that no
// worker serves right now. Without it (pgjq.start_worker() only) a database is tracked only while a
// worker serves it, so one slot per possible background worker is enough, and fits in the spare shared
// memory PostgreSQL keeps for add-ins.
static int slot_count()
{
    int count = s_launcher_sized ? max_databases : max_worker_processes;
    return count > 0 ? count : 1;
}

Size worker_shmem_size()
{
    return add_size(offsetof(worker_shared, slots), mul_size(sizeof(db_slot), slot_count()));
}

static void initialize_state(worker_shared* state)
{
    memset(state, 0, worker_shmem_size());
    state->lock_tranche = LWLockNewTrancheId();
    LWLockInitialize(&state->lock, state->lock_tranche);
    state->nslots = slot_count();
}

// The lock's tranche is named per process, for its wait events (forked backends inherit the postmaster's).
static void name_lock_tranche(const worker_shared* state)
{
    LWLockRegisterTranche(state->lock_tranche, k_worker_state_region.name);
}

// Without preload: from the spare shared memory PostgreSQL keeps for add-ins, on first use.
static worker_shared* init_state()
{
    bool found;
    LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
    auto* state = static_cast<worker_shared*>(ShmemInitStruct(k_worker_state_region.name, worker_shmem_size(), &found));
    if (!found)
        initialize_state(state);
    LWLockRelease(AddinShmemInitLock);
    name_lock_tranche(state);
    return state;
}

worker_shared* worker_state()
{
    if (s_state == nullptr)
        s_state = init_state();
    return s_state;
}

worker_shared* worker_state_if_attached()
{
    return s_state;
}

// Without preload the state comes from PostgreSQL's spare shared memory; if that ran out, a backend
// that only wants to wake a worker must not fail its transaction for it.
worker_shared* worker_state_no_error()
{
    if (s_state != nullptr)
        return s_state;
    MemoryContext caller = CurrentMemoryContext;
    volatile bool attached = false;
    PG_TRY();
    {
        worker_state();
        attached = true;
    }
    PG_CATCH();
    {
        MemoryContextSwitchTo(caller);
        FlushErrorState();
        if (LWLockHeldByMe(AddinShmemInitLock))
            LWLockRelease(AddinShmemInitLock);
    }
    PG_END_TRY();
    return attached ? s_state : nullptr;
}

// Runs in the postmaster at every (re)initialization of shared memory, so the pointer children inherit
// is never the one of a previous generation.
static void attach_worker_state(void* memory, bool created, LWLockPadded*)
{
    s_launcher_sized = true;
    s_state = static_cast<worker_shared*>(memory);
    if (created)
        initialize_state(s_state);
    name_lock_tranche(s_state);
}

// With preload the launcher's size: the hub calls the size function after _PG_init, from the postmaster.
static Size launcher_state_size()
{
    s_launcher_sized = true;
    return worker_shmem_size();
}

const shared_region k_worker_state_region = {"pgjq worker state", launcher_state_size, nullptr, attach_worker_state};

TimestampTz* reported_deadline_field(db_slot* slot, deadline_kind kind)
{
    switch (kind) {
    case deadline_kind::job_due:
        return &slot->reported_due;
    case deadline_kind::lease_ends:
        return &slot->reported_lease_end;
    case deadline_kind::schedule_due:
        break;
    }
    return &slot->reported_schedule;
}

db_slot* find_slot(worker_shared* state, Oid dboid)
{
    for (int i = 0; i < state->nslots; i++)
        if (state->slots[i].dboid == dboid)
            return &state->slots[i];
    return nullptr;
}

db_slot* find_or_add_slot(worker_shared* state, Oid dboid, TimestampTz only_absent_before)
{
    db_slot* slot = find_slot(state, dboid);
    if (slot != nullptr)
        return slot;
    // A free slot, else one of a database without pgjq, else the one idle longest: that database loses its
    // statistics and deadlines until the launcher visits it again.
    db_slot* reuse = nullptr;
    for (int i = 0; i < state->nslots; i++) {
        db_slot* s = &state->slots[i];
        if (s->dboid == InvalidOid) {
            reuse = s;
            break;
        }
        if (s->pid != 0 || s->disabled ||
            (only_absent_before != 0 && !(s->absent && s->absent_at < only_absent_before)))
            continue;
        if (reuse == nullptr || (s->absent && !reuse->absent) ||
            (s->absent == reuse->absent && s->exited_at < reuse->exited_at))
            reuse = s;
    }
    if (reuse != nullptr) {
        memset(reuse, 0, sizeof *reuse);
        reuse->dboid = dboid;
        reuse->deadline = DT_NOEND;
        reuse->deadline_duty = -1;
    }
    return reuse;
}

// The retry time of the duty called `name` while it backs off after failures, else 0.
static TimestampTz backing_off_until(const db_slot* slot, const char* name)
{
    int i = duty_index(name);
    return i >= 0 && slot->duties[i].failures_in_row > 0 ? slot->duties[i].retry_at : 0;
}

TimestampTz next_service(const db_slot* slot, TimestampTz now, const char** reason, bool with_requests)
{
    const char* why = nullptr;
    TimestampTz due = DT_NOEND;
    // A report from a backend of the database shows that the extension is there now.
    bool reported = slot->reported_due != 0 || slot->reported_lease_end != 0 || slot->reported_schedule != 0 ||
        (with_requests && slot->requested_at != 0);
    if (slot->absent && !reported) {
        due = TimestampTzPlusMilliseconds(slot->absent_at, launcher_naptime_s * 1000L);
        why = "extension not installed: look again";
    } else if (slot->started_at == 0) {
        due = now;
        why = "first visit since the server started";
    } else if (!slot->idle_exit && !slot->absent) {
        due = TimestampTzPlusMilliseconds(slot->exited_at, restart_delay_s * 1000L);
        why = "restart after the worker exited";
    } else {
        due = slot->deadline;
        why = slot->deadline_duty >= 0 && slot->deadline_duty < k_duty_count ? k_duties[slot->deadline_duty]->name
                                                                             : nullptr;
        // A report for a duty that backs off after failures waits for its retry.
        TimestampTz due_report = slot->reported_due, lease_report = slot->reported_lease_end;
        TimestampTz schedule_report = slot->reported_schedule;
        if (due_report != 0)
            due_report = Max(due_report, backing_off_until(slot, "due_jobs"));
        if (lease_report != 0)
            lease_report = Max(lease_report, backing_off_until(slot, "lease_recovery"));
        if (schedule_report != 0)
            schedule_report = Max(schedule_report, backing_off_until(slot, "schedules"));
        const struct {
            TimestampTz at;
            const char* why;
        } reports[] = {{due_report, "due_jobs"},
                       {lease_report, "lease_recovery"},
                       {schedule_report, "schedules"},
                       {with_requests ? slot->requested_at : 0, "requested: notifications or start_worker()"}};
        for (const auto& r : reports)
            if (r.at != 0 && r.at < due) {
                due = r.at;
                why = r.why;
            }
    }
    if (reason != nullptr)
        *reason = due == DT_NOEND ? nullptr : why;
    return due;
}

bool process_alive(pid_t pid)
{
    return pid != 0 && kill(pid, 0) == 0;
}

bool database_allowed(const char* datname)
{
    if (served_databases == nullptr || served_databases[0] == '\0')
        return true;
    char* copy = pstrdup(served_databases);
    List* names = nullptr;
    bool allowed = false;
    if (SplitIdentifierString(copy, ',', &names)) {
        ListCell* cell;
        foreach (cell, names)
            if (strcmp(static_cast<const char*>(lfirst(cell)), datname) == 0)
                allowed = true;
    }
    list_free(names);
    pfree(copy);
    return allowed;
}

}  // namespace pgjq
