// cluster_topology.cpp: the cluster's shape as the router database holds it (pgjq_router.nodes(),
// pgjq_router.placements), and the questions the producer and the worker ask of it.
#include <pgjq/cluster.hpp>

#include <algorithm>
#include <string>

#include "result.hpp"

namespace pgjq::cluster
{

namespace
{

int to_int(const detail::result &r, int row, int col) { return std::stoi(r.text(row, col)); }

} // namespace

topology topology::load(connection &router)
{
  PGconn *conn = router.native_handle();
  topology t;
  detail::result nodes =
      detail::check(PQexec(conn, "SELECT node, conninfo FROM pgjq_router.nodes() ORDER BY node"), conn);
  for (int i = 0; i < nodes.rows(); ++i)
    t.m_nodes.push_back(node_info{to_int(nodes, i, 0), nodes.text(i, 1)});
  detail::result placed =
      detail::check(PQexec(conn, "SELECT queue_name, partition, node, draining_node FROM pgjq_router.placements"
                                 " ORDER BY queue_name, partition"),
                    conn);
  for (int i = 0; i < placed.rows(); ++i)
  {
    placement p{placed.text(i, 0), to_int(placed, i, 1), to_int(placed, i, 2), std::nullopt};
    if (!placed.is_null(i, 3))
      p.draining_node = to_int(placed, i, 3);
    t.m_placements.push_back(std::move(p));
  }
  return t;
}

std::vector<int> topology::claim_nodes(const std::string &queue) const
{
  std::vector<int> nodes;
  for (const placement &p : m_placements)
  {
    if (p.queue != queue)
      continue;
    nodes.push_back(p.node);
    if (p.draining_node)
      nodes.push_back(*p.draining_node);
  }
  std::sort(nodes.begin(), nodes.end());
  nodes.erase(std::unique(nodes.begin(), nodes.end()), nodes.end());
  return nodes;
}

std::optional<int> topology::producer_node(const std::string &queue) const
{
  std::optional<int> node;
  for (const placement &p : m_placements)
  {
    if (p.queue != queue)
      continue;
    if (node)
      return std::nullopt; // partitioned: the router picks by routing key
    node = p.node;
  }
  return node;
}

const std::string &topology::conninfo(int node) const
{
  for (const node_info &n : m_nodes)
    if (n.node == node)
      return n.conninfo;
  throw usage_error("pgjq::cluster: node " + std::to_string(node) + " is not in the cluster");
}

} // namespace pgjq::cluster
