// shared_state.cpp: the maintenance workers' shared memory (see shared_state.hpp).
#include "maintenance/shared_state.hpp"

#include "core/settings.hpp"

namespace pgjq {

static worker_shared* s_state = nullptr;

// One slot per possible background worker: a database can only be served by a running worker, and
// slots of databases that are no longer served are reused.
static int slot_count()
{
    return max_worker_processes > 0 ? max_worker_processes : 1;
}

Size worker_shmem_size()
{
    return add_size(offsetof(worker_shared, slots), mul_size(sizeof(db_slot), slot_count()));
}

static worker_shared* init_state()
{
    bool found;
    LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
    auto* state = static_cast<worker_shared*>(ShmemInitStruct("pgjq worker state", worker_shmem_size(), &found));
    if (!found) {
        memset(state, 0, worker_shmem_size());
        SpinLockInit(&state->mutex);
        state->nslots = slot_count();
    }
    LWLockRelease(AddinShmemInitLock);
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
void worker_shmem_startup()
{
    s_state = init_state();
}

db_slot* find_slot(worker_shared* state, Oid dboid)
{
    for (int i = 0; i < state->nslots; i++)
        if (state->slots[i].dboid == dboid)
            return &state->slots[i];
    return nullptr;
}

db_slot* find_or_add_slot(worker_shared* state, Oid dboid)
{
    db_slot* slot = find_slot(state, dboid);
    if (slot != nullptr)
        return slot;
    // A free slot, else the one idle longest: a database nobody serves loses only its statistics.
    db_slot* idle = nullptr;
    for (int i = 0; i < state->nslots; i++) {
        db_slot* s = &state->slots[i];
        if (s->dboid == InvalidOid) {
            idle = s;
            break;
        }
        if (s->pid == 0 && !s->disabled && (idle == nullptr || s->exited_at < idle->exited_at))
            idle = s;
    }
    if (idle != nullptr) {
        memset(idle, 0, sizeof *idle);
        idle->dboid = dboid;
    }
    return idle;
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
