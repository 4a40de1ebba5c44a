// worker_commit.cpp: the commit mode of a worker call that is a transaction by itself (worker_commit.hpp).
#include "core/worker_commit.hpp"

#include "pg/pg.hpp"
#include "pg/settings.hpp"

namespace pgjq {

void relax_worker_commit()
{
    // A statement of its own (not BEGIN ... COMMIT, nor a multi-statement query string, which PostgreSQL
    // runs as an implicit block); synchronous_commit = off already says as much.
    if (synchronous_worker_commit || IsTransactionBlock() || synchronous_commit == SYNCHRONOUS_COMMIT_OFF)
        return;
    // SET LOCAL: for this transaction only. The function's own SET clauses do not name this setting, so the
    // change outlives the call until the commit.
    (void) set_config_option("synchronous_commit", "off", PGC_USERSET, PGC_S_SESSION, GUC_ACTION_LOCAL, true, 0, false);
}

}  // namespace pgjq
