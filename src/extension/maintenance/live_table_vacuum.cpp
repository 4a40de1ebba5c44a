// live_table_vacuum.cpp: the maintenance worker vacuums pgjq.live_jobs itself.
//
// Every claim leaves a dead row version behind and every completion another. Autovacuum visits a
// database once per autovacuum_naptime (a minute by default), far too rarely for a table whose rows
// turn over thousands of times a second: measured, live_jobs grew from 2.4 to 148 MB in a 60 s run.
// The worker vacuums it (lazily, as autovacuum would, without truncation, whose exclusive lock would
// stall claims) at two speeds:
// - while the table is small, every 100 ms whenever jobs moved: a small table is cheap to vacuum, and
//   its dead rows must be reusable before new rows extend it. The statistics cannot drive this:
//   backends flush them about once a second, by which time 18k jobs/s have left ~36k dead row
//   versions (measured in the 60 s steady benchmark: 2.4 -> 33 MB with a once-a-second statistics
//   rule, 2.4 -> 3.6 MB with this one). A cap on the vacuum's share of time was tried and dropped: a
//   vacuum slowed by a busy CPU stretched the next wait, the table grew, the vacuum slowed further
//   (32 MB); a fixed interval bounds the dead rows to 100 ms of traffic;
// - once it is large (a backlog), when the statistics show enough of it dead: each vacuum then scans
//   every index, so it must be worth it.
// Neither rule vacuums while the horizon (the oldest transaction a snapshot may still need) stands where it
// stood at the last vacuum, unless that vacuum is a minute old: a snapshot held open keeps every row version
// deleted since then, so another vacuum would scan the table and remove nothing, again at every round, while
// the held-back history makes the claims slow already (docs/benchmarks.md, "Under a held snapshot").
// The minute bounds what the rule can hold back that a vacuum could remove all the
// same: rows of aborted transactions, pages the last vacuum could not prune, a vacuum that did not run.
#include "maintenance/duty.hpp"

#include "pg/catalog.hpp"
#include "pg/compat.hpp"

