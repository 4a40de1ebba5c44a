// statement.hpp: a statement of pgjq whose form depends on the schema it runs against. After a package
// upgrade this library serves databases still at 0.1.0 or 0.2.0 until ALTER EXTENSION pgjq UPDATE runs
// there, and their tables lack columns the current statements name. Such a statement is declared once, in its
// current form, beside the code that runs it; a database at 0.1.0 runs its 0.1.0 form instead, kept under the
// same name in forms_0_1_0.cpp, and one at 0.2.0 its 0.2.0 form where forms_0_2_0.cpp has one (else the
// current form). The choice is made here, in saved_plan(), and nowhere else: the code that runs a
// statement never asks which version the database is at. What 0.1.0 lacks altogether (the table-access-method
// paths, claim floors, counts in shared memory, capabilities) is declined by each of those mechanisms where
// it decides whether it applies, through database_at_0_1_0() (pg/catalog.hpp).
#pragma once

#include "pg/catalog.hpp"
#include "pg/spi.hpp"

namespace pgjq {

struct statement {
    const char* name;  // its 0.1.0 form's key in forms_0_1_0.cpp
    plan_text current;
    SPIPlanPtr current_plan;
    SPIPlanPtr plan_0_1_0;
    SPIPlanPtr plan_0_2_0;
};

// The kept plan of the statement's form for the current database, prepared on first use.
SPIPlanPtr saved_plan(statement* s);

// The 0.1.0 form of the statement called `name`, or nullptr when it has none (forms_0_1_0.cpp).
const plan_text* form_0_1_0_of(const char* name);

// The 0.2.0 form of the statement called `name`, or nullptr when it runs its current form there
// (forms_0_2_0.cpp).
const plan_text* form_0_2_0_of(const char* name);

}  // namespace pgjq
