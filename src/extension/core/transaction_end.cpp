// transaction_end.cpp: the transaction callback of transaction_end.hpp.
#include "core/transaction_end.hpp"

#include "core/claim_floor.hpp"
#include "core/depth.hpp"
#include "core/enqueue_counts.hpp"
#include "core/latency.hpp"
#include "core/waiting_jobs.hpp"
#include "pg/pg.hpp"

namespace {

void at_transaction_end(XactEvent event, void*)
{
    switch (event) {
    case XACT_EVENT_PRE_COMMIT:
    case XACT_EVENT_PRE_PREPARE:
        if (event == XACT_EVENT_PRE_PREPARE)
            pgjq::refuse_prepare_with_count_changes();
        pgjq::settle_waiting_jobs();
        pgjq::write_depth_ledger(event == XACT_EVENT_PRE_PREPARE);
        break;
    case XACT_EVENT_COMMIT:
        pgjq::publish_enqueue_counts();
        pgjq::settle_taken_counts(true);
        pgjq::publish_latencies();
        pgjq::apply_floor_notes_at_commit();
        pgjq::forget_waiting_jobs_ledger();
        pgjq::forget_depth_ledger();
        break;
    case XACT_EVENT_PARALLEL_COMMIT:
    case XACT_EVENT_ABORT:
    case XACT_EVENT_PARALLEL_ABORT:
    case XACT_EVENT_PREPARE:
        if (event == XACT_EVENT_PREPARE)
            pgjq::apply_floor_notes_at_prepare();
        else
            pgjq::apply_floor_notes_at_abort();
        pgjq::settle_taken_counts(false);
        pgjq::forget_latencies();
        pgjq::forget_waiting_jobs_ledger();
        pgjq::forget_depth_ledger();
        break;
    default:
        break;
    }
}

}  // namespace

namespace pgjq {

void register_transaction_end_callback()
{
    RegisterXactCallback(at_transaction_end, nullptr);
}

}  // namespace pgjq
