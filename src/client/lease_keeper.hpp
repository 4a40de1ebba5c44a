// lease_keeper.hpp (internal): the worker's heartbeat thread. It keeps the leases of every job a worker
// holds (running or waiting in its claimed batch) alive with pgjq.heartbeat, on its own connection so
// that a long handler never delays it, and learns from the server's answer that a job was cancelled.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include <pgjq/connection.hpp>

namespace pgjq::detail
{

// A job some runner holds. The flags are set by whoever learns it first (heartbeat, progress, handler).
struct held_job
{
  held_job(std::int64_t id_, std::string worker_id_, bool in_transaction_ = false)
      : id(id_), worker_id(std::move(worker_id_)), in_transaction(in_transaction_)
  {
  }
  const std::int64_t id;
  const std::string worker_id;
  const bool in_transaction;          // held by the runner's open transaction (no lease, no heartbeat)
  std::atomic<bool> cancelled{false}; // PJ003: the job was cancelled
  std::atomic<bool> lost{false};      // PJ002: the lease is no longer ours
  std::atomic<bool> timed_out{false}; // PJ005: it ran past its execution timeout (lost as well)
  std::atomic<bool> parked{false};    // a workflow step parked (no lease): neither completed nor failed
  bool savepoint = false;             // in_transaction: the handler's savepoint is open (runner thread only)
};

class lease_keeper
{
public:
  lease_keeper(std::string conninfo, connection_options session, std::chrono::milliseconds interval,
               std::function<void(const std::string &)> log, std::atomic<std::uint64_t> &heartbeats);
  lease_keeper(const lease_keeper &) = delete;
  lease_keeper &operator=(const lease_keeper &) = delete;
  ~lease_keeper();

  void hold(std::shared_ptr<held_job> job);
  void release(std::int64_t job_id);
  void stop();

private:
  struct entry
  {
    std::shared_ptr<held_job> job;
    std::chrono::steady_clock::time_point last_beat;
  };
  void loop();

  const std::string m_conninfo;
  const connection_options m_session;
  const std::chrono::steady_clock::duration m_interval; // saturated: milliseconds::max() means never
  const std::function<void(const std::string &)> m_log;
  std::atomic<std::uint64_t> &m_heartbeats;
  std::mutex m_mutex;
  std::condition_variable m_wake;
  bool m_stop = false;
  std::map<std::int64_t, entry> m_held;
  std::thread m_thread;
};

} // namespace pgjq::detail
