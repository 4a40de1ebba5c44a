// module.cpp: PG_MODULE_MAGIC, _PG_init and the GUCs; nothing else.
#include "args.hpp"
#include "keep_completed_cache.hpp"
#include "spi_plans.hpp"
#include "notify_relay.hpp"
#include "worker_state.hpp"

// Background worker: GUCs (all reloadable with SIGHUP), shared memory and the launcher (preload only).
namespace {

shmem_request_hook_type s_prev_shmem_request = nullptr;
shmem_startup_hook_type s_prev_shmem_startup = nullptr;

void pgjq_shmem_request()
{
    if (s_prev_shmem_request)
        s_prev_shmem_request();
    RequestAddinShmemSpace(pgjq::worker_shmem_size());
    pgjq::relay_shmem_request();
}

void pgjq_shmem_startup()
{
    if (s_prev_shmem_startup)
        s_prev_shmem_startup();
    pgjq::worker_shmem_startup();
    pgjq::relay_shmem_startup();
}

bool check_databases(char** newval, void** extra, GucSource source)
{
    char* copy = pstrdup(*newval);
    List* names = nullptr;
    bool ok = SplitIdentifierString(copy, ',', &names);
    list_free(names);
    pfree(copy);
    if (!ok)
        GUC_check_errdetail("List syntax is invalid.");
    return ok;
}

void define_worker_settings()
{
    DefineCustomIntVariable("pgjq.naptime",
                            "Longest time a pgjq maintenance worker sleeps between two passes.",
                            "Workers wake earlier for due jobs, expiring leases and pruning.",
                            &pgjq::worker_naptime_ms, 5000, 10, 3600 * 1000, PGC_SIGHUP, GUC_UNIT_MS,
                            nullptr, nullptr, nullptr);
    DefineCustomIntVariable("pgjq.launcher_naptime",
                            "How often the pgjq launcher looks for databases to serve.",
                            "Databases without the extension are checked again after this time.",
                            &pgjq::launcher_naptime_s, 30, 1, 3600, PGC_SIGHUP, GUC_UNIT_S,
                            nullptr, nullptr, nullptr);
    DefineCustomIntVariable("pgjq.prune_interval",
                            "How often pgjq maintenance workers delete finished jobs past their queue's retention.",
                            nullptr, &pgjq::prune_interval_s, 60, 1, 7 * 24 * 3600, PGC_SIGHUP, GUC_UNIT_S,
                            nullptr, nullptr, nullptr);
    DefineCustomIntVariable("pgjq.prune_batch_size",
                            "Finished jobs deleted per pruning transaction.",
                            nullptr, &pgjq::prune_batch_size, 1000, 1, 100000, PGC_SIGHUP, 0,
                            nullptr, nullptr, nullptr);
    DefineCustomIntVariable("pgjq.restart_delay",
                            "Delay before a pgjq background worker that exited with an error is started again.",
                            "The launcher's own restart delay is the value read at server start.",
                            &pgjq::restart_delay_s, 1, 1, 3600, PGC_SIGHUP, GUC_UNIT_S,
                            nullptr, nullptr, nullptr);
    DefineCustomStringVariable("pgjq.databases",
                               "Databases the pgjq launcher serves (comma-separated; empty: every database).",
                               "Databases without the extension are skipped whatever this says.",
                               &pgjq::worker_databases, "", PGC_SIGHUP, GUC_LIST_INPUT,
                               check_databases, nullptr, nullptr);
    pgjq::register_wake_callback();
    pgjq::register_relay_callbacks();
    pgjq::register_keep_completed_callback();
    if (!process_shared_preload_libraries_in_progress || IsBinaryUpgrade)
        return;
    pgjq::worker_preloaded = true;
    s_prev_shmem_request = shmem_request_hook;
    shmem_request_hook = pgjq_shmem_request;
    s_prev_shmem_startup = shmem_startup_hook;
    shmem_startup_hook = pgjq_shmem_startup;
    pgjq::register_launcher();
}

} // namespace

extern "C" {
PG_MODULE_MAGIC;

PGDLLEXPORT void _PG_init(void);

void _PG_init(void)
{
    DefineCustomIntVariable("pgjq.max_payload_bytes",
                            "Largest payload or result, in bytes, that pgjq accepts for one job.",
                            "Larger values are rejected with SQLSTATE 54000.",
                            &pgjq::max_payload_bytes, 1024 * 1024, 1, 256 * 1024 * 1024,
                            PGC_SUSET, GUC_UNIT_BYTE, nullptr, nullptr, nullptr);
    DefineCustomIntVariable("pgjq.depth_slot",
                            "Counter slot of pgjq.queue_depth this session writes (-1: chosen by backend).",
                            "For tests that need two sessions to share or not share a slot.",
                            &pgjq::forced_depth_slot, -1, -1, 15,
                            PGC_USERSET, GUC_NOT_IN_SAMPLE, nullptr, nullptr, nullptr);
    define_worker_settings();
    MarkGUCPrefixReserved("pgjq");
}
}
