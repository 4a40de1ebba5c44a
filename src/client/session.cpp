// session.cpp: the session's lifetime (open, borrow, reconnect, close), preparing the catalogue's
// statements (statements.hpp) once per session, running one with bound text parameters (every text the
// client sends passes connection::check_text first), and the RAII transaction. The calls of the SQL API are in connection.cpp, the pipeline in pipeline.cpp,
// notifications in notification.cpp.
#include <pgjq/connection.hpp>

#include <cstring>
#include <utility>

#include "codec.hpp"
#include "result.hpp"
#include "statements.hpp"

namespace pgjq
{

namespace
{

PGconn *open_session(const std::string &conninfo)
{
  detail::check_no_nul(conninfo, "conninfo");
  // expand_dbname lets conninfo be a full connection string or URI; the keys after it override it:
  // payloads are JSON, which is UTF-8.
  const char *keys[] = {"dbname", "fallback_application_name", "client_encoding", nullptr};
  const char *values[] = {conninfo.c_str(), "pgjq", "UTF8", nullptr};
  PGconn *conn = PQconnectdbParams(keys, values, 1);
  if (conn == nullptr)
    throw connection_lost("out of memory opening a connection", std::string());
  if (PQstatus(conn) != CONNECTION_OK)
  {
    std::string message = PQerrorMessage(conn);
    while (!message.empty() && message.back() == '\n')
      message.pop_back();
    PQfinish(conn);
    throw connection_lost(message, std::string());
  }
  return conn;
}

} // namespace

connection::connection(const std::string &conninfo, const connection_options &options)
    : m_conn(open_session(conninfo)), m_owned(true), m_options(options), m_conninfo(conninfo), m_checked_prepared(true)
{
}

connection::connection(PGconn *borrowed, const connection_options &options)
    : m_conn(borrowed), m_owned(false), m_options(options)
{
  if (borrowed == nullptr)
    throw usage_error("pgjq::connection: null PGconn");
}

connection::connection(connection &&other) noexcept
    : m_conn(std::exchange(other.m_conn, nullptr)), m_owned(other.m_owned), m_options(std::move(other.m_options)),
      m_listener(std::move(other.m_listener)), m_conninfo(std::move(other.m_conninfo)),
      m_prepared(std::move(other.m_prepared)), m_checked_prepared(other.m_checked_prepared),
      m_listening(std::move(other.m_listening)), m_notifications(std::move(other.m_notifications)),
      m_features(other.m_features)
{
}

connection &connection::operator=(connection &&other) noexcept
{
  if (this != &other)
  {
    close();
    m_conn = std::exchange(other.m_conn, nullptr);
    m_owned = other.m_owned;
    m_options = std::move(other.m_options);
    m_listener = std::move(other.m_listener);
    m_conninfo = std::move(other.m_conninfo);
    m_prepared = std::move(other.m_prepared);
    m_checked_prepared = other.m_checked_prepared;
    m_listening = std::move(other.m_listening);
    m_notifications = std::move(other.m_notifications);
    m_features = other.m_features;
  }
  return *this;
}

connection::~connection() { close(); }

void connection::close() noexcept
{
  if (m_conn != nullptr && m_owned)
    PQfinish(m_conn);
  m_conn = nullptr;
}

bool connection::is_open() const noexcept { return m_conn != nullptr && PQstatus(m_conn) == CONNECTION_OK; }

void connection::reconnect()
{
  if (!m_owned)
    throw usage_error("pgjq::connection::reconnect: the session is borrowed; its owner reopens it");
  PGconn *fresh = open_session(m_conninfo);
  close();
  m_conn = fresh;
  m_prepared.clear();
  m_notifications.clear();
  m_features.reset();
  const std::set<std::string> channels = m_listening;
  m_listening.clear();
  for (const std::string &channel : channels)
    listen(channel);
  if (m_listener)
    m_listener->reconnect();
}

void connection::prepare(const detail::statement &s)
{
  if (m_options.pooled || s.planned_per_call || m_prepared.count(s.name))
    return;
  if (!m_checked_prepared)
  {
    // A borrowed session may already hold our statements (an earlier wrapper of the same PGconn). Asking
    // is harmless inside the caller's transaction; a failed duplicate PREPARE would abort it.
    detail::result res = detail::check(
        PQexec(m_conn, "SELECT name FROM pg_catalog.pg_prepared_statements WHERE name LIKE 'pgjq\\_%'"), m_conn);
    for (int row = 0; row < res.rows(); ++row)
      m_prepared.insert(res.text(row, 0));
    m_checked_prepared = true;
    if (m_prepared.count(s.name))
      return;
  }
  detail::check(PQprepare(m_conn, s.name, s.sql, s.parameter_count, s.parameter_types), m_conn);
  m_prepared.insert(s.name);
}

void connection::check_text(std::string_view text, std::string_view argument) const
{
  if (detail::check_text(text, argument))
    return; // ASCII reads the same in every client_encoding
  const char *encoding = PQparameterStatus(m_conn, "client_encoding");
  if (encoding != nullptr && std::strcmp(encoding, "UTF8") != 0)
    throw usage_error(std::string(argument) + " holds non-ASCII text, but the session's client_encoding is " +
                      encoding + ": the server would read the client's UTF-8 as " + encoding +
                      " and store other characters; SET client_encoding TO 'UTF8' on the session");
}

std::vector<const char *> connection::bind(const detail::statement &st,
                                           const std::vector<std::optional<std::string>> &args) const
{
  if (m_conn == nullptr)
    throw connection_lost("the connection is closed", std::string());
  std::vector<const char *> values(args.size());
  for (std::size_t i = 0; i < args.size(); ++i)
  {
    if (!args[i])
      continue;
    check_text(*args[i], st.parameter_names[i]);
    values[i] = args[i]->c_str();
  }
  return values;
}

detail::result connection::run(const detail::statement &st, const std::vector<std::optional<std::string>> &args)
{
  const std::vector<const char *> values = bind(st, args);
  prepare(st);
  const int count = static_cast<int>(values.size());
  detail::result res =
      detail::check(m_options.pooled || st.planned_per_call
                        ? PQexecParams(m_conn, st.sql, count, st.parameter_types, values.data(), nullptr, nullptr, 0)
                        : PQexecPrepared(m_conn, st.name, count, values.data(), nullptr, nullptr, 0),
                    m_conn);
  collect_notifications();
  return res;
}

void connection::execute(const std::string &sql)
{
  if (m_conn == nullptr)
    throw connection_lost("the connection is closed", std::string());
  check_text(sql, "sql");
  detail::check(PQexec(m_conn, sql.c_str()), m_conn);
  collect_notifications();
}

void connection::require_transaction_status(int wanted, const char *method, const char *otherwise) const
{
  if (m_conn == nullptr || PQstatus(m_conn) == CONNECTION_BAD)
    throw connection_lost(std::string("pgjq::connection::") + method + ": the connection is closed", std::string());
  if (PQtransactionStatus(m_conn) != static_cast<PGTransactionStatusType>(wanted))
    throw usage_error(std::string("pgjq::connection::") + method + ": " + otherwise);
}

// transaction ------------------------------------------------------------------------------------------

transaction::transaction(connection &conn) : m_conn(conn) { m_conn.execute("BEGIN"); }

transaction::~transaction()
{
  if (!m_open)
    return;
  try
  {
    m_conn.execute("ROLLBACK");
  }
  catch (...)
  {
    // A destructor must not throw; a lost session has rolled back by itself.
  }
}

void transaction::commit()
{
  if (!m_open)
    throw usage_error("pgjq::transaction::commit: the transaction is already closed");
  m_open = false;
  PGconn *conn = m_conn.native_handle();
  if (conn == nullptr)
    throw connection_lost("the connection is closed", std::string());
  detail::result res = detail::check(PQexec(conn, "COMMIT"), conn);
  // COMMIT of a transaction that an earlier error aborted succeeds but rolls back: say so, or the caller
  // would believe its jobs exist.
  if (std::string(PQcmdStatus(res.get())) == "ROLLBACK")
    throw error("the transaction was rolled back because an earlier statement failed", "25P02");
}

void transaction::rollback()
{
  if (!m_open)
    throw usage_error("pgjq::transaction::rollback: the transaction is already closed");
  m_open = false;
  m_conn.execute("ROLLBACK");
}

} // namespace pgjq
