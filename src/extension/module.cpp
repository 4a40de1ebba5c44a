// module.cpp: PG_MODULE_MAGIC and _PG_init: the settings, the transaction callbacks, and with preload the
// shared memory and the launcher.
#include "core/claim_floor.hpp"
#include "core/counted_tables_hook.hpp"
#include "core/depth.hpp"
#include "core/direct_archive.hpp"
#include "core/direct_claim.hpp"
#include "core/enqueue_counts.hpp"
#include "core/latency.hpp"
#include "core/privileges.hpp"
#include "core/queue_cache.hpp"
#include "core/transaction_end.hpp"
#include "maintenance/database_commands.hpp"
#include "maintenance/launcher.hpp"
#include "maintenance/notification_relay.hpp"
#include "maintenance/shared_state.hpp"
#include "maintenance/wake.hpp"
#include "pg/catalog.hpp"
#include "pg/settings.hpp"
#include "tableam/claim_index_plan.hpp"
#include "tableam/row_insert.hpp"

namespace {

shmem_request_hook_type s_prev_shmem_request = nullptr;
shmem_startup_hook_type s_prev_shmem_startup = nullptr;

void request_shmem()
{
    if (s_prev_shmem_request)
        s_prev_shmem_request();
    RequestAddinShmemSpace(pgjq::worker_shmem_size());
    pgjq::relay_shmem_request();
    pgjq::latency_shmem_request();
    pgjq::enqueue_counts_shmem_request();
    pgjq::claim_floor_shmem_request();
}

void start_shmem()
{
    if (s_prev_shmem_startup)
        s_prev_shmem_startup();
    pgjq::worker_shmem_startup();
    pgjq::relay_shmem_startup();
    pgjq::latency_shmem_startup();
    pgjq::enqueue_counts_shmem_startup();
    pgjq::claim_floor_shmem_startup();
}

}  // namespace

extern "C" {
PG_MODULE_MAGIC;

PGDLLEXPORT void _PG_init(void);

void _PG_init(void)
{
    pgjq::define_settings();
    pgjq::register_wake_callback();
    pgjq::register_relay_callbacks();
    pgjq::register_queue_cache_callback();
    pgjq::register_catalog_callback();
    pgjq::register_depth_callbacks();
    pgjq::register_latency_callback();
    pgjq::register_enqueue_counts_callback();
    pgjq::register_counted_tables_hook();
    pgjq::register_claim_floor_callback();
    pgjq::register_claim_index_planner_hook();
    pgjq::register_transaction_end_callback();
    pgjq::register_privileges_callback();
    pgjq::register_row_insert_callbacks();
    pgjq::register_direct_claim_callbacks();
    pgjq::register_direct_archive_callbacks();
    pgjq::register_database_commands_hook();
    if (!process_shared_preload_libraries_in_progress || IsBinaryUpgrade)
        return;
    pgjq::size_worker_state_for_launcher();
    s_prev_shmem_request = shmem_request_hook;
    shmem_request_hook = request_shmem;
    s_prev_shmem_startup = shmem_startup_hook;
    shmem_startup_hook = start_shmem;
    pgjq::register_launcher();
}
}
