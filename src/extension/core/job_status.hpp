// job_status.hpp: pgjq.job_status's labels as lists, for the code that names a kind of status: the unfinished
// ones, which live in pgjq.live_jobs, and the finished ones, in pgjq.finished_jobs, each in the enum's order.
#pragma once

namespace pgjq {

inline constexpr const char* k_unfinished_statuses[] = {"waiting", "pending", "claimed", "running", nullptr};
inline constexpr const char* k_finished_statuses[] = {"completed", "failed", "cancelled", nullptr};

}  // namespace pgjq
