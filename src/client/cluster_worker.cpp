// cluster_worker.cpp: one pgjq::worker per node of the queue, started and stopped as the placement the
// router holds changes. Each node's worker owns its connections, reconnects and LISTEN; this file only
// decides which nodes have one.
#include <pgjq/cluster.hpp>

#include <cstdio>
#include <mutex>
#include <thread>

#include "stop_signal.hpp"

namespace pgjq::cluster
{

namespace
{

struct node_worker
{
  std::string conninfo;
  std::unique_ptr<pgjq::worker> worker;
  std::thread thread;
};

void add(worker_stats &sum, const worker_stats &s)
{
  sum.claimed += s.claimed;
  sum.completed += s.completed;
  sum.failed += s.failed;
  sum.released += s.released;
  sum.abandoned += s.abandoned;
  sum.heartbeats += s.heartbeats;
  sum.idle_waits += s.idle_waits;
  sum.reconnects += s.reconnects;
}

} // namespace

struct worker::impl
{
  explicit impl(worker_options o) : options(std::move(o)) {}

  void log(const std::string &message) const
  {
    if (options.worker.log)
      options.worker.log(message);
    else
      std::fprintf(stderr, "pgjq::cluster::worker: %s\n", message.c_str());
  }

  // The nodes that should have a worker now, with their conninfo; nullopt when the router cannot say.
  std::optional<std::map<int, std::string>> wanted_nodes()
  {
    try
    {
      if (!router || !router->is_open())
        router = std::make_unique<connection>(options.cluster.router_conninfo);
      topology t = topology::load(*router);
      std::map<int, std::string> wanted;
      for (int node : t.claim_nodes(options.worker.queue))
        wanted[node] = t.conninfo(node) + " " + options.cluster.node_options;
      return wanted;
    }
    catch (const std::exception &e)
    {
      router.reset();
      log(std::string("cannot read the placement from the router (the node workers go on): ") + e.what());
      return std::nullopt;
    }
  }

  void start(int node, const std::string &conninfo)
  {
    pgjq::worker_options o = options.worker;
    o.conninfo = conninfo;
    o.handle_signals = false;
    auto w = std::make_unique<pgjq::worker>(o);
    for (const auto &[type, h] : handlers)
      w->on(type, h);
    // The slot first, the thread last: nothing can throw once the thread runs.
    node_worker *slot;
    {
      std::lock_guard<std::mutex> guard(stats_mutex);
      slot = &running[node];
      slot->conninfo = conninfo;
      slot->worker = std::move(w);
    }
    pgjq::worker *raw = slot->worker.get();
    try
    {
      slot->thread = std::thread(
          [this, raw, node]
          {
            try
            {
              raw->run();
            }
            catch (const std::exception &e)
            {
              log("the worker of node " + std::to_string(node) + " stopped: " + e.what());
            }
          });
    }
    catch (...)
    {
      std::lock_guard<std::mutex> guard(stats_mutex);
      running.erase(node);
      throw;
    }
  }

  void stop_all() noexcept
  {
    for (auto &[node, slot] : running)
      slot.worker->stop();
    std::vector<int> all;
    for (const auto &[node, slot] : running)
      all.push_back(node);
    for (int node : all)
      stop_node(node);
  }

  void stop_node(int node)
  {
    auto it = running.find(node);
    it->second.worker->stop();
    it->second.thread.join();
    std::lock_guard<std::mutex> guard(stats_mutex); // stats() reads the map from other threads
    add(retired, it->second.worker->stats());
    running.erase(it);
  }

  worker_options options;
  std::map<std::string, handler> handlers;
  detail::stop_signal stop;
  std::unique_ptr<connection> router;
  std::map<int, node_worker> running; // only run()'s thread changes it, under stats_mutex
  mutable std::mutex stats_mutex;     // for stats() and nodes() on other threads
  worker_stats retired;
};

worker::worker(worker_options options) : m_impl(std::make_unique<impl>(std::move(options)))
{
  if (m_impl->options.cluster.router_conninfo.empty())
    throw usage_error("pgjq::cluster::worker: router_conninfo is required");
  if (m_impl->options.cluster.placement_refresh.count() <= 0)
    throw usage_error("pgjq::cluster::worker: placement_refresh must be positive");
  if (!m_impl->options.worker.session.listen_conninfo.empty())
    throw usage_error(
        "pgjq::cluster::worker: session.listen_conninfo would make every node's worker LISTEN on one server");
}

// run() stops its node workers on every way out; a worker destroyed while run() is under way is a misuse
// that std::thread's destructor would end in std::terminate anyway.
worker::~worker() = default;

void worker::on(const std::string &job_type, handler h)
{
  if (!h)
    throw usage_error("pgjq::cluster::worker::on: empty handler for job type " + job_type);
  m_impl->handlers[job_type] = std::move(h);
}

void worker::run()
{
  impl &w = *m_impl;
  if (w.handlers.empty())
    throw usage_error("pgjq::cluster::worker::run: no handler registered");
  std::optional<detail::signal_scope> signals;
  if (w.options.worker.handle_signals)
    signals.emplace(w.stop);
  // On every way out, an exception included, each node's worker finishes what it holds and its thread ends.
  struct stop_all_on_exit
  {
    impl &w;
    ~stop_all_on_exit() { w.stop_all(); }
  } stop_all{w};
  while (!w.stop.requested())
  {
    if (std::optional<std::map<int, std::string>> wanted = w.wanted_nodes())
    {
      // A node the queue left, or whose conninfo changed: its worker finishes what it holds first.
      std::vector<int> leaving;
      for (const auto &[node, slot] : w.running)
      {
        auto it = wanted->find(node);
        if (it == wanted->end() || it->second != slot.conninfo)
          leaving.push_back(node);
      }
      for (int node : leaving)
        w.stop_node(node);
      for (const auto &[node, conninfo] : *wanted)
        if (w.running.count(node) == 0)
          w.start(node, conninfo);
    }
    w.stop.sleep_for(w.options.cluster.placement_refresh);
  }
}

void worker::stop() noexcept { m_impl->stop.request(); }

worker_stats worker::stats() const
{
  std::lock_guard<std::mutex> guard(m_impl->stats_mutex);
  worker_stats sum = m_impl->retired;
  for (const auto &[node, slot] : m_impl->running)
    add(sum, slot.worker->stats());
  return sum;
}

std::vector<int> worker::nodes() const
{
  std::lock_guard<std::mutex> guard(m_impl->stats_mutex);
  std::vector<int> nodes;
  for (const auto &[node, slot] : m_impl->running)
    nodes.push_back(node);
  return nodes;
}

} // namespace pgjq::cluster
