// cluster_producer.cpp: enqueues on the queue's node, through the router when the router must choose.
#include <pgjq/cluster.hpp>

#include "timeouts.hpp"

namespace pgjq::cluster
{

producer::producer(options cluster_options)
    : m_options(std::move(cluster_options)), m_router(std::make_unique<connection>(m_options.router_conninfo))
{
  refresh();
}

producer::~producer() = default;

connection &producer::open_router()
{
  if (!m_router->is_open())
    m_router->reconnect();
  return *m_router;
}

void producer::refresh()
{
  m_topology = topology::load(open_router());
  m_loaded = std::chrono::steady_clock::now();
}

// A node whose conninfo changed (a failover pointed the router elsewhere) gets a new session.
connection &producer::node_connection(int node)
{
  const std::string conninfo = m_topology.conninfo(node) + " " + m_options.node_options;
  node_session &session = m_nodes[node];
  if (!session.conn || session.conninfo != conninfo)
  {
    session.conn = std::make_unique<connection>(conninfo);
    session.conninfo = conninfo;
  }
  else if (!session.conn->is_open())
    session.conn->reconnect();
  return *session.conn;
}

connection &producer::node_of_queue(const std::string &queue)
{
  std::optional<int> node = m_topology.producer_node(queue);
  if (!node)
  {
    refresh();
    node = m_topology.producer_node(queue);
  }
  if (!node)
    throw unknown_queue("queue \"" + queue + "\" has no single node in the cluster", "42704");
  return node_connection(*node);
}

// An unknown queue on the node means it moved (or was dropped): nothing was enqueued, so the call may go
// once more where the router now places the queue. Any other failure, a lost connection included (the
// job may have committed), is the caller's.
template <typename Call> auto producer::on_queue_node(const std::string &queue, Call call)
{
  if (std::chrono::steady_clock::now() - m_loaded >= detail::clock_duration(m_options.placement_refresh))
  {
    // A router that is down must not stop enqueues into nodes that are up: the placement read last
    // serves until the router answers again (a moved queue is still found through the node's refusal).
    try
    {
      refresh();
    }
    catch (const pgjq::error &)
    {
      m_loaded = std::chrono::steady_clock::now();
    }
  }
  std::optional<int> node = m_topology.producer_node(queue);
  if (!node)
    return call(open_router());
  try
  {
    return call(node_connection(*node));
  }
  catch (const unknown_queue &)
  {
    refresh();
    std::optional<int> now = m_topology.producer_node(queue);
    if (now == node)
      throw;
    return now ? call(node_connection(*now)) : call(open_router());
  }
}

std::int64_t producer::enqueue(const std::string &job_type, const nlohmann::json &payload,
                               const enqueue_options &options)
{
  return on_queue_node(options.queue, [&](connection &c) { return c.enqueue(job_type, payload, options); });
}

std::vector<std::int64_t> producer::enqueue_batch(const std::string &job_type,
                                                  const std::vector<nlohmann::json> &payloads,
                                                  const enqueue_options &options)
{
  return on_queue_node(options.queue, [&](connection &c) { return c.enqueue_batch(job_type, payloads, options); });
}

} // namespace pgjq::cluster
