// database_commands.cpp: DROP DATABASE, ALTER DATABASE ... RENAME and CREATE DATABASE ... TEMPLATE of a
// database a maintenance worker serves. The worker holds a connection to it, with which PostgreSQL refuses
// these commands ("being accessed by other users"). The utility hub asks the worker to leave first (through
// its slot and latch, so it exits quietly between duties) and keeps the launcher from coming back; after
// the command the database is served again, unless it was dropped. Needs the library loaded in the session
// that runs the command: with shared_preload_libraries it is in every session.
#include "maintenance/database_commands.hpp"

#include "pg/compat.hpp"

#include "maintenance/shared_state.hpp"

namespace {

using namespace pgjq;

constexpr long k_leave_wait_ms = 10000;  // then SIGTERM, and as long again

// The database a command would be refused on while a worker serves it, or InvalidOid.
Oid database_of(Node* stmt, bool* dropping)
{
    *dropping = false;
    const char* name = nullptr;
    if (IsA(stmt, DropdbStmt)) {
        name = castNode(DropdbStmt, stmt)->dbname;
        *dropping = true;
    } else if (IsA(stmt, RenameStmt) && castNode(RenameStmt, stmt)->renameType == OBJECT_DATABASE) {
        name = castNode(RenameStmt, stmt)->subname;
    } else if (IsA(stmt, CreatedbStmt)) {
        ListCell* cell;
        foreach (cell, castNode(CreatedbStmt, stmt)->options) {
            DefElem* option = static_cast<DefElem*>(lfirst(cell));
            if (strcmp(option->defname, "template") == 0 && option->arg != nullptr)
                name = defGetString(option);
        }
    }
    return name ? get_database_oid(name, true) : InvalidOid;
}

// Asks the worker of `dboid` (if any) to leave and waits for it; keeps the launcher away meanwhile.
database_command step_aside(worker_shared* state, Oid dboid, bool dropping)
{
    database_command aside = {dboid, dropping, false};
    LWLockAcquire(&state->lock, LW_EXCLUSIVE);
    db_slot* slot = find_or_add_slot(state, dboid);
    pid_t pid = 0;
    Latch* latch = nullptr;
    if (slot != nullptr) {
        aside.was_disabled = slot->disabled;
        slot->disabled = true;
        pid = slot->pid;
        latch = slot->latch;
    } else {
        aside.dboid = InvalidOid;
    }
    LWLockRelease(&state->lock);
    if (pid == 0)
        return aside;
    SetLatch(latch);
    bool signalled = false;
    TimestampTz give_up = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), k_leave_wait_ms);
    for (;;) {
        LWLockAcquire(&state->lock, LW_EXCLUSIVE);
        bool gone = slot->pid != pid;
        LWLockRelease(&state->lock);
        if (gone)
            return aside;
        if (GetCurrentTimestamp() >= give_up) {
            if (signalled)
                return aside;  // the command will say who is still connected
            (void) kill(pid, SIGTERM);
            signalled = true;
            give_up = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), k_leave_wait_ms);
        }
        (void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, 10L, PG_WAIT_EXTENSION);
        ResetLatch(MyLatch);
        CHECK_FOR_INTERRUPTS();
    }
}

// After the command: a dropped database's slot is freed; otherwise the database is served again (the
// launcher restarts its worker), unless pgjq.stop_worker() had stopped it before.
void come_back(worker_shared* state, const database_command& aside, bool dropped)
{
    if (!OidIsValid(aside.dboid))
        return;
    LWLockAcquire(&state->lock, LW_EXCLUSIVE);
    db_slot* slot = find_slot(state, aside.dboid);
    if (slot != nullptr && slot->pid == 0) {
        if (dropped)
            memset(slot, 0, sizeof *slot);
        else
            slot->disabled = aside.was_disabled;
    }
    Latch* launcher = state->launcher_latch;
    LWLockRelease(&state->lock);
    if (launcher != nullptr)
        SetLatch(launcher);  // serve the database again now, not at the launcher's next pass
}

}  // namespace

namespace pgjq {

database_command before_database_command(Node* stmt)
{
    bool dropping;
    worker_shared* state = worker_state_if_attached();
    Oid dboid = state != nullptr ? database_of(stmt, &dropping) : InvalidOid;
    // Only the database's owner (or a superuser) may drop, rename or copy a database that is no template;
    // anyone else's command is left to PostgreSQL's own refusal, so that it cannot be used to make the
    // worker leave and keep a database without maintenance. (A non-owner's copy of a template database
    // that a worker serves is refused as "being accessed by other users", as without pgjq.)
    if (OidIsValid(dboid) && !compat::owns_database(dboid, GetUserId()))
        dboid = InvalidOid;
    if (!OidIsValid(dboid))
        return {InvalidOid, false, false};
    return step_aside(state, dboid, dropping);
}

void after_database_command(const database_command& command, bool succeeded)
{
    worker_shared* state = worker_state_if_attached();
    if (state != nullptr)
        come_back(state, command, succeeded && command.dropping);
}

}  // namespace pgjq
