// transaction_hub.cpp: pgjq's one transaction callback and one subtransaction callback. Each event calls
// the domain's handlers in the order written here, because some depend on others:
// - before the commit, settling waiting jobs may start or cancel jobs, which changes the backpressure
//   counters and announces jobs: the depth ledger is written after it, and a prepared transaction's
//   announcements are refused after it;
// - after the commit, the shared counts, latencies and claim floors are published before the transaction's
//   notes are forgotten; the announcements are handed to the relay, and the maintenance worker is told of
//   the transaction's deadlines last, once what it will act on is visible.
// Nothing after the commit may raise: each handler called there says so.
#include "hooks/hubs.hpp"

#include "core/announcements.hpp"
#include "core/claim_floor.hpp"
#include "core/deadlines.hpp"
#include "core/depth.hpp"
#include "core/enqueue_counts.hpp"
#include "core/latency.hpp"
#include "core/transaction_claims.hpp"
#include "core/waiting_jobs.hpp"
#include "pg/pg.hpp"

namespace {

using namespace pgjq;

void before_commit(bool preparing)
{
    if (preparing)
        refuse_prepare_with_count_changes();
    settle_waiting_jobs();
    write_depth_ledger(preparing);
    if (preparing)
        refuse_prepare_with_announcements();
}

void after_commit()
{
    forget_transaction_claims();
    publish_enqueue_counts();
    settle_taken_counts(true);
    publish_latencies();
    apply_floor_notes_at_commit();
    forget_waiting_jobs_ledger();
    forget_depth_ledger();
    hand_over_announcements();
    wake_maintenance_for_commit();
}

// Rolled back, or prepared (what it noted is left to COMMIT PREPARED, which runs no pgjq code).
void after_other_end(bool prepared)
{
    forget_transaction_claims();
    if (prepared)
        apply_floor_notes_at_prepare();
    else
        apply_floor_notes_at_abort();
    settle_taken_counts(false);
    forget_latencies();
    forget_waiting_jobs_ledger();
    forget_depth_ledger();
    forget_announcements();
    forget_wakes();
}

void on_transaction_event(XactEvent event, void*)
{
    switch (event) {
    case XACT_EVENT_PRE_COMMIT:
        before_commit(false);
        break;
    case XACT_EVENT_PRE_PREPARE:
        before_commit(true);
        break;
    case XACT_EVENT_COMMIT:
        after_commit();
        break;
    case XACT_EVENT_PREPARE:
        after_other_end(true);
        break;
    // A parallel worker runs only the row filters of pgjq's views, which note nothing.
    case XACT_EVENT_PARALLEL_COMMIT:
    case XACT_EVENT_ABORT:
    case XACT_EVENT_PARALLEL_ABORT:
        after_other_end(false);
        break;
    default:
        break;
    }
}

void on_subtransaction_event(SubXactEvent event, SubTransactionId sub, SubTransactionId parent, void*)
{
    switch (event) {
    case SUBXACT_EVENT_COMMIT_SUB:
        transaction_claims_subtransaction_committed(sub, parent);
        depth_ledger_subtransaction_committed(sub, parent);
        announcements_subtransaction_committed(sub, parent);
        break;
    case SUBXACT_EVENT_ABORT_SUB:
        transaction_claims_subtransaction_aborted(sub);
        claim_floors_subtransaction_aborted();
        enqueue_counts_subtransaction_aborted(sub);
        latencies_subtransaction_aborted(sub);
        depth_ledger_subtransaction_aborted(sub);
        announcements_subtransaction_aborted(sub);
        break;
    default:
        break;
    }
}

}  // namespace

namespace pgjq {

void register_transaction_hub()
{
    RegisterXactCallback(on_transaction_event, nullptr);
    RegisterSubXactCallback(on_subtransaction_event, nullptr);
}

}  // namespace pgjq
