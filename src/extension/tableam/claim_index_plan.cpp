// claim_index_plan.cpp: the planner hook of claim_index_plan.hpp.
#include "tableam/claim_index_plan.hpp"

#include "pg/catalog.hpp"
#include "pg/spi.hpp"

namespace {

get_relation_info_hook_type s_previous_hook = nullptr;
// live_jobs and its claim index, looked up again after an invalidation of either (or of every relation).
Oid s_live_jobs = InvalidOid;
Oid s_claim_index = InvalidOid;
// While a claim from a floor runs (and may be planned).
bool s_claim_index_only = false;

void keep_claim_index_only(PlannerInfo* root, Oid relation, bool inherited, RelOptInfo* rel)
{
    if (s_previous_hook != nullptr)
        s_previous_hook(root, relation, inherited, rel);
    if (!s_claim_index_only || root->parse->commandType != CMD_SELECT)
        return;
    // An invalidation may arrive while the claim revalidates its plan, just before planning it again.
    if (!OidIsValid(s_live_jobs) || !OidIsValid(s_claim_index)) {
        s_live_jobs = pgjq::pgjq_relation("live_jobs");
        s_claim_index = pgjq::pgjq_relation("live_jobs_claim_idx");
    }
    if (relation != s_live_jobs)
        return;
    List* kept = NIL;
    ListCell* cell;
    foreach (cell, rel->indexlist) {
        IndexOptInfo* index = static_cast<IndexOptInfo*>(lfirst(cell));
        if (index->indexoid == s_claim_index)
            kept = lappend(kept, index);
    }
    rel->indexlist = kept;
}

}  // namespace

namespace pgjq {

uint64 run_plan_on_claim_index(SPIPlanPtr plan, const Datum* values, const char* nulls)
{
    volatile uint64 rows = 0;
    s_claim_index_only = true;
    PG_TRY();
    {
        rows = run_plan(plan, values, nulls);
    }
    PG_FINALLY();
    {
        s_claim_index_only = false;
    }
    PG_END_TRY();
    return rows;
}

void claim_index_relation_invalidated(Oid relation)
{
    if (relation == InvalidOid || relation == s_live_jobs || relation == s_claim_index)
        s_live_jobs = s_claim_index = InvalidOid;
}

void register_claim_index_planner_hook()
{
    s_previous_hook = get_relation_info_hook;
    get_relation_info_hook = keep_claim_index_only;
}

}  // namespace pgjq
