// spi.hpp: saved SPI plans, prepared once per backend on first use, and small execution helpers.
//
// Each SQL group keeps its statements next to its logic and asks for them through saved_plan(). Names
// resolve as under search_path = pg_catalog, pg_temp while pgjq's functions run (SET clauses, or
// pg/name_resolution.hpp), so every statement schema-qualifies pgjq's objects and the plans never need
// re-planning because of a caller's search_path. Every statement runs with jit and enable_seqscan off
// (spi.cpp says why).
#pragma once

#include "pg/pg.hpp"

namespace pgjq {

struct plan_text {
    const char* sql;
    int nargs;
    Oid argtypes[12];
};

// Returns the kept plan for `text`, preparing it on first use. `slot` is the caller's static cache.
SPIPlanPtr saved_plan(SPIPlanPtr* slot, const plan_text& text);

// Runs a saved plan (not read-only: each statement takes a fresh snapshot under READ COMMITTED) and
// returns the number of rows processed. Errors other than ereport ones are turned into an ERROR.
uint64 run_plan(SPIPlanPtr plan, const Datum* values, const char* nulls, long max_rows = 0);

// Runs a saved plan with the latest snapshot: what transactions committed while this one ran, including
// those it just waited for, whatever its isolation level.
uint64 run_plan_latest(SPIPlanPtr plan, const Datum* values, const char* nulls);

// Runs a saved SELECT without parameters read-only, under the calling statement's snapshot (what a STABLE
// function must see), and returns the number of rows.
uint64 read_plan(SPIPlanPtr plan);

// First column of the first result row, or `found = false` when there is none.
Datum first_value(bool* isnull, bool* found);

}  // namespace pgjq
