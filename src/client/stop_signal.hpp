// stop_signal.hpp (internal): how a worker is told to stop, from any thread or from a signal handler:
// a flag plus a pipe that the runners' poll() watches, so that a sleeping runner wakes at once.
#pragma once

#include <atomic>
#include <chrono>
#include <csignal>

namespace pgjq::detail
{

class stop_signal
{
public:
  stop_signal();
  stop_signal(const stop_signal &) = delete;
  stop_signal &operator=(const stop_signal &) = delete;
  ~stop_signal();

  // Async-signal-safe: an atomic store and a write(2). The pipe is never drained, so that it stays
  // readable and wakes every runner, now and later.
  void request() noexcept;
  bool requested() const noexcept { return m_requested.load(); }
  const std::atomic<bool> &flag() const noexcept { return m_requested; }
  // Readable once stop was requested.
  int fd() const noexcept { return m_pipe[0]; }
  // Sleeps for the duration unless stop is requested first; returns false if it was.
  bool sleep_for(std::chrono::milliseconds duration) const noexcept;

private:
  std::atomic<bool> m_requested{false};
  int m_pipe[2] = {-1, -1};
};

// While alive, SIGINT and SIGTERM request the stop of one stop_signal (the previous handlers come back
// afterwards). Only one may exist at a time: signals name no target, so two workers cannot share them.
class signal_scope
{
public:
  explicit signal_scope(stop_signal &target);
  signal_scope(const signal_scope &) = delete;
  signal_scope &operator=(const signal_scope &) = delete;
  ~signal_scope();

private:
  struct sigaction m_old_int
  {
  };
  struct sigaction m_old_term
  {
  };
};

} // namespace pgjq::detail
