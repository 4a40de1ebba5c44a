// statement.cpp: choosing a statement's form by the schema of the current database (see statement.hpp).
#include "versions/statement.hpp"

namespace pgjq {

SPIPlanPtr saved_plan(statement* s)
{
    if (!database_at_0_1_0()) {
        const plan_text* form_0_2_0 = database_before_0_3_0() ? form_0_2_0_of(s->name) : nullptr;
        if (form_0_2_0 != nullptr)
            return saved_plan(&s->plan_0_2_0, *form_0_2_0);
        return saved_plan(&s->current_plan, s->current);
    }
    const plan_text* form = form_0_1_0_of(s->name);
    if (form == nullptr)
        elog(ERROR, "pgjq: statement \"%s\" has no 0.1.0 form", s->name);
    return saved_plan(&s->plan_0_1_0, *form);
}

}  // namespace pgjq
