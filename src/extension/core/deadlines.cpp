// deadlines.cpp: a transaction's deadlines for the maintenance worker (see deadlines.hpp).
#include "core/deadlines.hpp"

namespace {

using namespace pgjq;

// The earliest deadline of each kind this transaction reported; 0: none.
TimestampTz s_pending[k_deadline_kinds];

}  // namespace

namespace pgjq {

void wake_maintenance_at_commit(TimestampTz when, deadline_kind kind)
{
    if (!doorbell::available())
        return;
    TimestampTz* pending = &s_pending[static_cast<int>(kind)];
    if (*pending == 0 || when < *pending)
        *pending = when;
}

void wake_maintenance_for_commit()
{
    for (int k = 0; k < k_deadline_kinds; k++)
        if (s_pending[k] != 0)
            doorbell::report_deadline(MyDatabaseId, s_pending[k], static_cast<deadline_kind>(k));
    forget_wakes();
}

void forget_wakes()
{
    memset(s_pending, 0, sizeof s_pending);
}

void warn_without_maintenance(const char* what)
{
    if (doorbell::maintenance_will_serve(MyDatabaseId))
        return;
    ereport(WARNING,
            (errmsg("%s needs pgjq's maintenance worker, and none serves database \"%s\"", what,
                    get_database_name(MyDatabaseId)),
             errdetail("pgjq is not in shared_preload_libraries, and pgjq.start_worker() was not called in this "
                       "database: until a worker serves it, schedules do not fire and job timeouts are not "
                       "enforced."),
             errhint("Add pgjq to shared_preload_libraries and restart the server, or run SELECT "
                     "pgjq.start_worker() in this database.")));
}

}  // namespace pgjq
