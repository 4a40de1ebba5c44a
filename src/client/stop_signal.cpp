// stop_signal.cpp: the stop flag and its self-pipe, and the SIGINT/SIGTERM handlers that set them.
// A signal handler may only do async-signal-safe things; an atomic store and write(2) are.
#include "stop_signal.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <string>
#include <unistd.h>

#include <pgjq/error.hpp>

#include "timeouts.hpp"

namespace pgjq::detail
{

namespace
{

std::atomic<stop_signal *> signal_target{nullptr};

extern "C" void on_stop_signal(int)
{
  const int saved_errno = errno;
  if (stop_signal *target = signal_target.load())
    target->request();
  errno = saved_errno;
}

} // namespace

stop_signal::stop_signal()
{
  if (pipe2(m_pipe, O_NONBLOCK | O_CLOEXEC) != 0)
    throw error(std::string("cannot create the worker's stop pipe: ") + std::strerror(errno), std::string());
}

stop_signal::~stop_signal()
{
  close(m_pipe[0]);
  close(m_pipe[1]);
}

void stop_signal::request() noexcept
{
  m_requested.store(true);
  const char byte = 1;
  // A full pipe (EAGAIN) is fine: it is already readable.
  [[maybe_unused]] ssize_t ignored = write(m_pipe[1], &byte, 1);
}

bool stop_signal::sleep_for(std::chrono::milliseconds duration) const noexcept
{
  const auto deadline = deadline_after(duration);
  for (;;)
  {
    if (requested())
      return false;
    const int left = poll_timeout(deadline);
    if (left == 0)
      return true;
    pollfd pfd{m_pipe[0], POLLIN, 0};
    poll(&pfd, 1, left);
  }
}

signal_scope::signal_scope(stop_signal &target)
{
  stop_signal *expected = nullptr;
  if (!signal_target.compare_exchange_strong(expected, &target))
    throw usage_error("another pgjq::worker already handles SIGINT/SIGTERM; set handle_signals = false");
  struct sigaction sa
  {
  };
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  // SA_RESTART keeps libpq's blocking reads going; the runners' poll() wakes through the pipe anyway.
  sa.sa_flags = SA_RESTART;
  sigaction(SIGINT, &sa, &m_old_int);
  sigaction(SIGTERM, &sa, &m_old_term);
}

signal_scope::~signal_scope()
{
  sigaction(SIGINT, &m_old_int, nullptr);
  sigaction(SIGTERM, &m_old_term, nullptr);
  signal_target.store(nullptr);
}

} // namespace pgjq::detail
