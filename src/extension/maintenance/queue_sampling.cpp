// queue_sampling.cpp: the duty that records each queue's figures every pgjq.queue_sample_interval for the
// charts (core/queue_samples.hpp), and deletes the samples past their retention. Not on a standby, which
// cannot write; not at all with the interval set to 0. A periodic look, not a deadline: a worker the
// launcher started may exit while nothing else is due, and the samples then pause with it.
#include "core/queue_samples.hpp"
#include "maintenance/duty.hpp"
#include "pg/settings.hpp"

namespace {

using namespace pgjq;

duty_outcome run(maintenance_round& round)
{
    if (queue_sample_interval_s == 0)
        return {DT_NOEND, 0, DT_NOEND};
    const TimestampTz next = TimestampTzPlusMilliseconds(round.now, queue_sample_interval_s * 1000L);
    if (RecoveryInProgress())
        return {next, 0, DT_NOEND};
    begin_duty_transaction("pgjq maintenance: sampling the queues' figures");
    test_failure_point("queue_sampling");
    int64 sampled = take_queue_samples();
    commit_duty_transaction();
    return {next, sampled, DT_NOEND};
}

}  // namespace

extern const pgjq::duty k_queue_sampling_duty = {"queue_sampling", run, nullptr};
