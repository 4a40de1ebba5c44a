// spi.cpp: the saved-plan cache and SPI execution helpers declared in spi.hpp.
#include "pg/spi.hpp"

namespace pgjq {

SPIPlanPtr saved_plan(SPIPlanPtr* slot, const plan_text& text)
{
    if (*slot != nullptr)
        return *slot;
    // Generic: planned once per backend. The default plan cache re-plans a statement with parameters
    // for its first five runs and whenever a custom plan looks cheaper, which it always does here: that
    // planning was 42% of a worker's server time at claim batch 1. Statements run with enable_seqscan
    // off (execute_pinned), so a plan first built while a table was still small walks an index once the
    // table is large.
    SPIPlanPtr plan =
        SPI_prepare_cursor(text.sql, text.nargs, const_cast<Oid*>(text.argtypes), CURSOR_OPT_GENERIC_PLAN);
    if (plan == nullptr)
        elog(ERROR, "pgjq: SPI_prepare failed (%s) for: %s", SPI_result_code_string(SPI_result), text.sql);
    if (SPI_keepplan(plan) != 0)
        elog(ERROR, "pgjq: SPI_keepplan failed");
    *slot = plan;
    return plan;
}

namespace {

// Runs `execute` (an SPI execution, returning its code) with jit and enable_seqscan off, as every statement
// of pgjq is planned and run: a generic plan first built while a table was small must still walk an index
// once it is large, and a statement must not stop to compile. The SQL functions whose SET clauses pin both
// pay nothing here; enqueue, try_enqueue and insert_into_jobs_view have none, so that their single-job
// path, which runs no statement, sets no setting (pg/name_resolution.hpp says what that cost), and pay a
// nest level for each statement they do run. An ERROR leaves the nest level to the (sub)transaction's abort.
template <typename Execute>
int execute_pinned(Execute execute)
{
    if (!jit_enabled && !enable_seqscan)
        return execute();
    const int level = NewGUCNestLevel();
    (void) set_config_option("jit", "off", PGC_USERSET, PGC_S_SESSION, GUC_ACTION_SAVE, true, 0, false);
    (void) set_config_option("enable_seqscan", "off", PGC_USERSET, PGC_S_SESSION, GUC_ACTION_SAVE, true, 0, false);
    const int rc = execute();
    AtEOXact_GUC(true, level);
    return rc;
}

}  // namespace

uint64 run_plan(SPIPlanPtr plan, const Datum* values, const char* nulls, long max_rows)
{
    int rc = execute_pinned([&] { return SPI_execute_plan(plan, const_cast<Datum*>(values), nulls, false, max_rows); });
    if (rc < 0)
        elog(ERROR, "pgjq: SPI_execute_plan failed: %s", SPI_result_code_string(rc));
    return SPI_processed;
}

uint64 run_plan_latest(SPIPlanPtr plan, const Datum* values, const char* nulls)
{
    int rc = execute_pinned([&] {
        return SPI_execute_snapshot(plan, const_cast<Datum*>(values), nulls, GetLatestSnapshot(), InvalidSnapshot,
                                    false, true, 0);
    });
    if (rc < 0)
        elog(ERROR, "pgjq: SPI_execute_snapshot failed: %s", SPI_result_code_string(rc));
    return SPI_processed;
}

uint64 read_plan(SPIPlanPtr plan)
{
    int rc = execute_pinned([&] { return SPI_execute_plan(plan, nullptr, nullptr, true, 0); });
    if (rc != SPI_OK_SELECT)
        elog(ERROR, "pgjq: SPI_execute_plan failed: %s", SPI_result_code_string(rc));
    return SPI_processed;
}

Datum first_value(bool* isnull, bool* found)
{
    if (SPI_processed == 0 || SPI_tuptable == nullptr) {
        *found = false;
        *isnull = true;
        return (Datum) 0;
    }
    *found = true;
    return SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, isnull);
}

}  // namespace pgjq
