// pgjq/cluster.hpp: the client of a pgjq cluster (docs/scale-out.md). The router database (pgjq_router)
// says where each queue lives; these classes read that once and then talk to the nodes themselves:
//   pgjq::cluster::topology  the nodes and the placement of the queues, as the router holds them
//   pgjq::cluster::producer  enqueues on the queue's node (one hop), through the router for a partitioned queue
//   pgjq::cluster::worker    one pgjq::worker per node of its queue, each claiming and LISTENing on its node
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <pgjq/connection.hpp>
#include <pgjq/worker.hpp>

namespace pgjq::cluster
{

struct node_info
{
  int node = 0;
  std::string conninfo; // as the router holds it (no password: see options::node_options)
};

struct placement
{
  std::string queue;
  int partition = 0;
  int node = 0;
  std::optional<int> draining_node; // a move in progress: the node the partition leaves, still drained
};

class PGJQ_API topology
{
public:
  // Reads pgjq_router.nodes() and pgjq_router.placements through a connection to the router.
  static topology load(connection &router);

  const std::vector<node_info> &nodes() const noexcept { return m_nodes; }
  const std::vector<placement> &placements() const noexcept { return m_placements; }
  // The nodes a worker of the queue claims from: its partitions' nodes and the nodes they are leaving.
  std::vector<int> claim_nodes(const std::string &queue) const;
  // The node that takes a queue's new jobs when the queue has one partition; nullopt when it is
  // partitioned (the router picks the partition from the routing key) or not placed.
  std::optional<int> producer_node(const std::string &queue) const;
  // Throws usage_error for a node number the cluster does not have.
  const std::string &conninfo(int node) const;
  // A job id names its node (pgjq.join_cluster).
  static int node_of_job(std::int64_t job_id) noexcept { return static_cast<int>(job_id % 1024); }

private:
  std::vector<node_info> m_nodes;
  std::vector<placement> m_placements;
};

struct options
{
  std::string router_conninfo;
  // Appended to every node's conninfo: what the router must not hold, such as user, password or sslmode.
  std::string node_options;
  // How often the placement is read again, so that producers and workers follow a queue that moves.
  std::chrono::milliseconds placement_refresh{5000};
};

// Not thread-safe: one producer per thread. Connections are opened when first needed, one per node.
class PGJQ_API producer
{
public:
  explicit producer(options cluster_options);
  producer(const producer &) = delete;
  producer &operator=(const producer &) = delete;
  ~producer();

  // As connection::enqueue and enqueue_batch (options.queue names the queue). A queue with one partition
  // gets the call on its node; when the node answers that the queue does not exist (it moved), the
  // placement is read again and the call goes once more to the new node. A partitioned or unplaced queue
  // gets the call through the router (a batch split over partitions is then not all or nothing:
  // docs/scale-out.md). The placement is read again every placement_refresh (while the router is down, the
  // last one read serves), and a session found closed is reopened before a call; a connection lost during a call is the caller's (the job may have
  // committed), and the next call reopens it.
  std::int64_t enqueue(const std::string &job_type, const nlohmann::json &payload = nlohmann::json::object(),
                       const enqueue_options &options = {});
  std::vector<std::int64_t> enqueue_batch(const std::string &job_type, const std::vector<nlohmann::json> &payloads,
                                          const enqueue_options &options = {});

  // The session on a queue's node, for a producer whose own data lives there: what it writes and enqueues
  // in one transaction there commits together. Throws unknown_queue for a queue without a single node.
  connection &node_of_queue(const std::string &queue);
  connection &router() noexcept { return *m_router; }
  const topology &current_topology() const noexcept { return m_topology; }
  void refresh();

private:
  template <typename Call> auto on_queue_node(const std::string &queue, Call call);
  connection &node_connection(int node);
  connection &open_router(); // the router's session, reopened if it was found closed

  options m_options;
  std::unique_ptr<connection> m_router;
  topology m_topology;
  std::chrono::steady_clock::time_point m_loaded;
  struct node_session
  {
    std::string conninfo;
    std::unique_ptr<connection> conn;
  };
  std::map<int, node_session> m_nodes;
};

struct worker_options
{
  options cluster;
  // What each node's pgjq::worker runs with: queue, handlers' concurrency, batch size, timeouts, log.
  // Its conninfo is ignored (each node's comes from the router), and session.listen_conninfo must stay
  // empty (one LISTEN server cannot serve every node); handle_signals applies to the cluster worker as a
  // whole.
  pgjq::worker_options worker;
};

// Runs one pgjq::worker per node of its queue, each on its own thread with its own connections to its
// node: it claims there, LISTENs there, and reconnects there with backoff when that node goes away, while
// the workers of the other nodes go on.
class PGJQ_API worker
{
public:
  explicit worker(worker_options options);
  worker(const worker &) = delete;
  worker &operator=(const worker &) = delete;
  ~worker();

  void on(const std::string &job_type, handler h);
  // Until stop() (or SIGINT/SIGTERM with worker.handle_signals): follows the placement, starting a node's
  // worker when the queue appears there and stopping it gracefully when the queue has left it.
  void run();
  void stop() noexcept;
  // Summed over every node's worker, including those already stopped.
  worker_stats stats() const;
  // The nodes whose workers run now.
  std::vector<int> nodes() const;

  struct impl;

private:
  std::unique_ptr<impl> m_impl;
};

} // namespace pgjq::cluster
