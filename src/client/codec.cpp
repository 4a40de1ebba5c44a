// codec.cpp: text encodings of PostgreSQL values for bind parameters and results (see codec.hpp).
#include "codec.hpp"

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <ctime>

#include <pgjq/error.hpp>

namespace pgjq::detail
{

std::int64_t parse_int64(std::string_view text)
{
  std::int64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size())
    throw error("unexpected integer from the server: \"" + std::string(text) + "\"", std::string());
  return value;
}

bool parse_bool(std::string_view text) { return text == "t" || text == "true"; }

double parse_double(std::string_view text)
{
  const std::string copy(text); // strtod wants a terminated string; from_chars on doubles needs GCC 11+ anyway
  char *end = nullptr;
  const double value = std::strtod(copy.c_str(), &end);
  if (copy.empty() || end != copy.c_str() + copy.size())
    throw error("unexpected number from the server: \"" + copy + "\"", std::string());
  return value;
}

namespace
{

void append_quoted(std::string &out, const std::string &value)
{
  out += '"';
  for (char c : value)
  {
    if (c == '"' || c == '\\')
      out += '\\';
    out += c;
  }
  out += '"';
}

} // namespace

std::string encode_text_array(const std::vector<std::string> &values)
{
  std::string out = "{";
  for (std::size_t i = 0; i < values.size(); ++i)
  {
    if (i > 0)
      out += ',';
    append_quoted(out, values[i]);
  }
  out += '}';
  return out;
}

std::string encode_text_array(const std::vector<std::optional<std::string>> &values)
{
  std::string out = "{";
  for (std::size_t i = 0; i < values.size(); ++i)
  {
    if (i > 0)
      out += ',';
    if (values[i])
      append_quoted(out, *values[i]);
    else
      out += "NULL";
  }
  out += '}';
  return out;
}

std::string encode_int64_array(const std::vector<std::int64_t> &values)
{
  std::string out = "{";
  for (std::size_t i = 0; i < values.size(); ++i)
  {
    if (i > 0)
      out += ',';
    out += std::to_string(values[i]);
  }
  out += '}';
  return out;
}

std::vector<std::int64_t> decode_int64_array(std::string_view text)
{
  if (text.size() < 2 || text.front() != '{' || text.back() != '}')
    throw error("unexpected array from the server: \"" + std::string(text) + "\"", std::string());
  std::vector<std::int64_t> out;
  text = text.substr(1, text.size() - 2);
  while (!text.empty())
  {
    const std::size_t comma = text.find(',');
    out.push_back(parse_int64(text.substr(0, comma)));
    if (comma == std::string_view::npos)
      break;
    text.remove_prefix(comma + 1);
  }
  return out;
}

std::string format_interval(std::chrono::microseconds value) { return std::to_string(value.count()) + " microseconds"; }

std::string format_timestamp(time_point value)
{
  const auto micros = std::chrono::duration_cast<std::chrono::microseconds>(value.time_since_epoch()).count();
  std::int64_t seconds = micros / 1000000;
  std::int64_t fraction = micros % 1000000;
  if (fraction < 0)
  {
    fraction += 1000000;
    seconds -= 1;
  }
  const std::time_t t = static_cast<std::time_t>(seconds);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02d %02d:%02d:%02d.%06lld+00", tm.tm_year + 1900, tm.tm_mon + 1,
                tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<long long>(fraction));
  return buf;
}

std::chrono::microseconds parse_epoch_micros(std::string_view text)
{
  bool negative = false;
  if (!text.empty() && text.front() == '-')
  {
    negative = true;
    text.remove_prefix(1);
  }
  const std::size_t dot = text.find('.');
  const std::int64_t whole = parse_int64(text.substr(0, dot));
  std::int64_t fraction = 0;
  if (dot != std::string_view::npos)
  {
    std::string digits(text.substr(dot + 1, 6));
    digits.resize(6, '0');
    fraction = parse_int64(digits);
  }
  const std::int64_t micros = whole * 1000000 + fraction;
  return std::chrono::microseconds(negative ? -micros : micros);
}

} // namespace pgjq::detail
