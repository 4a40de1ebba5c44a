// codec.hpp (internal): the text forms in which values travel as bind parameters and come back in
// results: integers, bigint[] and text[] literals, intervals, timestamps and epoch seconds.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <pgjq/job.hpp>

namespace pgjq::detail
{

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
