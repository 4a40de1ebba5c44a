// commit_work.hpp: running pgjq's own statements while a transaction commits (XACT_EVENT_PRE_COMMIT), where
// no SQL function of pgjq is on the stack to have set things up: as the extension's owner, with the
// search_path the SQL functions pin, a snapshot and an SPI connection. hooks/transaction_hub.cpp says what
// runs then, and in which order.
#pragma once

#include "pg/pg.hpp"

namespace pgjq {

struct commit_work {
    Oid saved_user;
    int saved_context;
    int guc_level;
};

commit_work begin_commit_work();
void end_commit_work(const commit_work& work);

}  // namespace pgjq
