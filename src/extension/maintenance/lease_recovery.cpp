// lease_recovery.cpp: the duty that recovers jobs whose lease expired (core/leases.hpp) and runs again when
// the next lease expires. A requeued job is announced on pgjq_new_job at the duty's commit (by the trigger
// on its status), so a listening worker takes it at once.
#include "core/leases.hpp"
#include "maintenance/duty.hpp"

namespace {

using namespace pgjq;

duty_outcome run(maintenance_round& round)
{
    begin_duty_transaction("pgjq maintenance: recovering expired leases");
    int64 recovered = recover_expired_leases();
    TimestampTz next = next_lease_expiry();
    commit_duty_transaction();
    // A lease is expired once now() is past it: look a microsecond after.
    TimestampTz cap = naptime_from(round.now);
    return {next < cap ? next + 1 : cap, recovered};
}

}  // namespace

extern const pgjq::duty k_lease_recovery_duty = {"lease_recovery", run, nullptr};
