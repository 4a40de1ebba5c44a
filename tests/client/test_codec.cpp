// test_codec.cpp: randomized round trips of the client's hand-written encodings (array literals, intervals,
// timestamps, epoch seconds) through the server's own parsers and printers. A value the client encodes must
// reach the server unchanged, and what the server prints must decode to the same value.
// PGJQ_TEST_SEED=N repeats a run; the seed is printed when a case fails.
#include "fixture.hpp"

#include <cmath>
#include <cstdio>
#include <memory>
#include <random>

#include "../../src/client/codec.hpp"

using namespace pgjq_test;
namespace detail = pgjq::detail;

namespace
{

constexpr int k_rounds = 1500;

std::uint64_t seed()
{
  static const std::uint64_t value = []
  {
    const char *fixed = std::getenv("PGJQ_TEST_SEED");
    return fixed != nullptr ? std::stoull(fixed) : std::random_device{}();
  }();
  return value;
}

// A plain libpq session, so that each round trip is exactly one statement with the text under test as its
// only parameter, in a time zone that is not UTC (the encodings must not depend on the session's).
class server
{
public:
  server() : m_conn(PQconnectdb(conninfo().c_str()), PQfinish)
  {
    BOOST_REQUIRE_MESSAGE(PQstatus(m_conn.get()) == CONNECTION_OK, PQerrorMessage(m_conn.get()));
    rows("SELECT set_config('TimeZone', $1, false)", "America/St_Johns");
  }

  // The rows and columns of `sql` run with $1 = `parameter`; fails the test on any error.
  std::vector<std::vector<std::string>> rows(const char *sql, const std::string &parameter)
  {
    const char *values[] = {parameter.c_str()};
    std::unique_ptr<PGresult, decltype(&PQclear)> result(
        PQexecParams(m_conn.get(), sql, 1, nullptr, values, nullptr, nullptr, 0), PQclear);
    BOOST_REQUIRE_MESSAGE(PQresultStatus(result.get()) == PGRES_TUPLES_OK,
                          "seed " << seed() << ": " << sql << " with $1 = " << parameter << ": "
                                  << PQresultErrorMessage(result.get()));
    std::vector<std::vector<std::string>> out(PQntuples(result.get()));
    for (int row = 0; row < PQntuples(result.get()); ++row)
      for (int column = 0; column < PQnfields(result.get()); ++column)
        out[row].emplace_back(PQgetvalue(result.get(), row, column));
    return out;
  }

  std::string single(const char *sql, const std::string &parameter)
  {
    auto out = rows(sql, parameter);
    BOOST_REQUIRE_EQUAL(out.size(), 1u);
    return out[0][0];
  }

private:
  std::unique_ptr<PGconn, decltype(&PQfinish)> m_conn;
};

// Text that array literals make dangerous: quotes, backslashes, braces, commas, blanks, the word NULL,
// multibyte characters; sometimes empty.
std::string random_text(std::mt19937_64 &random)
{
  static const std::vector<std::string> pieces = {"\"", "\\", "{", "}", ",", " ",    "\t",   "\n", "NULL", "null",
                                                  "a",  "Z",  "0", "'", "é", "🙂", "\\\"", "{}", "\"\""};
  std::uniform_int_distribution<int> length(0, 12);
  std::uniform_int_distribution<std::size_t> piece(0, pieces.size() - 1);
  std::string out;
  for (int n = length(random); n > 0; --n)
    out += pieces[piece(random)];
  return out;
}

std::int64_t random_int64(std::mt19937_64 &random)
{
  static const std::vector<std::int64_t> edges = {
      0, 1, -1, INT64_MAX, INT64_MIN, INT32_MAX, INT32_MIN, static_cast<std::int64_t>(INT32_MAX) + 1};
  std::uniform_int_distribution<int> kind(0, 3);
  switch (kind(random))
  {
  case 0:
    return edges[std::uniform_int_distribution<std::size_t>(0, edges.size() - 1)(random)];
  case 1:
    return std::uniform_int_distribution<std::int64_t>(-1000, 1000)(random);
  default:
    return static_cast<std::int64_t>(random());
  }
}

// Microseconds anywhere a time_point can hold (system_clock counts nanoseconds here: about 1678 to 2261).
std::chrono::microseconds random_instant(std::mt19937_64 &random)
{
  constexpr std::int64_t limit = INT64_MAX / 1000 - 1;
  std::uniform_int_distribution<int> kind(0, 2);
  switch (kind(random))
  {
  case 0: // near the epoch, where the sign of the fraction matters
    return std::chrono::microseconds(std::uniform_int_distribution<std::int64_t>(-3000000, 3000000)(random));
  case 1: // whole seconds
    return std::chrono::seconds(std::uniform_int_distribution<std::int64_t>(-limit / 1000000, limit / 1000000)(random));
  default:
    return std::chrono::microseconds(std::uniform_int_distribution<std::int64_t>(-limit, limit)(random));
  }
}

} // namespace

