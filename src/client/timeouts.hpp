// timeouts.hpp (internal): the caller's timeouts, intervals and backoffs on the steady clock and in poll(),
// without wrapping round. A "forever" such as milliseconds::max() is more than the clock's nanoseconds
// count (converted, it came out as -1 ms: a deadline in the past, a wait that ended at once), doubling it
// overflows, and poll() takes an int of milliseconds. Past the clock's end nothing can be told apart, so a
// longer timeout is kept as the end of the clock, which is what it means.
#pragma once

#include <chrono>
#include <climits>

namespace pgjq::detail
{

using steady_clock = std::chrono::steady_clock;

// `timeout` in the steady clock's own unit: saturated at its largest; a negative timeout (already over)
// is zero.
inline steady_clock::duration clock_duration(std::chrono::milliseconds timeout) noexcept
{
  constexpr auto most = std::chrono::duration_cast<std::chrono::milliseconds>(steady_clock::duration::max());
  if (timeout <= std::chrono::milliseconds::zero())
    return steady_clock::duration::zero();
  if (timeout >= most)
    return steady_clock::duration::max();
  return std::chrono::duration_cast<steady_clock::duration>(timeout);
}

// now + timeout, or the end of the clock when that lies beyond it.
inline steady_clock::time_point deadline_after(std::chrono::milliseconds timeout) noexcept
{
  const steady_clock::time_point now = steady_clock::now();
  const steady_clock::duration wait = clock_duration(timeout);
  return wait >= steady_clock::time_point::max() - now ? steady_clock::time_point::max() : now + wait;
}

// The milliseconds left until `deadline`, for poll(): 0 once it has passed, rounded up (so that 0.4 ms
// left does not spin), at most INT_MAX (a longer wait is several polls).
inline int poll_timeout(steady_clock::time_point deadline) noexcept
{
  const steady_clock::time_point now = steady_clock::now();
  if (deadline <= now)
    return 0;
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - now);
  return left.count() >= INT_MAX ? INT_MAX : static_cast<int>(left.count());
}

// The next delay of a backoff that doubles up to `cap`.
inline std::chrono::milliseconds doubled_up_to(std::chrono::milliseconds delay, std::chrono::milliseconds cap) noexcept
{
  return delay >= cap / 2 ? cap : delay * 2;
}

} // namespace pgjq::detail
