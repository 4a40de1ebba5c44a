// duties.cpp: the table of maintenance duties (see duty.hpp). Each round runs them in this order: leases
// first, so that a recovered job is announced in the same round; schedules and waiting jobs before the relay,
// which announces the jobs they enqueue or start; the relay before the vacuum, which it tells whether jobs
// moved; the enqueue counts and the queues' samples last (nothing depends on them). The order is also that of db_slot::duties.
#include "maintenance/duty.hpp"

extern const pgjq::duty k_lease_recovery_duty;
extern const pgjq::duty k_due_jobs_duty;
extern const pgjq::duty k_schedules_duty;
extern const pgjq::duty k_prune_duty;
extern const pgjq::duty k_waiting_jobs_duty;
extern const pgjq::duty k_notification_relay_duty;
extern const pgjq::duty k_live_table_vacuum_duty;
extern const pgjq::duty k_count_fold_duty;
extern const pgjq::duty k_queue_sampling_duty;

namespace pgjq {

const duty* const k_duties[] = {
    &k_lease_recovery_duty, &k_due_jobs_duty,           &k_schedules_duty,         &k_prune_duty,
    &k_waiting_jobs_duty,   &k_notification_relay_duty, &k_live_table_vacuum_duty, &k_count_fold_duty,
    &k_queue_sampling_duty,
};
const int k_duty_count = sizeof k_duties / sizeof k_duties[0];
static_assert(sizeof k_duties / sizeof k_duties[0] <= k_max_duties, "db_slot::duties has room for every duty");

int duty_index(const char* name)
{
    for (int i = 0; i < k_duty_count; i++)
        if (strcmp(k_duties[i]->name, name) == 0)
            return i;
    return -1;
}

}  // namespace pgjq
