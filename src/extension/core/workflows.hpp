// workflows.hpp: durable workflows (docs/workflows.md). A workflow's steps are jobs, with a row each in
// pgjq.workflow_run_steps and an edge per dependency in pgjq.workflow_edges. A step that depends on others is
// enqueued waiting and held (enqueue_request::held): not pgjq.job_dependencies but its row's counter `unmet`
// says how many of them have not finished. What finishes a step happens in other transactions, so each
// transaction settles the steps it finished as it commits (core/waiting_jobs.cpp runs the rounds), each
// statement with the latest snapshot and its row locks taken in id order:
// - the finished step's row records its outcome, once: the row is locked and must still say unfinished;
// - each child's row is locked and its counter lowered by the parents that finished; the child whose
//   counter reaches 0 starts, exactly once, since concurrent transactions lower it one after the other;
//   one whose parent failed for good is cancelled at once under on_failure = 'fail' (the next round
//   settles it in turn);
// - once no round cancels more steps, the workflow's row counts its finished and failed steps, and ends the
//   workflow at the last one (a sub-workflow's end is the event 'workflow/<id>' for the step that started it).
// A step adding steps (add_steps) locks the rows of the steps they depend on (FOR SHARE, which the
// settlement's lock conflicts with), so that one of the two transactions sees the other's work, and only then
// the workflow's row, as the settlement does: rows of steps before the workflow's.
#pragma once

#include "pg/pg.hpp"

namespace pgjq {

// The reason a step is cancelled with when a step it depends on failed for good or was cancelled (under
// on_failure = 'fail'); a retry brings back the steps cancelled so, and no step cancelled otherwise.
constexpr const char* k_cancelled_by_parent = "a step it depends on failed or was cancelled";

// Whether this database has workflows (0.3.0 and later).
bool workflows_installed();

// The queue and the enqueuing role (InvalidOid: none recorded) of live job `job_id`, read with the latest
// snapshot: false when it is not live. The queue name is palloc'd. Requires an SPI connection.
bool live_job_owner(int64 job_id, char** queue_name, Oid* enqueued_by);

// The steps one commit settled, in every round (palloc'd as they come; zero-initialised to start).
struct settled_steps {
    Datum* ids;
    Datum* statuses;
    int n;
    int capacity;
};

// At commit, in each round of core/waiting_jobs.cpp: settles the workflow steps among `finished` (an int8[]
// of jobs that left pgjq.live_jobs; others are ignored) and adds them to `settled`. Then, once no round
// finishes more jobs, count_settled_workflows counts them in their workflows, whose rows are locked after
// every step's row that any round locked (the order of workflows.hpp's protocol). Require an SPI connection,
// as the owner.
void settle_finished_steps(Datum finished, settled_steps* settled);
void count_settled_workflows(const settled_steps& settled);

// After revive_jobs brought back some of `ids` (an int8[]): those that are workflow steps start over, with
// every step downstream of them that was cancelled (revived too), waiting for the steps they depend on
// that have not completed. Requires an SPI connection.
void workflow_steps_revived(Datum ids);

// The maintenance worker's sweep: notes the steps whose job finished without being settled (a transaction
// whose backend did not yet know that the queue has workflows), and starts held steps that wait for nothing
// (see k_release). Returns how many. Requires an SPI connection.
int64 note_unsettled_steps();

// Prunes finished workflows past their retention (or, with `older_than`, finished longer ago than that),
// with their steps, edges and checkpoints, at most `limit` workflows; and the checkpoints of jobs gone,
// expired events and the waits of jobs gone. Returns how many workflows went. Requires an SPI connection.
int64 prune_workflows(int32 limit, const Interval* older_than = nullptr);

}  // namespace pgjq
