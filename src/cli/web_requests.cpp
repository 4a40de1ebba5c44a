// web_requests.cpp: reading a dashboard request's filters and settings (see web_requests.hpp).
#include "web_requests.hpp"

#include "commands.hpp"

#include <cmath>
#include <limits>

namespace pgjq::cli
{

namespace
{

std::int64_t whole_number(const httplib::Request &request, const std::string &name)
{
  const std::string text = request.get_param_value(name.c_str());
  try
  {
    std::size_t used = 0;
    const long long value = std::stoll(text, &used);
    if (used == text.size())
      return value;
  }
  catch (const std::logic_error &)
  {
  }
  throw bad_argument(name + " must be a whole number, not \"" + text + "\"", "22023");
}

std::int64_t whole_number(const nlohmann::json &value, const std::string &name, std::int64_t low, std::int64_t high)
{
  if (!value.is_number_integer() || value.get<std::int64_t>() < low || value.get<std::int64_t>() > high)
    throw bad_argument(name + " must be a whole number from " + std::to_string(low) + " to " + std::to_string(high) +
                           ", not " + value.dump(),
                       "22023");
  return value.get<std::int64_t>();
}

std::chrono::microseconds duration(const nlohmann::json &value, const std::string &name)
{
  if (!value.is_number() || !std::isfinite(value.get<double>()) || value.get<double>() < 0 ||
      value.get<double>() > k_max_duration_s)
    throw bad_argument(name + " must be a number of seconds from 0 to 100 years, not " + value.dump(), "22023");
  return std::chrono::microseconds(static_cast<std::int64_t>(value.get<double>() * 1e6));
}

} // namespace

job_listing listing_of(const httplib::Request &request)
{
  job_listing l;
  const auto text = [&](const char *name) -> std::optional<std::string>
  {
    if (!request.has_param(name) || request.get_param_value(name).empty())
      return std::nullopt;
    return request.get_param_value(name);
  };
  l.queue = text("queue");
  l.job_type = text("type");
  if (const auto state = text("state"))
    l.status = parse_job_status(*state);
  if (const auto payload = text("payload"))
  {
    try
    {
      l.payload_contains = nlohmann::json::parse(*payload);
    }
    catch (const nlohmann::json::parse_error &)
    {
      throw bad_argument("payload must be JSON that the payloads are to contain, such as {\"order\": 17}", "22023");
    }
  }
  if (text("before"))
    l.before_id = whole_number(request, "before");
  if (text("limit"))
  {
    const std::int64_t limit = whole_number(request, "limit");
    if (limit < 1 || limit > 10000)
      throw bad_argument("limit must be from 1 to 10000, not " + std::to_string(limit), "22023");
    l.limit = static_cast<int>(limit);
  }
  return l;
}

queue_options settings_of(const std::string &body)
{
  nlohmann::json settings;
  try
  {
    settings = nlohmann::json::parse(body);
  }
  catch (const nlohmann::json::parse_error &)
  {
    throw bad_argument("the settings must be a JSON object", "22023");
  }
  if (!settings.is_object() || settings.empty())
    throw bad_argument("the settings must be a JSON object naming at least one setting", "22023");
  constexpr std::int64_t int_max = std::numeric_limits<int>::max();
  queue_options q;
  for (const auto &[name, value] : settings.items())
  {
    if (name == "max_pending")
    {
      if (value.is_null())
        q.clear_max_pending = true;
      else
        q.max_pending = whole_number(value, name, 0, std::numeric_limits<std::int64_t>::max());
    }
    else if (name == "max_attempts")
      q.max_attempts = static_cast<int>(whole_number(value, name, 0, int_max));
    else if (name == "max_running")
      q.max_running = static_cast<int>(whole_number(value, name, 0, int_max));
    else if (name == "group_concurrency")
      q.group_concurrency = static_cast<int>(whole_number(value, name, 0, int_max));
    else if (name == "rate_limit")
      q.rate_limit = static_cast<int>(whole_number(value, name, 0, int_max));
    else if (name == "lease_s")
      q.lease = duration(value, name);
    else if (name == "job_timeout_s")
      q.job_timeout = duration(value, name);
    else if (name == "retry_base_s")
      q.retry_base = duration(value, name);
    else if (name == "retry_cap_s")
      q.retry_cap = duration(value, name);
    else if (name == "retention_s")
      q.retention = duration(value, name);
    else if (name == "rate_interval_s")
      q.rate_interval = duration(value, name);
    else if (name == "keep_completed")
    {
      if (!value.is_boolean())
        throw bad_argument("keep_completed must be true or false, not " + value.dump(), "22023");
      q.keep_completed = value.get<bool>();
    }
    else
      throw bad_argument("\"" + name + "\" is not a queue setting the dashboard changes", "22023");
  }
  return q;
}

} // namespace pgjq::cli
