// waiting_jobs_sweep.cpp: the duty that settles, every pgjq.prune_interval, what no committing transaction
// settled (core/waiting_jobs.hpp): groups with room and waiting jobs (their queue's group_concurrency was
// raised by a direct write, say), and dependencies on jobs that are no longer live and workflow steps that
// finished unsettled (a transaction whose backend did not yet know that dependencies were in use). Nothing is due at its next run: it is a look,
// not a deadline, and keeps no worker resident.
#include "core/waiting_jobs.hpp"
#include "core/workflows.hpp"
#include "maintenance/duty.hpp"
#include "pg/catalog.hpp"
#include "pg/settings.hpp"

namespace {

using namespace pgjq;

duty_outcome run(maintenance_round& round)
{
    TimestampTz next = TimestampTzPlusMilliseconds(round.now, prune_interval_s * 1000L);
    begin_duty_transaction("pgjq maintenance: settling waiting jobs");
    test_failure_point("waiting_jobs");
    int64 noted = 0;
    if (!database_at_0_1_0()) {
        noted += note_stale_dependencies();
        noted += note_groups_with_room(nullptr);
        if (workflows_installed())
            noted += note_unsettled_steps();
    }
    commit_duty_transaction();  // which settles what was noted
    return {next, noted, DT_NOEND};
}

}  // namespace

extern const pgjq::duty k_waiting_jobs_duty = {"waiting_jobs", run, nullptr};
