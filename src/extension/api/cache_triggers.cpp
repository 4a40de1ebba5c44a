// cache_triggers.cpp: the statement triggers behind what each backend caches from pgjq's tables (the
// queues that keep no completed jobs, the grants): a change makes every backend read the table again
// after it commits (this backend at its next command), through a relcache invalidation of the table.
#include "pg/boundary.hpp"
#include "pg/trigger.hpp"

namespace {

Datum invalidate_table(FunctionCallInfo fcinfo, const char* function)
{
    TriggerData* trigger = pgjq::trigger_data(fcinfo, function);
    CacheInvalidateRelcache(trigger->tg_relation);
    return PointerGetDatum(nullptr);
}

}  // namespace

// On pgjq.queues (its name predates the other tables that need it).
PGJQ_FUNCTION(queues_changed)
{
    return invalidate_table(fcinfo, "queues_changed");
}

// On any table whose rows a backend caches (from 0.2.0: pgjq.grants).
PGJQ_FUNCTION(relation_changed)
{
    return invalidate_table(fcinfo, "relation_changed");
}
