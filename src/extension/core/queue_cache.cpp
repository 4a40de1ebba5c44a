// queue_cache.cpp: the backend's copy of what queue_cache.hpp says, forgotten when pgjq.queues changes
// (api/cache_triggers.cpp).
//
// Why a cache: reading the setting inside the archive statement (an InitPlan over pgjq.queues) cost
// every completion about 5 % of a batch-1 drain's server CPU (measured), although almost no queue uses it.
#include "core/queue_cache.hpp"

#include "core/catalog.hpp"
#include "core/spi.hpp"

namespace {

using namespace pgjq;

// clang-format off
versioned_plan s_read = {
    {"SELECT array_agg(queue_name) FILTER (WHERE NOT keep_completed), coalesce(bool_or(uses_dependencies), false)"
     "  FROM pgjq.queues", 0, {}},
    {"SELECT array_agg(queue_name) FILTER (WHERE NOT keep_completed), false FROM pgjq.queues", 0, {}}};
// clang-format on

MemoryContext s_context;  // holds s_queues
bool s_valid = false;
uint64 s_invalidations = 0;  // tells a read that an invalidation arrived while it ran
Oid s_queues_relid = InvalidOid;
ArrayType* s_queues = nullptr;
bool s_dependencies = false;

void forget(Datum, Oid relid)
{
    // InvalidOid: the whole relcache was reset (for instance after an invalidation queue overflow)
    if (relid == InvalidOid || relid == s_queues_relid) {
        s_valid = false;
        s_invalidations++;
    }
}

void read_queues()
{
    if (s_valid)
        return;
    if (s_context == nullptr)
        s_context = AllocSetContextCreate(CacheMemoryContext, "pgjq queue cache", ALLOCSET_SMALL_SIZES);
    s_queues_relid = pgjq_relation("queues");
    uint64 invalidations_before = s_invalidations;
    run_plan(saved_plan(&s_read, current_installation().version < k_version_0_2), nullptr, nullptr);
    bool isnull;
    HeapTuple row = SPI_tuptable->vals[0];
    Datum names = SPI_getbinval(row, SPI_tuptable->tupdesc, 1, &isnull);
    MemoryContextReset(s_context);
    s_queues = nullptr;
    if (!isnull) {
        ArrayType* array = DatumGetArrayTypeP(names);
        s_queues = static_cast<ArrayType*>(MemoryContextAlloc(s_context, VARSIZE(array)));
        memcpy(s_queues, array, VARSIZE(array));
    }
    s_dependencies = DatumGetBool(SPI_getbinval(row, SPI_tuptable->tupdesc, 2, &isnull));
    // An invalidation that arrived during the read leaves the copy stale: read again next time. (An
    // ERROR in the read leaves s_valid false too.)
    s_valid = s_invalidations == invalidations_before;
}

}  // namespace

namespace pgjq {

ArrayType* queues_not_keeping_completed()
{
    read_queues();
    return s_queues;
}

bool dependencies_in_use()
{
    read_queues();
    return s_dependencies;
}

void register_queue_cache_callback()
{
    CacheRegisterRelcacheCallback(forget, (Datum) 0);
}

}  // namespace pgjq
