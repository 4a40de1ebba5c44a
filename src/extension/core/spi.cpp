// spi.cpp: the saved-plan cache and SPI execution helpers declared in spi.hpp.
#include "core/spi.hpp"

namespace pgjq {

SPIPlanPtr saved_plan(SPIPlanPtr* slot, const plan_text& text)
{
    if (*slot != nullptr)
        return *slot;
    // Generic: planned once per backend. The default plan cache re-plans a statement with parameters
    // for its first five runs and whenever a custom plan looks cheaper, which it always does here: that
    // planning was 42% of a worker's server time at claim batch 1. The callers pin enable_seqscan = off,
    // so a plan first built while a table was still small walks an index once the table is large.
    SPIPlanPtr plan =
        SPI_prepare_cursor(text.sql, text.nargs, const_cast<Oid*>(text.argtypes), CURSOR_OPT_GENERIC_PLAN);
    if (plan == nullptr)
        elog(ERROR, "pgjq: SPI_prepare failed (%s) for: %s", SPI_result_code_string(SPI_result), text.sql);
    if (SPI_keepplan(plan) != 0)
        elog(ERROR, "pgjq: SPI_keepplan failed");
    *slot = plan;
    return plan;
}

SPIPlanPtr saved_plan(versioned_plan* plan, bool legacy)
{
    return legacy ? saved_plan(&plan->legacy_plan, plan->legacy) : saved_plan(&plan->current_plan, plan->current);
}

uint64 run_plan(SPIPlanPtr plan, const Datum* values, const char* nulls, long max_rows)
{
    int rc = SPI_execute_plan(plan, const_cast<Datum*>(values), nulls, false, max_rows);
    if (rc < 0)
        elog(ERROR, "pgjq: SPI_execute_plan failed: %s", SPI_result_code_string(rc));
    return SPI_processed;
}

uint64 run_plan_latest(SPIPlanPtr plan, const Datum* values, const char* nulls)
{
    int rc = SPI_execute_snapshot(plan, const_cast<Datum*>(values), nulls, GetLatestSnapshot(), InvalidSnapshot, false,
                                  true, 0);
    if (rc < 0)
        elog(ERROR, "pgjq: SPI_execute_snapshot failed: %s", SPI_result_code_string(rc));
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