BOOST_AUTO_TEST_SUITE(codec)

BOOST_AUTO_TEST_CASE(text_arrays_reach_the_server_element_for_element)
{
  server db;
  std::mt19937_64 random(seed());
  for (int round = 0; round < k_rounds / 5; ++round)
  {
    std::vector<std::string> values(std::uniform_int_distribution<int>(0, 6)(random));
    for (std::string &value : values)
      value = random_text(random);
    const auto rows = db.rows("SELECT v, v IS NULL FROM unnest($1::text[]) WITH ORDINALITY AS a(v, n) ORDER BY n",
                              detail::encode_text_array(values));
    BOOST_REQUIRE_MESSAGE(rows.size() == values.size(), "seed " << seed() << ": " << detail::encode_text_array(values));
    for (std::size_t i = 0; i < values.size(); ++i)
    {
      BOOST_TEST(rows[i][0] == values[i], "seed " << seed() << ", element " << i);
      BOOST_TEST(rows[i][1] == "f", "seed " << seed() << ": element " << i << " arrived as NULL");
    }
  }
}

BOOST_AUTO_TEST_CASE(bigint_arrays_round_trip_through_the_servers_printer)
{
  server db;
  std::mt19937_64 random(seed());
  for (int round = 0; round < k_rounds / 5; ++round)
  {
    std::vector<std::int64_t> values(std::uniform_int_distribution<int>(0, 8)(random));
    for (std::int64_t &value : values)
      value = random_int64(random);
    // In through the encoder, out through the server's array printer and the decoder.
    const std::string printed = db.single("SELECT $1::bigint[]::text", detail::encode_int64_array(values));
    BOOST_TEST(detail::decode_int64_array(printed) == values, "seed " << seed() << ": " << printed);
  }
}

BOOST_AUTO_TEST_CASE(doubles_are_read_as_the_server_prints_them)
{
  server db;
  std::mt19937_64 random(seed());
  for (int round = 0; round < k_rounds / 5; ++round)
  {
    const double value = std::ldexp(std::uniform_real_distribution<double>(-1, 1)(random),
                                    std::uniform_int_distribution<int>(-40, 40)(random));
    char literal[64];
    std::snprintf(literal, sizeof literal, "%.17g", value);
    const std::string printed = db.single("SELECT $1::float8::text", literal);
    BOOST_TEST(detail::parse_double(printed) == value, "seed " << seed() << ": " << printed);
  }
  BOOST_TEST(std::isinf(detail::parse_double("Infinity")));
  BOOST_CHECK_THROW(detail::parse_double("1.5x"), pgjq::error);
  BOOST_CHECK_THROW(detail::parse_double(""), pgjq::error);
}

BOOST_AUTO_TEST_CASE(timestamps_reach_the_server_to_the_microsecond_whatever_its_time_zone)
{
  server db;
  std::mt19937_64 random(seed());
  for (int round = 0; round < k_rounds; ++round)
  {
    const std::chrono::microseconds instant = random_instant(random);
    const std::string text = detail::format_timestamp(pgjq::time_point(instant));
    const std::string epoch = db.single("SELECT extract(epoch FROM $1::timestamptz)", text);
    BOOST_TEST(detail::parse_epoch_micros(epoch).count() == instant.count(),
               "seed " << seed() << ": sent " << text << ", the server read " << epoch);
  }
}

BOOST_AUTO_TEST_CASE(epoch_seconds_printed_by_the_server_decode_exactly)
{
  server db;
  std::mt19937_64 random(seed());
  for (int round = 0; round < k_rounds; ++round)
  {
    const std::chrono::microseconds instant = random_instant(random);
    // The server builds the instant itself (by integer arithmetic: interval * bigint would go through a
    // double), so this checks parse_epoch alone.
    const std::string epoch =
        db.single("SELECT extract(epoch FROM timestamptz 'epoch' + ($1::bigint || ' microseconds')::interval)",
                  std::to_string(instant.count()));
    BOOST_TEST((detail::parse_epoch(epoch) == pgjq::time_point(instant)), "seed " << seed() << ": " << epoch);
  }
}

BOOST_AUTO_TEST_CASE(intervals_reach_the_server_to_the_microsecond)
{
  server db;
  std::mt19937_64 random(seed());
  for (int round = 0; round < k_rounds; ++round)
  {
    const std::chrono::microseconds value = random_instant(random);
    const std::string text = detail::format_interval(value);
    const std::string micros = db.single("SELECT (extract(epoch FROM $1::interval) * 1000000)::bigint", text);
    BOOST_TEST(micros == std::to_string(value.count()), "seed " << seed() << ": sent " << text);
  }
}

BOOST_AUTO_TEST_SUITE_END()
