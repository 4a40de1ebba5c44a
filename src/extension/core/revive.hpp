// revive.hpp: bringing failed or cancelled jobs back (retry, retry_failed): the one statement that moves
// them from pgjq.finished_jobs to pgjq.live_jobs, with their queues' counters and notifications in step.
#pragma once

#include "pg/pg.hpp"

namespace pgjq {

// Revives the failed or cancelled jobs among `ids` (an int8[]): each is pending now, or waiting for its turn
// when it has a group key, with its attempts starting over and its id kept. A job whose unique_key a live
// job holds (or another of `ids` takes first) stays as it was. Waits for transactions that hold one of the
// finished rows. A workflow step comes back with the steps downstream of it that were cancelled, each
// waiting for the steps it depends on (core/workflows.hpp). Returns how many came back. Requires an SPI connection.
int64 revive_jobs(Datum ids);

}  // namespace pgjq