namespace {

using namespace pgjq;

constexpr int k_small_table_interval_ms = 100;
constexpr PgStat_Counter k_min_dead_rows = 2000;  // below this a vacuum is not worth its index scans
// 16 MB: vacuuming live_jobs with 7 MB of heap and 20 000 dead rows took 11 ms here.
constexpr BlockNumber k_small_table_pages = 2048;

TimestampTz s_checked = 0;  // the last look at pgjq.live_jobs
// The horizon before the last vacuum, when it ended, and the table it vacuumed (a table created again
// starts over).
TransactionId s_vacuumed_horizon = InvalidTransactionId;
TimestampTz s_vacuumed_at = 0;
Oid s_vacuumed_relid = InvalidOid;
constexpr int k_unmoved_horizon_interval_ms = 60 * 1000;

// Whether a vacuum could remove anything the last one left: once the horizon has moved (or the last one is
// old).
bool vacuum_could_remove(Relation rel, TransactionId* horizon)
{
    *horizon = GetOldestNonRemovableTransactionId(rel);
    return RelationGetRelid(rel) != s_vacuumed_relid || !TransactionIdEquals(*horizon, s_vacuumed_horizon) ||
        TimestampDifferenceExceeds(s_vacuumed_at, GetCurrentTimestamp(), k_unmoved_horizon_interval_ms);
}

// Vacuums pgjq.live_jobs when it is small and jobs moved since the last look, or when enough of it is dead;
// returns whether it did. Runs outside any transaction: vacuum() commits its own.
bool vacuum_live_jobs_if_needed(bool jobs_moved)
{
    MemoryContext caller = CurrentMemoryContext;
    SetCurrentStatementStartTimestamp();
    StartTransactionCommand();
    Oid relid = pgjq_relation("live_jobs");
    bool needed = false;
    if (OidIsValid(relid) && jobs_moved) {
        Relation rel = try_relation_open(relid, AccessShareLock);
        if (rel != nullptr) {
            needed = RelationGetNumberOfBlocks(rel) <= k_small_table_pages;
            relation_close(rel, AccessShareLock);
        }
    }
    if (!needed && OidIsValid(relid)) {
        PgStat_StatTabEntry* stats = pgstat_fetch_stat_tabentry(relid);
        needed = stats != nullptr && compat::dead_tuples(stats) >= k_min_dead_rows &&
            compat::dead_tuples(stats) >= compat::live_tuples(stats) / 10;
    }
    // Another vacuum (autovacuum's, say) holds the table: skip this turn quietly, where vacuum() itself
    // would log a WARNING every 100 ms.
    if (needed && !ConditionalLockRelationOid(relid, ShareUpdateExclusiveLock))
        needed = false;
    TransactionId horizon = InvalidTransactionId;
    if (needed) {
        Relation rel = try_relation_open(relid, NoLock);  // locked just above
        needed = rel != nullptr && vacuum_could_remove(rel, &horizon);
        if (rel != nullptr)
            relation_close(rel, NoLock);
    }
    if (!needed) {
        CommitTransactionCommand();
        MemoryContextSwitchTo(caller);
        return false;
    }

    debug_query_string = "pgjq maintenance: vacuuming pgjq.live_jobs";
    pgstat_report_activity(STATE_RUNNING, debug_query_string);
    // vacuum() keeps its working memory under PortalContext, as in autovacuum; the relation list must
    // outlive the transaction that vacuum() commits first.
    if (PortalContext == nullptr)
        PortalContext = AllocSetContextCreate(TopMemoryContext, "pgjq maintenance vacuum", ALLOCSET_DEFAULT_SIZES);
    MemoryContextSwitchTo(PortalContext);
    List* relations =
        list_make1(makeVacuumRelation(makeRangeVar(pstrdup("pgjq"), pstrdup("live_jobs"), -1), relid, NIL));

    VacuumParams params;
    memset(&params, 0, sizeof params);
    params.options = VACOPT_VACUUM | VACOPT_PROCESS_TOAST | VACOPT_SKIP_LOCKED;
    params.freeze_min_age = -1;
    params.freeze_table_age = -1;
    params.multixact_freeze_min_age = -1;
    params.multixact_freeze_table_age = -1;
    params.is_wraparound = false;
    params.log_min_duration = -1;
    params.index_cleanup = VACOPTVALUE_AUTO;
    params.truncate = VACOPTVALUE_DISABLED;
    params.nworkers = -1;                            // no parallel workers for a table this small
    compat::vacuum_from_worker(relations, &params);  // commits our transaction, ends having started a new one
    // Only a vacuum that returned counts (an ERROR skips this).
    s_vacuumed_relid = relid;
    s_vacuumed_horizon = horizon;
    s_vacuumed_at = GetCurrentTimestamp();
    CommitTransactionCommand();
    MemoryContextReset(PortalContext);
    MemoryContextSwitchTo(caller);
    debug_query_string = nullptr;
    pgstat_report_activity(STATE_IDLE, nullptr);
    return true;
}

// The statistics rule at every pgjq.naptime; the small-table rule when the relay says jobs moved.
duty_outcome run(maintenance_round& round)
{
    test_failure_point("live_table_vacuum");
    bool vacuumed = vacuum_live_jobs_if_needed(round.jobs_moved);
    round.jobs_moved = false;
    s_checked = GetCurrentTimestamp();
    return {naptime_from(s_checked), vacuumed ? 1 : 0, DT_NOEND};
}

bool woken(const maintenance_round& round)
{
    return round.jobs_moved && TimestampDifferenceExceeds(s_checked, GetCurrentTimestamp(), k_small_table_interval_ms);
}

}  // namespace

extern const pgjq::duty k_live_table_vacuum_duty = {"live_table_vacuum", run, woken};
