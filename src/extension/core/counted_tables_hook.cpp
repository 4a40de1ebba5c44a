// counted_tables_hook.cpp: the utility hook of counted_tables_hook.hpp.
#include "core/counted_tables_hook.hpp"

#include "core/enqueue_counts.hpp"
#include "pg/catalog.hpp"
#include "pg/pg.hpp"

namespace {

ProcessUtility_hook_type s_previous = nullptr;

bool loads_counted_table(const Node* stmt)
{
    if (!IsA(stmt, CopyStmt))
        return false;
    const CopyStmt* copy = castNode(CopyStmt, const_cast<Node*>(stmt));
    if (!copy->is_from || copy->relation == nullptr || !pgjq::enqueue_counts_available())
        return false;
    Oid relid = RangeVarGetRelid(copy->relation, NoLock, true);
    return OidIsValid(relid) &&
        (relid == pgjq::pgjq_relation("live_jobs") || relid == pgjq::pgjq_relation("queue_depth"));
}

// A CREATE EXTENSION that makes the tables (not one that finds them there: IF NOT EXISTS).
bool creates_pgjq(const Node* stmt)
{
    return IsA(stmt, CreateExtensionStmt) &&
        strcmp(castNode(CreateExtensionStmt, const_cast<Node*>(stmt))->extname, "pgjq") == 0 &&
        pgjq::enqueue_counts_available() && !OidIsValid(get_extension_oid("pgjq", true));
}

void process_utility(PlannedStmt* pstmt, const char* query_string, bool read_only_tree, ProcessUtilityContext context,
                     ParamListInfo params, QueryEnvironment* query_env, DestReceiver* dest, QueryCompletion* qc)
{
    if (loads_counted_table(pstmt->utilityStmt))
        pgjq::unreconcile_at_commit();
    // Read before the tables exist: a COPY committed since (by a restore) makes the mark not count.
    const bool creating = creates_pgjq(pstmt->utilityStmt);
    const uint32 epoch = creating ? pgjq::enqueue_counts_epoch() : 0;
    (s_previous ? s_previous : standard_ProcessUtility)(pstmt, query_string, read_only_tree, context, params, query_env,
                                                        dest, qc);
    if (creating)
        pgjq::reconciled_at_commit(pgjq::pgjq_relation("queue_depth"), epoch);
}

}  // namespace

namespace pgjq {

void register_counted_tables_hook()
{
    s_previous = ProcessUtility_hook;
    ProcessUtility_hook = process_utility;
}

}  // namespace pgjq
