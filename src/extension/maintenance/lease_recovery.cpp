// lease_recovery.cpp: the duty that recovers jobs whose lease expired (core/leases.hpp) and runs again when
// the next lease expires. A requeued job is announced on pgjq_new_job at the duty's commit (by the trigger
// on its status), so a listening worker takes it at once. A claim whose lease ends before the worker's
// planned wake-up reports that time at its commit (core/deadlines.hpp), which makes the duty look again.
#include "core/leases.hpp"
#include "maintenance/duty.hpp"

namespace {

using namespace pgjq;

TimestampTz s_planned = 0;  // when the last run planned to run again

duty_outcome run(maintenance_round& round)
{
    TimestampTz reported = reported_deadline(round, deadline_kind::lease_ends);
    begin_duty_transaction("pgjq maintenance: recovering expired leases");
    test_failure_point("lease_recovery");
    int64 recovered = recover_expired_leases();
    bool expired_left = false;
    TimestampTz next = next_lease_expiry(&expired_left);
    commit_duty_transaction();
    forget_reported_deadline(round, deadline_kind::lease_ends, reported);
    // A lease is expired once now() is past it: look a microsecond after.
    TimestampTz cap = naptime_from(round.now);
    s_planned = next < cap ? next + 1 : cap;
    // A skipped expired lease is work due at the next look, which must happen even if nothing else is due.
    TimestampTz deadline = expired_left ? cap : (next == DT_NOEND ? DT_NOEND : next + 1);
    return {s_planned, recovered, deadline};
}

// A claim committed a lease that ends before the duty planned to look.
bool woken(const maintenance_round& round)
{
    TimestampTz reported = reported_deadline(round, deadline_kind::lease_ends);
    return reported != 0 && reported < s_planned;
}

}  // namespace

extern const pgjq::duty k_lease_recovery_duty = {"lease_recovery", run, woken};
