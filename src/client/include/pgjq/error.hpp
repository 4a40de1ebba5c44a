// pgjq/error.hpp: the client's exception hierarchy. Server errors are keyed by SQLSTATE (as libpqxx's
// except.hxx does), so callers branch on the C++ type and still see the server's own message.
#pragma once

#include <stdexcept>
#include <string>

#include <pgjq/export.hpp>

namespace pgjq
{

// Anything the server (or the link to it) reported. what() is the server's primary message.
class PGJQ_API error : public std::runtime_error
{
public:
  error(const std::string &message, std::string sqlstate, std::string detail = {}, std::string hint = {});

  // Five characters, e.g. "PJ001"; empty when the error did not come from the server (connection loss).
  const std::string &sqlstate() const noexcept { return m_sqlstate; }
  const std::string &detail() const noexcept { return m_detail; }
  const std::string &hint() const noexcept { return m_hint; }

private:
  std::string m_sqlstate;
  std::string m_detail;
  std::string m_hint;
};

// The connection is gone (libpq CONNECTION_BAD, SQLSTATE class 08, or the server shutting down).
// Whether the last call took effect is unknown: a worker treats its held jobs as lost.
class PGJQ_API connection_lost : public error
{
public:
  using error::error;
};

// PJ001: enqueue into a queue whose max_pending is reached. try_enqueue returns an empty optional instead.
class PGJQ_API queue_full : public error
{
public:
  using error::error;
};

// PJ002: this worker_id does not hold the job's lease (it expired and was reassigned, or was never claimed).
class PGJQ_API not_lease_holder : public error
{
public:
  using error::error;
};

// PJ003: the job this worker holds was cancelled; stop working on it.
class PGJQ_API job_cancelled : public error
{
public:
  using error::error;
};

// PJ005: the job ran past its execution timeout; stop working on it (the attempt is failed when its lease
// is recovered). A not_lease_holder: the job is no longer the worker's to report on.
class PGJQ_API job_timed_out : public not_lease_holder
{
public:
  using not_lease_holder::not_lease_holder;
};

// PJ004: retry of a job whose unique_key another unfinished job of its queue holds now.
class PGJQ_API unique_key_held : public error
{
public:
  using error::error;
};

// PJ006: the event a step waited for (wait_for_event) did not come before the wait's timeout. The job is
// held again: the handler decides (go on without it, or throw to fail the attempt).
class PGJQ_API event_timed_out : public error
{
public:
  using error::error;
};

// 22023 invalid value, 22004 NULL where a value is required, 54000 payload too large, other class 22 errors.
class PGJQ_API bad_argument : public error
{
public:
  using error::error;
};

// 42704: no queue by that name.
class PGJQ_API unknown_queue : public error
{
public:
  using error::error;
};

// 42710: create_queue of a name that exists.
class PGJQ_API queue_exists : public error
{
public:
  using error::error;
};

// P0002: no job with that id (or it was pruned).
class PGJQ_API job_not_found : public error
{
public:
  using error::error;
};

// 55000 the job is in the wrong state for the call (e.g. retry of a job that did not fail);
// 55006 drop_queue of a queue that still has unfinished jobs.
class PGJQ_API wrong_state : public error
{
public:
  using error::error;
};

// 42501: the role lacks the capability (see pgjq.grant_producer / grant_worker / grant_admin).
class PGJQ_API permission_denied : public error
{
public:
  using error::error;
};

// The program used the client wrongly (e.g. waited for a notification inside a transaction block).
// A logic error: retrying cannot help.
class PGJQ_API usage_error : public std::logic_error
{
public:
  using std::logic_error::logic_error;
};

} // namespace pgjq
