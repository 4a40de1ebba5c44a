// utility_hub.cpp: pgjq's one utility hook. Around each utility command, in this order:
// 1. a command on a database a maintenance worker serves (drop, rename, copy) makes the worker leave first,
//    and lets it come back afterwards, whether the command succeeded or raised;
// 2. a command that makes or loads pgjq's counted tables (CREATE EXTENSION, COPY) tells the enqueue counts
//    in shared memory whether the counter rows still agree with the jobs once it commits.
// The first wraps the second: the worker is away for the whole command, including what the second does.
#include "hooks/hubs.hpp"

#include "core/counted_tables.hpp"
#include "maintenance/database_commands.hpp"
#include "pg/pg.hpp"

namespace {

using namespace pgjq;

ProcessUtility_hook_type s_previous = nullptr;

void run_command(PlannedStmt* pstmt, const char* query_string, bool read_only_tree, ProcessUtilityContext context,
                 ParamListInfo params, QueryEnvironment* query_env, DestReceiver* dest, QueryCompletion* qc)
{
    const counted_tables_command counted = before_counted_tables_command(pstmt->utilityStmt);
    (s_previous ? s_previous : standard_ProcessUtility)(pstmt, query_string, read_only_tree, context, params, query_env,
                                                        dest, qc);
    after_counted_tables_command(counted);
}

void on_utility_command(PlannedStmt* pstmt, const char* query_string, bool read_only_tree,
                        ProcessUtilityContext context, ParamListInfo params, QueryEnvironment* query_env,
                        DestReceiver* dest, QueryCompletion* qc)
{
    const database_command aside = before_database_command(pstmt->utilityStmt);
    if (!OidIsValid(aside.dboid)) {
        run_command(pstmt, query_string, read_only_tree, context, params, query_env, dest, qc);
        return;
    }
    PG_TRY();
    {
        run_command(pstmt, query_string, read_only_tree, context, params, query_env, dest, qc);
    }
    PG_CATCH();
    {
        after_database_command(aside, false);
        PG_RE_THROW();
    }
    PG_END_TRY();
    after_database_command(aside, true);
}

}  // namespace

namespace pgjq {

void register_utility_hub()
{
    s_previous = ProcessUtility_hook;
    ProcessUtility_hook = on_utility_command;
}

}  // namespace pgjq
