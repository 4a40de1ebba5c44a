// worker_impl.hpp (internal): the state of a pgjq::worker that its runner threads share: the options,
// the handlers, the stop signal and the counters behind worker_stats.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <string>

#include <pgjq/worker.hpp>

#include "stop_signal.hpp"

namespace pgjq
{

struct worker::impl
{
  explicit impl(worker_options o) : options(std::move(o)) {}

  void log(const std::string &message) const;

  worker_options options;
  std::map<std::string, handler> handlers;
  detail::stop_signal stop;
  std::atomic<bool> running{false};
  std::atomic<std::uint64_t> claimed{0}, completed{0}, failed{0}, released{0}, abandoned{0}, parked{0}, heartbeats{0},
      idle_waits{0}, reconnects{0};
};

} // namespace pgjq
