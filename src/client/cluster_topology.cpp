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

// One statement, so that the nodes and the placement come from one snapshot (a node added between two
// reads would be placed before it is known).
topology topology::load(connection &router)
{
  PGconn *conn = router.native_handle();
  detail::result rows =
      detail::check(PQexec(conn, "SELECT 'node', node, conninfo, NULL, NULL FROM pgjq_router.nodes()"
                                 " UNION ALL SELECT 'placement', partition, queue_name, node, draining_node"
                                 "   FROM pgjq_router.placements ORDER BY 1, 3, 2"),
                    conn);
  topology t;
  for (int i = 0; i < rows.rows(); ++i)
  {
    if (rows.view(i, 0) == "node")
    {
      t.m_nodes.push_back(node_info{to_int(rows, i, 1), rows.text(i, 2)});
      continue;
    }
    placement p{rows.text(i, 2), to_int(rows, i, 1), to_int(rows, i, 3), std::nullopt};
    if (!rows.is_null(i, 4))
      p.draining_node = to_int(rows, i, 4);
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
