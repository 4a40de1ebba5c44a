// workflow.cpp: the builders of a workflow's steps (their refusals and their JSON), failure policies by
// name, and a step result's JSON. The calls that send them are in connection.cpp, their rows in rows.cpp.
#include <pgjq/workflow.hpp>

#include <ostream>

#include <pgjq/error.hpp>

#include "codec.hpp"

namespace pgjq
{

namespace
{

// The server's SQLSTATE for bad steps, so that a caller branching on sqlstate() sees one code whoever refused.
constexpr const char *bad_steps_sqlstate = "22023";

// A step name in a message: quoted as JSON, so that spaces, quotes or control characters stay visible (bytes
// that are not UTF-8 as U+FFFD: encode_json refuses them when the steps are sent).
std::string step_label(const std::string &name)
{
  return nlohmann::json(name).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

} // namespace

// step_list ----------------------------------------------------------------------------------------------

bool step_list::has_step(const std::string &name) const noexcept { return m_names.count(name) > 0; }

step_list &step_list::step(const std::string &name, const std::string &job_type, const nlohmann::json &payload,
                           const step_options &options)
{
  if (name.empty())
    throw bad_argument("pgjq::step_list::step: a step's name must not be empty (\"after\" names steps by it)",
                       bad_steps_sqlstate);
  if (has_step(name))
    throw bad_argument("pgjq::step_list::step: step " + step_label(name) + " is given twice (step names are unique)",
                       bad_steps_sqlstate);
  m_steps.push_back({name, job_type, payload, options, {}});
  m_names.insert(name);
  m_last_after.clear();
  return *this;
}

step_list &step_list::after(const std::string &step_name)
{
  if (m_steps.empty())
    throw usage_error("pgjq::step_list::after: no step to wait; call step() first");
  entry &last = m_steps.back();
  if (step_name == last.name)
    throw bad_argument("pgjq::step_list::after: step " + step_label(last.name) + " cannot wait for itself",
                       bad_steps_sqlstate);
  if (m_last_after.count(step_name) > 0)
    throw bad_argument("pgjq::step_list::after: step " + step_label(last.name) + " is already after " +
                           step_label(step_name),
                       bad_steps_sqlstate);
  if (m_known_only && !has_step(step_name))
    throw bad_argument("pgjq::workflow_builder::after: step " + step_label(last.name) + " is after " +
                           step_label(step_name) +
                           ", which is not a step of the workflow (a step names only steps added before it)",
                       bad_steps_sqlstate);
  last.after.push_back(step_name);
  m_last_after.insert(step_name);
  return *this;
}

step_list &step_list::after(const std::vector<std::string> &step_names)
{
  for (const std::string &name : step_names)
    after(name);
  return *this;
}

step_list &step_list::after(std::initializer_list<std::string> step_names)
{
  for (const std::string &name : step_names)
    after(name);
  return *this;
}

std::string step_list::to_json() const
{
  nlohmann::json steps = nlohmann::json::array();
  for (const entry &e : m_steps)
  {
    nlohmann::json s = {{"name", e.name},           {"job_type", e.job_type}, {"payload", e.payload},
                        {"queue", e.options.queue}, {"after", e.after},       {"priority", e.options.priority}};
    if (e.options.max_attempts)
      s["max_attempts"] = *e.options.max_attempts;
    if (e.options.timeout)
      s["timeout"] = detail::format_interval(*e.options.timeout);
    steps.push_back(std::move(s));
  }
  return detail::encode_json(steps, "steps");
}

// workflow_builder ---------------------------------------------------------------------------------------

workflow_builder::workflow_builder(std::string workflow_name) : step_list(true), m_name(std::move(workflow_name))
{
  if (m_name.empty())
    throw bad_argument("pgjq::workflow_builder: the workflow's name must not be empty", bad_steps_sqlstate);
}

workflow_builder &workflow_builder::key(std::string workflow_key)
{
  m_key = std::move(workflow_key);
  return *this;
}

workflow_builder &workflow_builder::on_failure(failure_policy policy)
{
  m_on_failure = policy;
  return *this;
}

workflow_builder &workflow_builder::retention(std::chrono::microseconds keep_for)
{
  m_retention = keep_for;
  return *this;
}

workflow_builder &workflow_builder::parent_job(std::int64_t job_id)
{
  m_parent_job = job_id;
  return *this;
}

// Names ------------------------------------------------------------------------------------------------

std::string_view to_string(failure_policy policy) noexcept
{
  switch (policy)
  {
  case failure_policy::fail:
    return "fail";
  case failure_policy::continue_:
    return "continue";
  case failure_policy::ignore:
    return "ignore";
  }
  return "unknown";
}

std::ostream &operator<<(std::ostream &out, failure_policy policy) { return out << to_string(policy); }

namespace
{

std::optional<nlohmann::json> parsed(const std::optional<std::string> &text)
{
  if (!text)
    return std::nullopt;
  return nlohmann::json::parse(*text);
}

} // namespace

std::optional<nlohmann::json> step_result::result() const { return parsed(result_text); }

} // namespace pgjq
