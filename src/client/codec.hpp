// codec.hpp (internal): the text forms in which values travel as bind parameters and come back in
// results: integers, bigint[] and text[] literals, intervals, timestamps and epoch seconds, JSON; and the
// rule for what text may travel at all.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <pgjq/job.hpp>

namespace pgjq::detail
{

// The rule for every text the client hands libpq (bind parameters, SQL, channel names): it must reach the
// server unchanged, so it holds no NUL byte (libpq takes C strings: the text would end there) and is UTF-8
// (what the session speaks, and what PostgreSQL text and jsonb hold). Throws bad_argument with SQLSTATE
// 22021, the server's for such bytes, naming `argument`; the message never repeats the bad bytes.
// Returns whether the text is ASCII alone (connection::check_text asks, for a session not in UTF-8).
bool check_text(std::string_view text, std::string_view argument);
// Only the NUL half of the rule, for a conninfo: libpq's own string, whose password may be in any encoding.
void check_no_nul(std::string_view text, std::string_view argument);
// The JSON text of a json or jsonb parameter, refusing what dump() would change or throw for: NaN and
// Infinity (dump prints null) and binary values (dump prints an object) with bad_argument 22P02, the
// server's for text that is not JSON, and strings or keys that check_text refuses (22021). The message
// names `argument` and, as a JSON pointer, where in it the value is.
std::string encode_json(const nlohmann::json &value, std::string_view argument);

// A job's headers: the JSON object of strings to send (encode_json's checks, naming `argument`), and the
// one the server returned.
std::string encode_headers(const std::map<std::string, std::string> &headers, std::string_view argument);
std::map<std::string, std::string> decode_headers(std::string_view text);

std::int64_t parse_int64(std::string_view text);
bool parse_bool(std::string_view text);
// A double precision as the server prints it ("0.25", "1.5e-05", "Infinity").
double parse_double(std::string_view text);

// PostgreSQL array literals: {"a","b"} (quoted and escaped, so any text is safe) and {1,2,3}.
std::string encode_text_array(const std::vector<std::string> &values);
// NULL for the empty elements.
std::string encode_text_array(const std::vector<std::optional<std::string>> &values);
std::string encode_int64_array(const std::vector<std::int64_t> &values);
std::vector<std::int64_t> decode_int64_array(std::string_view text);

// An interval in microseconds, which the server parses exactly ("1500000 microseconds").
std::string format_interval(std::chrono::microseconds value);
// A timestamptz in UTC with microseconds: "2024-05-01 12:00:00.000001+00".
std::string format_timestamp(time_point value);
// extract(epoch from ...) prints exact decimal seconds ("1714564800.000001"); parsed without a double so
// that microseconds survive.
std::chrono::microseconds parse_epoch_micros(std::string_view text);
inline time_point parse_epoch(std::string_view text)
{
  return time_point(std::chrono::duration_cast<clock::duration>(parse_epoch_micros(text)));
}

} // namespace pgjq::detail
