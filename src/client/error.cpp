// error.cpp: maps the server's SQLSTATE to the client's exception types (the table is in docs/errors.md and
// in pgjq/error.hpp), and recognises a lost connection.
#include <pgjq/error.hpp>

#include "result.hpp"

namespace pgjq
{

error::error(const std::string &message, std::string sqlstate, std::string detail, std::string hint)
    : std::runtime_error(message), m_sqlstate(std::move(sqlstate)), m_detail(std::move(detail)), m_hint(std::move(hint))
{
}

namespace detail
{

namespace
{

std::string field(const PGresult *res, int code)
{
  const char *value = PQresultErrorField(res, code);
  return value ? std::string(value) : std::string();
}

std::string chomp(std::string text)
{
  while (!text.empty() && (text.back() == '\n' || text.back() == ' '))
    text.pop_back();
  return text;
}

} // namespace

void throw_sqlstate(const std::string &sqlstate, const std::string &message, const std::string &detail,
                    const std::string &hint)
{
  const std::string cls = sqlstate.substr(0, 2);
  if (sqlstate == "PJ001")
    throw queue_full(message, sqlstate, detail, hint);
  if (sqlstate == "PJ002")
    throw not_lease_holder(message, sqlstate, detail, hint);
  if (sqlstate == "PJ003")
    throw job_cancelled(message, sqlstate, detail, hint);
  if (sqlstate == "PJ004")
    throw unique_key_held(message, sqlstate, detail, hint);
  if (sqlstate == "PJ005")
    throw job_timed_out(message, sqlstate, detail, hint);
  if (sqlstate == "PJ006")
    throw event_timed_out(message, sqlstate, detail, hint);
  if (sqlstate == "42704")
    throw unknown_queue(message, sqlstate, detail, hint);
  if (sqlstate == "42710")
    throw queue_exists(message, sqlstate, detail, hint);
  if (sqlstate == "P0002")
    throw job_not_found(message, sqlstate, detail, hint);
  if (sqlstate == "42501")
    throw permission_denied(message, sqlstate, detail, hint);
  if (sqlstate == "55000" || sqlstate == "55006")
    throw wrong_state(message, sqlstate, detail, hint);
  // Class 22 is "data exception": every bad value; 54000 is the payload size limit.
  if (cls == "22" || sqlstate == "54000")
    throw bad_argument(message, sqlstate, detail, hint);
  // Class 08 is the connection itself; 57P01..57P03 are the server shutting down or not yet accepting,
  // after which the session is gone too.
  if (cls == "08" || sqlstate == "57P01" || sqlstate == "57P02" || sqlstate == "57P03")
    throw connection_lost(message, sqlstate, detail, hint);
  throw error(message, sqlstate, detail, hint);
}

void throw_connection_lost(PGconn *conn, const std::string &fallback)
{
  std::string message = conn ? chomp(PQerrorMessage(conn)) : std::string();
  throw connection_lost(message.empty() ? fallback : message, std::string());
}

result check(PGresult *res, PGconn *conn)
{
  result owned(res);
  if (res == nullptr)
    throw_connection_lost(conn, "no result from the server");
  const ExecStatusType status = PQresultStatus(res);
  if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK)
    return owned;
  const std::string sqlstate = field(res, PG_DIAG_SQLSTATE);
  std::string message = field(res, PG_DIAG_MESSAGE_PRIMARY);
  if (message.empty())
    message = chomp(PQresultErrorMessage(res));
  if (message.empty())
    message = PQresStatus(status);
  // Whatever the server said last, a session that is gone is a lost connection to the caller: the call's
  // outcome is unknown and the session must be reopened.
  if (PQstatus(conn) == CONNECTION_BAD)
    throw connection_lost(message, sqlstate);
  throw_sqlstate(sqlstate, message, field(res, PG_DIAG_MESSAGE_DETAIL), field(res, PG_DIAG_MESSAGE_HINT));
}

} // namespace detail
} // namespace pgjq
