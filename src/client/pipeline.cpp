// pipeline.cpp: several commands in one round trip (libpq pipeline mode), for the calls that chain a
// completion, COMMIT, BEGIN and the next claim (connection.cpp); pooled, one round trip per transaction.
#include <pgjq/connection.hpp>

#include "result.hpp"
#include "statements.hpp"

namespace pgjq
{

detail::result connection::run_pipeline(const std::vector<pipeline_step> &steps, std::size_t wanted_step)
{
  // Every step's arguments are checked before any statement is prepared or sent.
  std::vector<std::vector<const char *>> values(steps.size());
  for (std::size_t i = 0; i < steps.size(); ++i)
    if (steps[i].command == nullptr)
      values[i] = bind(*steps[i].statement, *steps[i].args);
  for (const pipeline_step &step : steps)
    if (step.command == nullptr)
      prepare(*step.statement);
  // The commands are sent together and answered after the sync. After an error the server skips the rest
  // until the sync, so a step runs only if every step before it in its segment succeeded.
  if (PQenterPipelineMode(m_conn) != 1)
    throw error("libpq could not enter pipeline mode: " + std::string(PQerrorMessage(m_conn)), std::string());
  detail::result wanted, failure;
  std::size_t answered = 0; // steps whose results have all been read
  // Reads the results up to the next sync; false if the session broke.
  const auto read_segment = [&]()
  {
    for (;;)
    {
      PGresult *res = PQgetResult(m_conn);
      if (res == nullptr)
      {
        // the end of one command's results (a sync's result is not followed by one)
        if (++answered > steps.size() || PQstatus(m_conn) == CONNECTION_BAD)
          return false;
        continue;
      }
      const ExecStatusType status = PQresultStatus(res);
      if (status == PGRES_PIPELINE_SYNC)
      {
        PQclear(res);
        return true;
      }
      if ((status == PGRES_FATAL_ERROR || status == PGRES_NONFATAL_ERROR) && failure.get() == nullptr)
        failure = detail::result(res);
      else if (answered == wanted_step && status == PGRES_TUPLES_OK && wanted.get() == nullptr)
        wanted = detail::result(res);
      else
        PQclear(res);
    }
  };
  // One round trip for all segments. Pooled, a segment whose transaction ends may leave the pooler free to
  // hand the server session to another client: the next segment is sent only once it is answered.
  bool sent = true;
  for (std::size_t i = 0; i < steps.size() && sent; ++i)
  {
    const pipeline_step &step = steps[i];
    const int count = static_cast<int>(values[i].size());
    if (step.command != nullptr)
      sent = PQsendQueryParams(m_conn, step.command, 0, nullptr, nullptr, nullptr, nullptr, 0) == 1;
    else if (m_options.pooled)
      sent = PQsendQueryParams(m_conn, step.statement->sql, count, step.statement->parameter_types, values[i].data(),
                               nullptr, nullptr, 0) == 1;
    else
      sent = PQsendQueryPrepared(m_conn, step.statement->name, count, values[i].data(), nullptr, nullptr, 0) == 1;
    const bool segment_ends = step.sync_after || i + 1 == steps.size();
    if (sent && segment_ends)
      sent = PQpipelineSync(m_conn) == 1 && (!m_options.pooled || read_segment());
  }
  if (sent && !m_options.pooled)
    for (std::size_t i = 0; i < steps.size() && sent; ++i)
      if (steps[i].sync_after || i + 1 == steps.size())
        sent = read_segment();
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
