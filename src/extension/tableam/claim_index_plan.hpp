// claim_index_plan.hpp: runs a claim from its queue's floor planned with the claim index only.
//
// The floor's pick (WHERE queue_name = $1 AND priority = $8 AND id >= $9 ORDER BY priority DESC, id) can be
// served by two indexes: live_jobs_claim_idx, which starts at the floor, and the primary key, which starts
// at the floor's id and filters every row version after it (claimed ones, other queues' jobs). The generic
// plan's estimates cannot tell them apart and chose the primary key: measured, the drain at claim batch 10
// lost 9 % (51.6 -> 56.3 us of server CPU per job). While this runs, the planner sees only the claim index
// for the locking SELECT on live_jobs; the claim's UPDATE, which finds its rows by id, keeps every index.
#pragma once

#include "pg/pg.hpp"

namespace pgjq {

uint64 run_plan_on_claim_index(SPIPlanPtr plan, const Datum* values, const char* nulls);

// _PG_init: the planner hook.
void register_claim_index_planner_hook();
// The invalidation hub (hooks/invalidation_hub.cpp): live_jobs or its claim index is looked up again.
void claim_index_relation_invalidated(Oid relid);

}  // namespace pgjq
