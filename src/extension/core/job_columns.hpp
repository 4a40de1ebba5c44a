// job_columns.hpp: the select list that turns a pgjq.live_jobs row into a pgjq.jobs row (the view's
// columns, in order), for functions that return SETOF pgjq.jobs.
#pragma once

// clang-format off
#define PGJQ_LIVE_JOB_AS_VIEW_ROW(alias)                                                                \
    alias ".id, " alias ".queue_name, " alias ".job_type, " alias ".priority, " alias ".status, "       \
    alias ".payload, NULL::jsonb, " alias ".run_at, " alias ".unique_key, " alias ".progress, "         \
    alias ".current_stage, " alias ".events_count, " alias ".worker_id, " alias ".claimed_at, "         \
    alias ".heartbeat_at, " alias ".lease_expires_at, " alias ".created_at, " alias ".started_at, "     \
    "NULL::timestamptz, NULL::timestamptz, NULL::timestamptz, " alias ".attempts, " alias ".max_attempts, " \
    alias ".last_error"
// clang-format on

namespace pgjq {

// The position (from 1) of `column` in the select list `list`, whose items ", " separates; 0 when absent.
// Evaluated by the compiler, so that the positions below come from the select list itself.
constexpr int select_list_position(const char* list, const char* column)
{
    int position = 1;
    for (const char* item = list;; position++) {
        while (*item == ' ')
            item++;
        int i = 0;
        while (column[i] != '\0' && item[i] == column[i])
            i++;
        if (column[i] == '\0' && (item[i] == ',' || item[i] == '\0'))
            return position;
        while (*item != ',' && *item != '\0')
            item++;
        if (*item == '\0')
            return 0;
        item++;
    }
}

// Where a claim's result (PGJQ_LIVE_JOB_AS_VIEW_ROW) has the columns its caller reads.
constexpr int k_jobs_id_column = select_list_position(PGJQ_LIVE_JOB_AS_VIEW_ROW("j"), "j.id");
constexpr int k_jobs_priority_column = select_list_position(PGJQ_LIVE_JOB_AS_VIEW_ROW("j"), "j.priority");
constexpr int k_jobs_lease_expires_at_column =
    select_list_position(PGJQ_LIVE_JOB_AS_VIEW_ROW("j"), "j.lease_expires_at");
static_assert(k_jobs_id_column > 0 && k_jobs_priority_column > 0 && k_jobs_lease_expires_at_column > 0,
              "a column a claim reads is missing from PGJQ_LIVE_JOB_AS_VIEW_ROW");

}  // namespace pgjq

// The condition that the role in `param` holds the job (alias `alias`): it claimed it, or has the
// privileges of the role that did. Jobs claimed before 0.2.0 recorded no role. From 0.2.0 only.
// clang-format off
#define PGJQ_HELD_BY_ROLE(alias, param)                                                                \
    " AND (" alias "claimed_by IS NULL OR " alias "claimed_by = " param                                \
    " OR pg_catalog.pg_has_role(" param "::oid, " alias "claimed_by::oid, 'USAGE'))"
// clang-format on

// The columns pgjq.jobs gained after 0.1.0, from a pgjq.live_jobs row (alias `alias`, with its dot): those
// of 0.2.0, then the trace context of 0.3.0 (versions/forms_0_2_0.cpp has the claims without it).
// clang-format off
#define PGJQ_LIVE_JOB_ADDED_COLUMNS(alias)                                                             \
    ", " alias "enqueued_by, " alias "claimed_by, " alias "group_key, " alias "depends_on, "            \
    alias "timeout, " alias "timeout_at, " alias "headers"

// The condition that the job (alias `alias`, with its dot) has not run past its execution timeout. From
// 0.2.0 only.
#define PGJQ_BEFORE_TIMEOUT(alias)                                                                     \
    " AND (" alias "timeout_at IS NULL OR " alias "timeout_at > now())"
// clang-format on
