// cancel.cpp: cancel, a producer's way to stop a job that has not finished.
#include "core/args.hpp"
#include "core/boundary.hpp"
#include "core/lifecycle.hpp"
#include "core/refusals.hpp"
#include "core/spi.hpp"

namespace {

using namespace pgjq;

SPIPlanPtr s_is_finished;

// clang-format off
const plan_text k_is_finished = {"SELECT 1 FROM pgjq.finished_jobs WHERE id = $1", 1, {INT8OID}};
// clang-format on

}  // namespace

// true when this call cancelled the job; false when it had already finished (completed, failed or
// cancelled). A worker holding a cancelled job learns it at its next call (SQLSTATE PJ003).
PGJQ_FUNCTION(cancel)
{
    int64 job_id = job_id_arg(fcinfo, 0);
    SPI_connect();
    bool cancelled = archive_jobs(single_id_array(job_id), nullptr, "cancelled", nullptr, nullptr, nullptr) > 0;
    if (!cancelled) {
        Datum values[1] = {Int64GetDatum(job_id)};
        if (run_plan(saved_plan(&s_is_finished, k_is_finished), values, nullptr, 1) == 0)
            raise_no_such_job(job_id);
    }
    SPI_finish();
    PG_RETURN_BOOL(cancelled);
}
