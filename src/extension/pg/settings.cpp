// settings.cpp: the definitions and values of every pgjq.* setting (see settings.hpp).
#include "pg/settings.hpp"

#include "pg/limits.hpp"

namespace pgjq {

int max_payload_bytes = 1024 * 1024;
int max_batch_bytes = 64 * 1024 * 1024;
int forced_depth_slot = -1;
bool synchronous_worker_commit = false;
bool claim_floors = true;
bool direct_claims = true;
bool direct_completions = true;
bool shared_enqueue_counts = true;
int maintenance_naptime_ms = 5000;
int launcher_naptime_s = 30;
int prune_interval_s = 60;
int queue_sample_interval_s = 60;
int prune_batch_size = 1000;
int restart_delay_s = 1;
int max_maintenance_workers = 2;
int maintenance_idle_timeout_s = 10;
int maintenance_turn_ms = 1000;
int max_databases = 256;
char* served_databases = nullptr;
char* test_failing_duty = nullptr;

static bool check_database_list(char** newval, void** extra, GucSource source)
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

void define_settings()
{
    DefineCustomIntVariable("pgjq.max_payload_bytes",
                            "Largest payload or result, in bytes, that pgjq accepts for one job.",
                            "Larger values are rejected with SQLSTATE 54000.", &max_payload_bytes, 1024 * 1024, 1,
                            256 * 1024 * 1024, PGC_SUSET, GUC_UNIT_BYTE, nullptr, nullptr, nullptr);
    DefineCustomIntVariable("pgjq.max_batch_bytes", "Largest payloads array, in bytes, of one pgjq.enqueue_batch.",
                            "Larger ones are rejected with SQLSTATE 54000.", &max_batch_bytes, 64 * 1024 * 1024, 1024,
                            MaxAllocSize / 2, PGC_SUSET, GUC_UNIT_BYTE, nullptr, nullptr, nullptr);
    DefineCustomIntVariable(
        "pgjq.depth_slot", "Counter slot of pgjq.queue_depth this session writes (-1: chosen by backend).",
        "For tests that need two sessions to share or not share a slot. Superusers only: a "
        "session holding every slot's row would block a queue's producers and workers.",
        &forced_depth_slot, -1, -1, k_depth_slots - 1, PGC_SUSET, GUC_NOT_IN_SAMPLE, nullptr, nullptr, nullptr);
    DefineCustomBoolVariable(
        "pgjq.synchronous_worker_commit",
        "Whether a worker call that is a transaction by itself waits for its WAL to be flushed.",
        "Off: claims, completions, failures and heartbeats made outside a transaction block commit like "
        "synchronous_commit = off; a crash may undo the last of them, and their jobs run again.",
        &synchronous_worker_commit, false, PGC_USERSET, 0, nullptr, nullptr, nullptr);
    DefineCustomBoolVariable(
        "pgjq.claim_floors", "Whether this session's leased claims start from their queue's claim floor.",
        "Off: they read the queue from the start, as before 0.2.0, and set no floor (others' floors stay right).",
        &claim_floors, true, PGC_USERSET, GUC_NOT_IN_SAMPLE, nullptr, nullptr, nullptr);
    DefineCustomBoolVariable(
        "pgjq.direct_claims", "Whether this session's leased claims update their jobs through the table access method.",
        "Off: they run the claim's statement (FOR UPDATE SKIP LOCKED, then UPDATE), as before; the same jobs in the "
        "same order.",
        &direct_claims, true, PGC_USERSET, GUC_NOT_IN_SAMPLE, nullptr, nullptr, nullptr);
    DefineCustomBoolVariable(
        "pgjq.direct_completions",
        "Whether this session's completions, final failures and cancellations move their jobs through the table "
        "access method.",
        "Off: they run the statement (DELETE from live_jobs, INSERT into finished_jobs), as before; the same history "
        "rows and notices.",
        &direct_completions, true, PGC_USERSET, GUC_NOT_IN_SAMPLE, nullptr, nullptr, nullptr);
    DefineCustomBoolVariable(
        "pgjq.shared_enqueue_counts",
        "Whether this session's enqueues into queues without max_pending count their jobs in shared memory.",
        "Off: each enqueuing transaction writes its counter row of pgjq.queue_depth, as before. Needs "
        "shared_preload_libraries and a maintenance worker, which folds the counts into the rows.",
        &shared_enqueue_counts, true, PGC_USERSET, GUC_NOT_IN_SAMPLE, nullptr, nullptr, nullptr);
    DefineCustomIntVariable("pgjq.naptime", "Longest time a pgjq maintenance worker sleeps between two passes.",
                            "Workers wake earlier for due jobs, expiring leases and pruning.", &maintenance_naptime_ms,
                            5000, 10, 3600 * 1000, PGC_SIGHUP, GUC_UNIT_MS, nullptr, nullptr, nullptr);
    DefineCustomIntVariable("pgjq.launcher_naptime", "How often the pgjq launcher looks for databases to serve.",
                            "Databases without the extension are checked again after this time.", &launcher_naptime_s,
                            30, 1, 3600, PGC_SIGHUP, GUC_UNIT_S, nullptr, nullptr, nullptr);
    DefineCustomIntVariable(
        "pgjq.prune_interval", "How often pgjq maintenance workers delete finished jobs past their queue's retention.",
        nullptr, &prune_interval_s, 60, 1, 7 * 24 * 3600, PGC_SIGHUP, GUC_UNIT_S, nullptr, nullptr, nullptr);
    DefineCustomIntVariable("pgjq.queue_sample_interval",
                            "How often pgjq maintenance workers record each queue's figures for the charts.",
                            "Kept a day in pgjq.queue_samples (read through pgjq.queue_history); 0: no samples.",
                            &queue_sample_interval_s, 60, 0, 3600, PGC_SIGHUP, GUC_UNIT_S, nullptr, nullptr, nullptr);
    DefineCustomIntVariable("pgjq.prune_batch_size", "Finished jobs deleted per pruning transaction.", nullptr,
                            &prune_batch_size, 1000, 1, 100000, PGC_SIGHUP, 0, nullptr, nullptr, nullptr);
    DefineCustomIntVariable("pgjq.restart_delay",
                            "Delay before a pgjq background worker that exited with an error is started again.",
                            "The launcher's own restart delay is the value read at server start.", &restart_delay_s, 1,
                            1, 3600, PGC_SIGHUP, GUC_UNIT_S, nullptr, nullptr, nullptr);
    DefineCustomIntVariable(
        "pgjq.max_maintenance_workers",
        "Most maintenance workers the pgjq launcher runs at once, whatever the number of databases.",
        "Each is a background worker: max_worker_processes must leave room for them, the launcher, "
        "parallel query and logical replication.",
        &max_maintenance_workers, 2, 1, 64, PGC_SIGHUP, 0, nullptr, nullptr, nullptr);
    DefineCustomIntVariable(
        "pgjq.maintenance_idle_timeout",
        "How long a maintenance worker the launcher started stays with nothing to do before it exits.",
        "The launcher starts it again for the next lease end, due job, prune or notification.",
        &maintenance_idle_timeout_s, 10, 1, 3600, PGC_SIGHUP, GUC_UNIT_S, nullptr, nullptr, nullptr);
    DefineCustomIntVariable(
        "pgjq.maintenance_turn",
        "Longest time a maintenance worker the launcher started keeps serving its database while others wait.",
        "When databases wait for a worker, a worker that has served its database this long leaves after its "
        "round, however much work is due there, and the launcher serves the database that has waited longest.",
        &maintenance_turn_ms, 1000, 100, 3600 * 1000, PGC_SIGHUP, GUC_UNIT_MS, nullptr, nullptr, nullptr);
    DefineCustomStringVariable("pgjq.databases",
                               "Databases the pgjq launcher serves (comma-separated; empty: every database).",
                               "Databases without the extension are skipped whatever this says.", &served_databases, "",
                               PGC_SIGHUP, GUC_LIST_INPUT, check_database_list, nullptr, nullptr);
    DefineCustomStringVariable(
        "pgjq.test_failing_duty", "Makes the maintenance duty of this name fail at its worst moment (for tests).",
        nullptr, &test_failing_duty, "", PGC_SUSET, GUC_NO_SHOW_ALL | GUC_NOT_IN_SAMPLE, nullptr, nullptr, nullptr);
    // PostgreSQL refuses a server-start setting defined after start: it exists only with preload, the
    // only case that reads it (the launcher's shared memory).
    if (process_shared_preload_libraries_in_progress)
        DefineCustomIntVariable("pgjq.max_databases",
                                "Databases whose deadlines the pgjq launcher keeps in shared memory.",
                                "With more databases that have pgjq, the least recently served lose their deadlines "
                                "until the launcher visits them again.",
                                &max_databases, 256, 1, 100000, PGC_POSTMASTER, 0, nullptr, nullptr, nullptr);
    MarkGUCPrefixReserved("pgjq");
}

}  // namespace pgjq
