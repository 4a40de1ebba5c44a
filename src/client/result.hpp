// result.hpp (internal): RAII ownership of a PGresult and the check that turns a failed one into the
// pgjq::error subclass of its SQLSTATE.
#pragma once

#include <string>
#include <string_view>

#include <libpq-fe.h>

namespace pgjq::detail
{

class result
{
public:
  explicit result(PGresult *res = nullptr) noexcept : m_res(res) {}
  result(result &&other) noexcept : m_res(other.m_res) { other.m_res = nullptr; }
  result &operator=(result &&other) noexcept
  {
    if (this != &other)
    {
      PQclear(m_res);
      m_res = other.m_res;
      other.m_res = nullptr;
    }
    return *this;
  }
  result(const result &) = delete;
  result &operator=(const result &) = delete;
  ~result() { PQclear(m_res); }

  PGresult *get() const noexcept { return m_res; }
  PGresult *release() noexcept
  {
    PGresult *res = m_res;
    m_res = nullptr;
    return res;
  }
  int rows() const noexcept { return PQntuples(m_res); }
  int columns() const noexcept { return PQnfields(m_res); }
  bool is_null(int row, int col) const noexcept { return PQgetisnull(m_res, row, col) != 0; }
  std::string_view view(int row, int col) const noexcept
  {
    return std::string_view(PQgetvalue(m_res, row, col), static_cast<std::size_t>(PQgetlength(m_res, row, col)));
  }
  std::string text(int row, int col) const { return std::string(view(row, col)); }

private:
  PGresult *m_res;
};

// Takes ownership of res; returns it when the command succeeded, otherwise throws the mapped error.
// A null res (libpq could not even send the command) is reported from the connection's state.
result check(PGresult *res, PGconn *conn);

// Throws the pgjq::error subclass for a SQLSTATE (connection_lost for class 08 and server shutdown).
[[noreturn]] void throw_sqlstate(const std::string &sqlstate, const std::string &message,
                                 const std::string &detail = {}, const std::string &hint = {});

// libpq's message for a broken session, without its trailing newline.
[[noreturn]] void throw_connection_lost(PGconn *conn, const std::string &fallback);

} // namespace pgjq::detail
