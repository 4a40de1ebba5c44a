// pgjq/workflow.hpp: durable workflows (0.3.0): the builders of the steps JSON that pgjq.start_workflow and
// pgjq.add_steps take, and the results a step reads (pgjq.step_results). The rows of pgjq.workflows and
// pgjq.workflow_steps are workflow_info and workflow_step (job.hpp). A workflow is a set of jobs, its steps, each waiting for the steps it names in
// `after`; every decision about them (order, failure, waking) is the server's.
#pragma once

#include <chrono>
#include <cstdint>
#include <initializer_list>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include <nlohmann/json.hpp>

#include <pgjq/job.hpp>

namespace pgjq
{

// What a step that fails for good does to the rest (start_workflow's on_failure).
enum class failure_policy
{
  fail,      // its dependents are cancelled, the workflow ends failed
  continue_, // 'continue': its dependents run, and step_results lists it with status failed
  ignore     // its dependents run, and step_results leaves it out
};

PGJQ_API std::string_view to_string(failure_policy policy) noexcept;
PGJQ_API std::ostream &operator<<(std::ostream &out, failure_policy policy);

// A step's job, besides its type and payload. The defaults are the SQL ones; unset fields are left out of
// the step's JSON, so the server's default applies.
struct step_options
{
  std::string queue = "default";
  int priority = 100;
  std::optional<int> max_attempts;
  std::optional<std::chrono::microseconds> timeout; // execution timeout
};

// Steps to add to a running workflow (connection::add_steps, job_context::add_steps): the same steps as a
// workflow_builder's, but `after` may also name steps already in the workflow, which only the server knows.
// Refuses, with bad_argument 22023 as the server would, an empty step name, a name given twice and a step
// after itself or after a step twice; nothing is changed on the way (the bounds are the server's).
class PGJQ_API step_list
{
public:
  step_list() = default;

  // Adds a step; `after` then applies to it.
  step_list &step(const std::string &name, const std::string &job_type,
                  const nlohmann::json &payload = nlohmann::json::object(), const step_options &options = {});
  // The last step added waits until this step (or each of these) finished.
  step_list &after(const std::string &step_name);
  step_list &after(const std::vector<std::string> &step_names);
  // after({"a", "b"}): without it the braces would also make one std::string of two pointers.
  step_list &after(std::initializer_list<std::string> step_names);

  bool empty() const noexcept { return m_steps.empty(); }
  std::size_t size() const noexcept { return m_steps.size(); }
  bool has_step(const std::string &name) const noexcept;
  // The steps as the SQL function takes them: a JSON array of {"name", "job_type", "payload", "queue",
  // "after", "priority"[, "max_attempts"][, "timeout"]}. Throws bad_argument (naming "steps" and the place,
  // as a JSON pointer) for what JSON text cannot hold: NaN, Infinity, a binary value, text that is not UTF-8.
  std::string to_json() const;

protected:
  // known_only: `after` must name a step added before (a new workflow, which has no other steps).
  explicit step_list(bool known_only) : m_known_only(known_only) {}

private:
  struct entry
  {
    std::string name;
    std::string job_type;
    nlohmann::json payload;
    step_options options;
    std::vector<std::string> after;
  };
  bool m_known_only = false;
  std::vector<entry> m_steps;
  // The names of the steps, and those the last step is after: a call checks its name in constant time, so
  // that a workflow of the server's 100 000 steps, or a join of as many, builds in linear time.
  std::unordered_set<std::string> m_names;
  std::unordered_set<std::string> m_last_after;
};

// A new workflow for connection::start_workflow:
//   pgjq::workflow_builder wf("order-17");
//   wf.step("fetch", "fetch", payload).step("resize-1", "resize", p).after("fetch");
//   wf.key("order-17").on_failure(pgjq::failure_policy::continue_);
//   std::int64_t id = conn.start_workflow(wf);
// As step_list, and besides: `after` must name a step added before it (so that no typo reaches the server,
// and no cycle can be built), and the workflow's name must not be empty.
class PGJQ_API workflow_builder : public step_list
{
public:
  explicit workflow_builder(std::string workflow_name);

  workflow_builder &step(const std::string &name, const std::string &job_type,
                         const nlohmann::json &payload = nlohmann::json::object(), const step_options &options = {})
  {
    step_list::step(name, job_type, payload, options);
    return *this;
  }
  workflow_builder &after(const std::string &step_name)
  {
    step_list::after(step_name);
    return *this;
  }
  workflow_builder &after(const std::vector<std::string> &step_names)
  {
    step_list::after(step_names);
    return *this;
  }
  workflow_builder &after(std::initializer_list<std::string> step_names)
  {
    step_list::after(step_names);
    return *this;
  }
  // An unfinished workflow of this role with the same key is returned instead of starting another.
  workflow_builder &key(std::string workflow_key);
  workflow_builder &on_failure(failure_policy policy);
  // How long the finished workflow and its steps are kept.
  workflow_builder &retention(std::chrono::microseconds keep_for);
  // The step (a job the caller holds) that starts this one as its sub-workflow.
  workflow_builder &parent_job(std::int64_t job_id);

  const std::string &name() const noexcept { return m_name; }
  const std::optional<std::string> &workflow_key() const noexcept { return m_key; }
  failure_policy failure() const noexcept { return m_on_failure; }
  std::chrono::microseconds kept_for() const noexcept { return m_retention; }
  const std::optional<std::int64_t> &parent() const noexcept { return m_parent_job; }

private:
  std::string m_name;
  std::optional<std::string> m_key;
  failure_policy m_on_failure = failure_policy::fail;
  std::chrono::microseconds m_retention = std::chrono::hours(24 * 7); // the SQL default, '7 days'
  std::optional<std::int64_t> m_parent_job;
};

// One row of pgjq.step_results(job_id): a step the job depends on.
struct PGJQ_API step_result
{
  std::string step_name;
  std::int64_t job_id = 0;
  job_status status = job_status::completed; // failed only under failure_policy::continue_
  std::optional<std::string> result_text;
  std::optional<std::string> last_error;

  std::optional<nlohmann::json> result() const;
};

} // namespace pgjq
