// job.cpp: job statuses by name and JSON access to payloads and results. Rows are decoded in rows.cpp.
#include <pgjq/job.hpp>

#include <ostream>

#include <pgjq/error.hpp>

namespace pgjq
{

std::string_view to_string(job_status status) noexcept
{
  switch (status)
  {
  case job_status::waiting:
    return "waiting";
  case job_status::pending:
    return "pending";
  case job_status::claimed:
    return "claimed";
  case job_status::running:
    return "running";
  case job_status::completed:
    return "completed";
  case job_status::failed:
    return "failed";
  case job_status::cancelled:
    return "cancelled";
  }
  return "unknown";
}

job_status parse_job_status(std::string_view text)
{
  std::string known;
  for (job_status s : {job_status::waiting, job_status::pending, job_status::claimed, job_status::running,
                       job_status::completed, job_status::failed, job_status::cancelled})
  {
    if (to_string(s) == text)
      return s;
    known += (known.empty() ? "" : ", ") + std::string(to_string(s));
  }
  throw bad_argument("unknown job status \"" + std::string(text) + "\" (one of " + known + ")", "22023");
}

std::ostream &operator<<(std::ostream &out, job_status status) { return out << to_string(status); }

bool is_final(job_status status) noexcept
{
  return status == job_status::completed || status == job_status::failed || status == job_status::cancelled;
}

nlohmann::json job::payload() const { return nlohmann::json::parse(payload_text); }

std::optional<nlohmann::json> job::result() const
{
  if (!result_text)
    return std::nullopt;
  return nlohmann::json::parse(*result_text);
}

} // namespace pgjq
