// pg_util.cpp: the bench's own libpq session (setup, sizes, the recipe's statements), with every failure
// turned into an exception carrying the server's message.
#include "bench.hpp"

#include <libpq-fe.h>

namespace pgjq::bench
{

namespace
{

std::string trimmed_error(PGconn *conn)
{
  std::string message = conn ? PQerrorMessage(conn) : "no connection";
  while (!message.empty() && (message.back() == '\n' || message.back() == ' '))
    message.pop_back();
  return message;
}

PGresult *checked(PGresult *res, PGconn *conn, const std::string &what)
{
  const ExecStatusType st = res ? PQresultStatus(res) : PGRES_FATAL_ERROR;
  if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK)
    return res;
  std::string message = res ? PQresultErrorMessage(res) : trimmed_error(conn);
  while (!message.empty() && message.back() == '\n')
    message.pop_back();
  PQclear(res);
  throw std::runtime_error(what + ": " + message);
}

} // namespace

pg_session::pg_session(const std::string &conninfo)
{
  m_conn = PQconnectdb(conninfo.c_str());
  if (PQstatus(m_conn) != CONNECTION_OK)
  {
    const std::string message = trimmed_error(m_conn);
    PQfinish(m_conn);
    m_conn = nullptr;
    throw std::runtime_error("cannot connect (" + conninfo + "): " + message);
  }
}

pg_session pg_session::borrow(PGconn *conn)
{
  pg_session s;
  s.m_conn = conn;
  s.m_owned = false;
  return s;
}

pg_session::pg_session(pg_session &&other) noexcept : m_conn(other.m_conn), m_owned(other.m_owned)
{
  other.m_conn = nullptr;
}

pg_session::~pg_session()
{
  if (m_conn && m_owned)
    PQfinish(m_conn);
}

void pg_session::exec(const std::string &sql)
{
  PQclear(checked(PQexec(m_conn, sql.c_str()), m_conn, sql.substr(0, 80)));
}

std::optional<std::string> pg_session::scalar(const std::string &sql)
{
  result_guard res(checked(PQexec(m_conn, sql.c_str()), m_conn, sql.substr(0, 80)));
  if (res.rows() < 1 || PQgetisnull(res.get(), 0, 0))
    return std::nullopt;
  return std::string(res.value(0, 0));
}

std::int64_t pg_session::scalar_int(const std::string &sql)
{
  const auto v = scalar(sql);
  return v ? std::stoll(*v) : 0;
}

PGresult *pg_session::query(const std::string &sql)
{
  return checked(PQexec(m_conn, sql.c_str()), m_conn, sql.substr(0, 80));
}

void pg_session::prepare(const std::string &name, const std::string &sql)
{
  PQclear(checked(PQprepare(m_conn, name.c_str(), sql.c_str(), 0, nullptr), m_conn, "prepare " + name));
}

PGresult *pg_session::exec_prepared(const std::string &name, const std::vector<const char *> &params)
{
  return checked(
      PQexecPrepared(m_conn, name.c_str(), static_cast<int>(params.size()), params.data(), nullptr, nullptr, 0), m_conn,
      name);
}

result_guard::~result_guard() { PQclear(m_res); }
int result_guard::rows() const noexcept { return PQntuples(m_res); }
long result_guard::affected() const noexcept
{
  const char *n = PQcmdTuples(m_res);
  return (n && *n) ? std::atol(n) : 0;
}
const char *result_guard::value(int row, int col) const noexcept { return PQgetvalue(m_res, row, col); }

} // namespace pgjq::bench
