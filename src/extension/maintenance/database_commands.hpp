// database_commands.hpp: dropping, renaming and copying a database a maintenance worker serves (see the .cpp).
// The utility hub (hooks/utility_hub.cpp) calls these around every utility command.
#pragma once

#include "pg/pg.hpp"

namespace pgjq {

struct database_command {
    Oid dboid;  // the database whose worker stepped aside; InvalidOid: none, nothing to undo
    bool dropping;
    bool was_disabled;  // pgjq.stop_worker() had stopped it before
};

// Before the command: if it drops, renames or copies a database a worker serves (and the caller owns it), asks
// the worker to leave, waits for it, and keeps the launcher away.
database_command before_database_command(Node* stmt);
// After the command, whether it succeeded or raised: the database is served again, unless it was dropped.
void after_database_command(const database_command& command, bool succeeded);

}  // namespace pgjq
