// codec.cpp: text encodings of PostgreSQL values for bind parameters and results (see codec.hpp).
#include "codec.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>

#include <pgjq/error.hpp>

namespace pgjq::detail
{

namespace
{

constexpr std::size_t text_is_fine = std::string_view::npos;
// Text refused for its bytes: 22021 character_not_in_repertoire, what the server raises for them.
constexpr const char *bad_character_sqlstate = "22021";
// A JSON value that JSON text cannot hold: 22P02 invalid_text_representation, what the server raises for
// text that is not JSON.
constexpr const char *not_json_sqlstate = "22P02";

// The offset of the first byte that breaks the rule (a NUL, or the start of a sequence that is not UTF-8 as
// PostgreSQL's verifier defines it: no overlong forms, no surrogates, nothing beyond U+10FFFF), or
// text_is_fine. `ascii` is cleared when a byte above 0x7f is seen.
std::size_t first_bad_byte(std::string_view text, bool &ascii)
{
  const auto *bytes = reinterpret_cast<const unsigned char *>(text.data());
  const std::size_t size = text.size();
  for (std::size_t i = 0; i < size;)
  {
    const unsigned char lead = bytes[i];
    if (lead < 0x80)
    {
      if (lead == 0)
        return i;
      ++i;
      continue;
    }
    ascii = false;
    std::size_t length;
    unsigned char second_min = 0x80, second_max = 0xbf;
    if (lead >= 0xc2 && lead <= 0xdf)
      length = 2;
    else if (lead >= 0xe0 && lead <= 0xef)
    {
      length = 3;
      if (lead == 0xe0)
        second_min = 0xa0; // below: overlong
      else if (lead == 0xed)
        second_max = 0x9f; // above: UTF-16 surrogates
    }
    else if (lead >= 0xf0 && lead <= 0xf4)
    {
      length = 4;
      if (lead == 0xf0)
        second_min = 0x90; // below: overlong
      else if (lead == 0xf4)
        second_max = 0x8f; // above: beyond U+10FFFF
    }
    else
      return i; // a continuation byte, an overlong lead (0xc0, 0xc1), or a byte UTF-8 never uses
    if (size - i < length || bytes[i + 1] < second_min || bytes[i + 1] > second_max)
      return i;
    for (std::size_t k = 2; k < length; ++k)
      if (bytes[i + k] < 0x80 || bytes[i + k] > 0xbf)
        return i;
    i += length;
  }
  return text_is_fine;
}

[[noreturn]] void refuse_text(std::string_view text, std::size_t at, std::string_view argument)
{
  if (text[at] == '\0')
    throw bad_argument(std::string(argument) + " holds a NUL byte, where libpq would cut it short",
                       bad_character_sqlstate);
  char byte[8];
  std::snprintf(byte, sizeof byte, "0x%02x", static_cast<unsigned char>(text[at]));
  throw bad_argument(std::string(argument) + " is not valid UTF-8 (byte " + byte + ")", bad_character_sqlstate);
}

// One step from a JSON value to one inside it: a key of an object or an index of an array.
struct json_step
{
  const std::string *key; // null for an array element
  std::size_t index;
};

// `argument`, and where in it the value at `path` is, as a JSON pointer (RFC 6901).
std::string json_place(std::string_view argument, const std::vector<json_step> &path)
{
  std::string out(argument);
  if (path.empty())
    return out;
  out += " at ";
  for (const json_step &step : path)
  {
    out += '/';
    if (step.key == nullptr)
    {
      out += std::to_string(step.index);
      continue;
    }
    for (char c : *step.key)
      out += c == '~' ? std::string("~0") : c == '/' ? std::string("~1") : std::string(1, c);
  }
  return out;
}

// Refuses what dump() would alter or throw for, anywhere in `value` (see encode_json). The path is kept
// as pointers to the keys, so that nothing is copied unless a value is refused.
void check_json(const nlohmann::json &value, std::string_view argument, std::vector<json_step> &path)
{
  bool ascii = true;
  switch (value.type())
  {
  case nlohmann::json::value_t::object:
    for (auto it = value.begin(); it != value.end(); ++it)
    {
      const std::size_t bad = first_bad_byte(it.key(), ascii);
      if (bad != text_is_fine)
        refuse_text(it.key(), bad, "a key of " + json_place(argument, path));
      path.push_back({&it.key(), 0});
      check_json(it.value(), argument, path);
      path.pop_back();
    }
    return;
  case nlohmann::json::value_t::array:
    for (std::size_t i = 0; i < value.size(); ++i)
    {
      path.push_back({nullptr, i});
      check_json(value[i], argument, path);
      path.pop_back();
    }
    return;
  case nlohmann::json::value_t::string:
  {
    const std::string &text = value.get_ref<const std::string &>();
    const std::size_t bad = first_bad_byte(text, ascii);
    if (bad != text_is_fine)
      refuse_text(text, bad, json_place(argument, path));
    return;
  }
  case nlohmann::json::value_t::number_float:
  {
    const double number = value.get<double>();
    if (!std::isfinite(number))
      throw bad_argument(json_place(argument, path) + " is " +
                             (std::isnan(number) ? "NaN"
                              : number > 0       ? "Infinity"
                                                 : "-Infinity") +
                             ", which JSON cannot represent",
                         not_json_sqlstate);
    return;
  }
  case nlohmann::json::value_t::binary:
  case nlohmann::json::value_t::discarded:
    throw bad_argument(json_place(argument, path) + " is a " + (value.is_binary() ? "binary" : "discarded") +
                           " value, which JSON cannot represent",
                       not_json_sqlstate);
  default: // null, boolean, integers
    return;
  }
}

} // namespace

bool check_text(std::string_view text, std::string_view argument)
{
  bool ascii = true;
  const std::size_t bad = first_bad_byte(text, ascii);
  if (bad != text_is_fine)
    refuse_text(text, bad, argument);
  return ascii;
}

void check_no_nul(std::string_view text, std::string_view argument)
{
  const std::size_t nul = text.find('\0');
  if (nul != std::string_view::npos)
    refuse_text(text, nul, argument);
}

std::string encode_json(const nlohmann::json &value, std::string_view argument)
{
  std::vector<json_step> path;
  check_json(value, argument, path);
  return value.dump();
}

std::string encode_headers(const std::map<std::string, std::string> &headers, std::string_view argument)
{
  return encode_json(nlohmann::json(headers), argument);
}

std::map<std::string, std::string> decode_headers(std::string_view text)
{
  std::map<std::string, std::string> headers;
  const nlohmann::json object = nlohmann::json::parse(text, nullptr, false);
  if (!object.is_object())
    throw error("unexpected headers from the server: " + std::string(text.substr(0, 80)), std::string());
  for (const auto &[name, value] : object.items())
    if (value.is_string())
      headers.emplace(name, value.get<std::string>());
    else
      throw error("unexpected header \"" + name + "\" from the server: not a string", std::string());
  return headers;
}

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
