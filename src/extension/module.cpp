// module.cpp: PG_MODULE_MAGIC and _PG_init. Each PostgreSQL mechanism pgjq uses is registered once, by its
// hub (hooks/hubs.hpp); with preload also the shared memory and the launcher of the maintenance workers.
#include "hooks/hubs.hpp"
#include "maintenance/launcher.hpp"
#include "pg/pg.hpp"
#include "pg/settings.hpp"
#include "tableam/claim_index_plan.hpp"

extern "C" {
PG_MODULE_MAGIC;

PGDLLEXPORT void _PG_init(void);

void _PG_init(void)
{
    pgjq::define_settings();
    pgjq::register_transaction_hub();
    pgjq::register_invalidation_hub();
    pgjq::register_utility_hub();
    pgjq::register_claim_index_planner_hook();
    if (!process_shared_preload_libraries_in_progress || IsBinaryUpgrade)
        return;
    pgjq::register_shared_memory_hub();
    pgjq::register_launcher();
}
}
