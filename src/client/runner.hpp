// runner.hpp (internal): what every runner thread of a worker shares, whichever way it holds its jobs: the
// worker's state, a session that LISTENs on pgjq_new_job and reconnects, the sleep until a NOTIFY, and the
// loop that claims, processes and backs off after errors. leased_runner.cpp and transaction_runner.cpp
// fill in how a batch is claimed, run and reported.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <pgjq/worker.hpp>

#include "lease_keeper.hpp"
#include "worker_impl.hpp"

namespace pgjq
{

namespace detail
{

class runner
{
public:
  runner(worker::impl &w, std::string worker_id);
  virtual ~runner() = default;
  runner(const runner &) = delete;
  runner &operator=(const runner &) = delete;

  // Until the worker stops: claim, run, report; sleep on LISTEN when there is nothing to do; reconnect with
  // backoff when the session is lost.
  void run();

protected:
  // The next batch; reports what the previous one left to report, if the runner combines the two.
  virtual std::vector<job> next_batch() = 0;
  virtual void process(const std::vector<job> &jobs) = 0;
  // The session died or a call failed: whatever the server did not keep is forgotten here.
  virtual void batch_lost() {}
  // The worker is stopping: report what is still unreported.
  virtual void finish() = 0;

  void ensure_connection();

  worker::impl &m_w;
  const std::string m_worker_id;
  std::vector<std::string> m_types;
  std::unique_ptr<connection> m_conn;
  bool m_broken = false;

private:
  void idle_wait();
};

// The runner of worker_options::in_transaction == false (leases, heartbeats, complete_and_claim).
std::unique_ptr<runner> make_leased_runner(worker::impl &w, lease_keeper &keeper, std::string worker_id);
// The runner of worker_options::in_transaction == true (jobs held by the runner's open transaction).
std::unique_ptr<runner> make_transaction_runner(worker::impl &w, std::string worker_id);

} // namespace detail
} // namespace pgjq
