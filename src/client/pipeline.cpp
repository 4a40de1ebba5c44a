// pipeline.cpp: several commands in one round trip (libpq pipeline mode), for the calls that chain a
// completion, COMMIT, BEGIN and the next claim (connection.cpp).
#include <pgjq/connection.hpp>

#include "result.hpp"
#include "statements.hpp"

namespace pgjq
{

detail::result connection::run_pipeline(const std::vector<pipeline_step> &steps, std::size_t wanted_step)
{
  std::vector<std::vector<const char *>> values(steps.size());
  for (std::size_t i = 0; i < steps.size(); ++i)
    if (steps[i].command == nullptr)
      values[i] = bind(*steps[i].statement, *steps[i].args);
  // One round trip: the commands are sent together and answered after the sync. After an error the server
  // skips the rest until the sync, so a step runs only if every step before it succeeded.
  if (PQenterPipelineMode(m_conn) != 1)
    throw error("libpq could not enter pipeline mode: " + std::string(PQerrorMessage(m_conn)), std::string());
  bool sent = true;
  int syncs = 0;
  for (std::size_t i = 0; i < steps.size() && sent; ++i)
  {
    sent = steps[i].command != nullptr
               ? PQsendQueryParams(m_conn, steps[i].command, 0, nullptr, nullptr, nullptr, nullptr, 0) == 1
               : PQsendQueryPrepared(m_conn, steps[i].statement->name, static_cast<int>(values[i].size()),
                                     values[i].data(), nullptr, nullptr, 0) == 1;
    if (sent && steps[i].sync_after && i + 1 < steps.size())
    {
      sent = PQpipelineSync(m_conn) == 1;
      ++syncs;
    }
  }
  sent = sent && PQpipelineSync(m_conn) == 1;
  ++syncs;
  detail::result wanted, failure;
  std::size_t step = 0;
  int synced = 0;
  while (sent)
  {
    PGresult *res = PQgetResult(m_conn);
    if (res == nullptr)
    {
      // the end of one command's results (a sync's result is not followed by one)
      if (++step > steps.size() || PQstatus(m_conn) == CONNECTION_BAD)
        break;
      continue;
    }
    const ExecStatusType status = PQresultStatus(res);
    if (status == PGRES_PIPELINE_SYNC)
    {
      PQclear(res);
      if (++synced == syncs)
        break;
      continue;
    }
    if ((status == PGRES_FATAL_ERROR || status == PGRES_NONFATAL_ERROR) && failure.get() == nullptr)
      failure = detail::result(res);
    else if (step == wanted_step && status == PGRES_TUPLES_OK && wanted.get() == nullptr)
      wanted = detail::result(res);
    else
      PQclear(res);
  }
  PQexitPipelineMode(m_conn);
  collect_notifications();
  if (!sent)
    throw connection_lost(PQerrorMessage(m_conn), std::string());
  if (failure.get() != nullptr)
  {
    // a transaction block that a step opened or that the error aborted is not left open
    if (PQtransactionStatus(m_conn) == PQTRANS_INERROR)
      PQclear(PQexec(m_conn, "ROLLBACK"));
    detail::check(failure.release(), m_conn);
  }
  return wanted;
}

} // namespace pgjq
