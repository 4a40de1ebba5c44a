// schedules.hpp: firing periodic jobs (pgjq.schedule). The maintenance worker's schedules duty, and
// pgjq.fire_schedules() by hand, fire the schedules that are due, in the caller's transaction:
// - each due schedule's row is locked (FOR UPDATE SKIP LOCKED: a schedule being changed is left for the next
//   look), its job is enqueued through the public pgjq.enqueue as the role that set the schedule (so the
//   producer capability, max_pending and the notifications apply as to any job, and the job records that
//   role), and its next firing is written, all in the one transaction: a crash before the commit loses both
//   the job and the advance, so the firing happens again, once;
// - the job's run_at is the firing it stands for;
// - firings missed while nothing fired (the server was down, say) are coalesced: `run_once` schedules get
//   one job for all of them; `skip` schedules get one job if the latest is late by at most
//   k_missed_tolerance, none otherwise;
// - a refused enqueue (queue full, capability revoked, any error) is recorded on the schedule (last_error)
//   and tried again after a backoff (1 s doubling to 1 min), firings coalescing meanwhile; it is never
//   dropped.
#pragma once

#include "pg/pg.hpp"

namespace pgjq {

constexpr int64 k_missed_tolerance = 60 * USECS_PER_SEC;

struct firing_outcome {
    int64 schedules;       // due schedules handled (fired, skipped or refused)
    int64 jobs;            // jobs enqueued
    TimestampTz next_due;  // the earliest time a schedule is due after these; DT_NOEND: none
};

// Fires at most `limit` due schedules in the current transaction. `failure_point`: the maintenance duty's
// (pgjq.test_failing_duty). Requires an SPI connection; a database at 0.2.0 or later.
firing_outcome fire_due_schedules(int limit, bool failure_point);

}  // namespace pgjq
