// web_requests.hpp: what a request to `pgjq web` asks for, read from its query string or JSON body: which
// jobs (the search and its page) and which queue settings. A value it cannot read is refused with its name
// (bad_argument, HTTP 400) before anything is asked of the database.
#pragma once

#include <pgjq/client.hpp>

#include <httplib.h>

namespace pgjq::cli
{

// The jobs the query string selects: queue, state (a job status), type, payload (JSON the payload must
// contain), before (a job id: the page after it), limit (1-10000, default 50).
job_listing listing_of(const httplib::Request &request);

// The settings a JSON body changes, named as `pgjq queue show --json` names them: max_pending (null: no
// limit), max_attempts, lease_s, max_running, job_timeout_s, retry_base_s, retry_cap_s, retention_s,
// keep_completed, group_concurrency, rate_limit, rate_interval_s. Others are refused, as are durations
// outside 0 .. 100 years and whole numbers outside their type.
queue_options settings_of(const std::string &body);

} // namespace pgjq::cli
