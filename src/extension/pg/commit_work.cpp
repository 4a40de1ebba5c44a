// commit_work.cpp: the set-up of commit_work.hpp.
#include "pg/commit_work.hpp"

#include "pg/catalog.hpp"

namespace pgjq {

commit_work begin_commit_work()
{
    commit_work work;
    GetUserIdAndSecContext(&work.saved_user, &work.saved_context);
    SetUserIdAndSecContext(current_installation().owner, work.saved_context | SECURITY_LOCAL_USERID_CHANGE);
    work.guc_level = NewGUCNestLevel();
    (void) set_config_option("search_path", "pg_catalog, pg_temp", PGC_USERSET, PGC_S_SESSION, GUC_ACTION_SAVE, true, 0,
                             false);
    // The statements of the transaction have ended: SPI needs a snapshot of its own here.
    PushActiveSnapshot(GetTransactionSnapshot());
    if (SPI_connect() != SPI_OK_CONNECT)
        elog(ERROR, "pgjq: SPI_connect failed");
    return work;
}

void end_commit_work(const commit_work& work)
{
    SPI_finish();
    PopActiveSnapshot();
    AtEOXact_GUC(true, work.guc_level);
    SetUserIdAndSecContext(work.saved_user, work.saved_context);
}

}  // namespace pgjq
