// workflow_plan.hpp: the steps a call adds to a workflow (start_workflow, add_steps), read from their JSON
// array, checked, and put in an order where every step comes after the steps it depends on; then enqueued
// and recorded. Everything is checked before anything is written, and an ERROR undoes what was.
#pragma once

#include "core/privileges.hpp"
#include "pg/pg.hpp"

namespace pgjq {

// One step as given: {"name", "job_type", "payload", "queue", "after", "priority", "max_attempts", "timeout"}.
struct step_spec {
    char* name;
    char* job_type;
    Jsonb* payload;
    char* queue_name;
    int32 priority;
    bool has_max_attempts;
    int32 max_attempts;
    Interval* timeout;  // nullptr: the queue's job_timeout
    char** after;       // the names of the steps it depends on (distinct)
    int nafter;
    int* parents;  // for each name of after: the index of a step of this call, or -1 (a step of the workflow)
};

// The steps of one call, in the call's order, and an order to enqueue them in: each after the steps of
// this call it depends on.
struct step_plan {
    step_spec* steps;
    int* order;
    int nsteps;
    int nedges;
};

// Reads and checks `steps` (a JSON array of 1 to k_max_workflow_steps objects). Names in "after" that are not
// steps of this call are left for the caller to find among the workflow's (parents[i] = -1); with
// `allow_existing` false each must be a step of this call. A cycle is refused with the cycle named.
step_plan read_steps(const Jsonb* steps, bool allow_existing);

// Enqueues the plan's steps into workflow `workflow_id` as `call`'s role, and records them with their edges.
// `existing_names`/`existing_ids`/`existing_unfinished`/`existing_broken` (n of them): the workflow's steps
// that "after" may name, locked by the caller; a step waits for those unfinished, and one that depends on a
// step that failed or was cancelled is cancelled at once under on_failure = 'fail'. Returns the new jobs'
// ids in the order of the call's array. Requires an SPI connection.
struct existing_steps {
    char** names;
    int64* ids;
    bool* unfinished;
    bool* broken;
    int n;
};
ArrayType* enqueue_steps(const step_plan& plan, int64 workflow_id, const existing_steps& existing, bool cancel_broken,
                         const api_call& call);

}  // namespace pgjq
