// queue_cache.cpp: the backend's copy of what queue_cache.hpp says, forgotten when pgjq.queues changes
// (api/cache_triggers.cpp).
//
// Why a cache: reading the setting inside the archive statement (an InitPlan over pgjq.queues) cost
// every completion about 5 % of a batch-1 drain's server CPU (measured), although almost no queue uses it;
// and a single enqueue into a queue without max_pending, which needs nothing but the queue's defaults,
// spent a fifth of its server CPU in the reservation that joined pgjq.queues (measured with perf).
// One read fills everything: pgjq.queues changes rarely (administration only).
#include "core/queue_cache.hpp"

#include "pg/catalog.hpp"
#include "pg/spi.hpp"
#include "versions/statement.hpp"

namespace {

using namespace pgjq;

// Every queue, in the order of strcmp() for a binary search.
statement s_read = {"queue_cache.read",
                    {"SELECT queue_name, max_attempts, fifo, max_pending IS NOT NULL, keep_completed, uses_dependencies"
                     "  FROM pgjq.queues ORDER BY queue_name COLLATE \"C\"",
                     0,
                     {}}};

struct named_settings {
    char* name;
    cached_queue settings;
};

MemoryContext s_context;  // holds what follows
bool s_valid = false;
uint64 s_invalidations = 0;  // tells a read that an invalidation arrived while it ran
Oid s_queues_relid = InvalidOid;
named_settings* s_settings = nullptr;
int s_nsettings = 0;
ArrayType* s_not_keeping = nullptr;  // nullptr when every queue keeps its completed jobs
bool s_dependencies = false;

void read_queues()
{
    if (s_valid)
        return;
    if (s_context == nullptr)
        s_context = AllocSetContextCreate(CacheMemoryContext, "pgjq queue cache", ALLOCSET_SMALL_SIZES);
    s_queues_relid = pgjq_relation("queues");
    uint64 invalidations_before = s_invalidations;
    // The latest snapshot, not the transaction's: the copy outlives the transaction, and one read under an
    // older REPEATABLE READ snapshot would keep settings that changed before it for good.
    uint64 n = run_plan_latest(saved_plan(&s_read), nullptr, nullptr);
    MemoryContextReset(s_context);
    MemoryContext caller = MemoryContextSwitchTo(s_context);
    s_settings = static_cast<named_settings*>(palloc(sizeof(named_settings) * (n + 1)));
    Datum* not_keeping = static_cast<Datum*>(palloc(sizeof(Datum) * (n + 1)));
    int nnot_keeping = 0;
    s_nsettings = 0;
    s_dependencies = false;
    for (uint64 i = 0; i < n; i++) {
        HeapTuple row = SPI_tuptable->vals[i];
        TupleDesc desc = SPI_tuptable->tupdesc;
        bool isnull;
        named_settings* q = &s_settings[s_nsettings++];
        q->name = SPI_getvalue(row, desc, 1);  // in s_context, the current context
        q->settings.max_attempts = DatumGetInt32(SPI_getbinval(row, desc, 2, &isnull));
        q->settings.fifo = DatumGetBool(SPI_getbinval(row, desc, 3, &isnull));
        q->settings.limited = DatumGetBool(SPI_getbinval(row, desc, 4, &isnull));
        if (!DatumGetBool(SPI_getbinval(row, desc, 5, &isnull)))
            not_keeping[nnot_keeping++] = CStringGetTextDatum(q->name);
        s_dependencies = s_dependencies || DatumGetBool(SPI_getbinval(row, desc, 6, &isnull));
    }
    s_not_keeping =
        nnot_keeping == 0 ? nullptr : construct_array(not_keeping, nnot_keeping, TEXTOID, -1, false, TYPALIGN_INT);
    MemoryContextSwitchTo(caller);
    // An invalidation that arrived during the read leaves the copy stale: read again next time. (An
    // ERROR in the read leaves s_valid false too.)
    s_valid = s_invalidations == invalidations_before;
}

int compare_names(const void* key, const void* element)
{
    return strcmp(static_cast<const char*>(key), static_cast<const named_settings*>(element)->name);
}

}  // namespace

namespace pgjq {

const cached_queue* cached_queue_settings(const char* queue_name)
{
    // An enqueue into a database at 0.1.0 takes its reservation statement, as 0.1.0 did.
    if (database_at_0_1_0())
        return nullptr;
    read_queues();
    auto* found = static_cast<const named_settings*>(
        bsearch(queue_name, s_settings, s_nsettings, sizeof(named_settings), compare_names));
    return found ? &found->settings : nullptr;
}

ArrayType* queues_not_keeping_completed()
{
    read_queues();
    return s_not_keeping;
}

bool dependencies_in_use()
{
    read_queues();
    return s_dependencies;
}

void queues_relation_invalidated(Oid relid)
{
    // InvalidOid: the whole relcache was reset (for instance after an invalidation queue overflow)
    if (relid == InvalidOid || relid == s_queues_relid) {
        s_valid = false;
        s_invalidations++;
    }
}

}  // namespace pgjq
