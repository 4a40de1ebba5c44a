// trace_context.hpp: the headers a job carries from the transaction that enqueued it to the worker that claims
// it (pgjq.live_jobs.headers, from 0.3.0; docs/sql-api.md): a W3C `traceparent` and `tracestate`, or any
// other string the producer's tracing passes on. pgjq stores them, archives them with the job and returns them
// with every claim; it reads none of them but `traceparent`, whose form it checks so that a malformed one is
// refused where it was written instead of breaking the trace of the service that reads it.
#pragma once

#include "pg/pg.hpp"

namespace pgjq {

// A job's headers: a JSON object of at most this many members, each a string, whose stored form takes at
// most k_max_headers_bytes.
constexpr int k_max_headers = 32;
constexpr int k_max_headers_bytes = 4096;

// Raises 22023 naming what is wrong when `headers` (the argument or column `name`) is not a JSON object of
// string values within the bounds above, or has a `traceparent` that is not of the W3C form
// version-traceid-parentid-flags (lowercase hex, neither id all zeros, version not ff).
void check_headers(const Jsonb* headers, const char* name);

}  // namespace pgjq
