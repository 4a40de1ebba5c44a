// revive.cpp: revive_jobs (see revive.hpp).
#include "core/revive.hpp"

#include "core/announcements.hpp"
#include "core/depth.hpp"
#include "core/waiting_jobs.hpp"
#include "core/workflows.hpp"
#include "pg/spi.hpp"
#include "versions/statement.hpp"

namespace pgjq {

// clang-format off
// The live row is inserted first and the history row deleted only for the jobs inserted, so that a job whose
// unique_key is taken stays finished instead of vanishing. A job of a group comes back waiting for its turn
// in it (the commit starts it when it may).
#define REVIVE(added_columns, added_values, group_key)                                                 \
    "WITH candidates AS ("                                                                             \
    "  SELECT * FROM pgjq.finished_jobs WHERE id = ANY ($1) AND status IN ('failed', 'cancelled')"      \
    "   ORDER BY id FOR UPDATE),"                                                                      \
    " revived AS ("                                                                                    \
    "  INSERT INTO pgjq.live_jobs (id, queue_name, job_type, priority, payload, run_at, unique_key,"    \
    "    created_at, max_attempts, last_error" added_columns ")"                                       \
    "  SELECT id, queue_name, job_type, priority, payload, now(), unique_key, created_at, max_attempts," \
    "    last_error" added_values " FROM candidates ORDER BY id"                                       \
    "  ON CONFLICT (queue_name, enqueued_by, unique_key) WHERE unique_key IS NOT NULL DO NOTHING"       \
    "  RETURNING queue_name, " group_key " AS group_key, enqueued_by, id),"                             \
    " removed AS (DELETE FROM pgjq.finished_jobs f USING revived r WHERE f.id = r.id)"                  \
    " SELECT queue_name, group_key, enqueued_by::oid FROM revived ORDER BY queue_name"
static statement s_revive = {"revive.revive", {REVIVE(", enqueued_by, claimed_by, group_key, depends_on, timeout, headers, status",
            ", enqueued_by, claimed_by, group_key, depends_on, timeout, headers,"
            " CASE WHEN group_key IS NULL THEN 'pending' ELSE 'waiting' END::pgjq.job_status",
            "group_key"),
     1, {INT8ARRAYOID}}};
// clang-format on

int64 revive_jobs(Datum ids)
{
    uint64 n = run_plan(saved_plan(&s_revive), &ids, nullptr);
    SPITupleTable* rows = SPI_tuptable;
    // The rows come by queue: each queue's counters change once, and it is announced once.
    uint64 run_start = 0;
    bool runnable = false;
    for (uint64 i = 0; i < n; i++) {
        char* queue_name = SPI_getvalue(rows->vals[i], rows->tupdesc, 1);
        char* group_key = SPI_getvalue(rows->vals[i], rows->tupdesc, 2);
        if (group_key == nullptr) {
            runnable = true;
        } else {
            bool isnull;  // (a database at 0.1.0 has no groups: its form has no third column)
            Datum role = SPI_getbinval(rows->vals[i], rows->tupdesc, 3, &isnull);
            note_group_changed(queue_name, isnull ? InvalidOid : DatumGetObjectId(role), group_key);
        }
        bool last_of_queue = i + 1 == n || strcmp(queue_name, SPI_getvalue(rows->vals[i + 1], rows->tupdesc, 1)) != 0;
        if (!last_of_queue)
            continue;
        if (runnable)
            announce_new_jobs(queue_name);
        adjust_depth(CStringGetTextDatum(queue_name), static_cast<int64>(i + 1 - run_start));
        run_start = i + 1;
        runnable = false;
    }
    if (n > 0)
        workflow_steps_revived(ids);  // workflow steps wait again for what they depend on
    return static_cast<int64>(n);
}

}  // namespace pgjq
