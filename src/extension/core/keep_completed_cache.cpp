// keep_completed_cache.cpp: the backend's list of queues that delete their completed jobs, forgotten
// when pgjq.queues changes (api/cache_triggers.cpp).
//
// Why a cache: reading the setting inside the archive statement (an InitPlan over pgjq.queues) cost
// every completion about 5 % of a batch-1 drain's server CPU (measured), although almost no queue uses it.
#include "core/keep_completed_cache.hpp"
#include "core/catalog.hpp"
#include "core/spi.hpp"

namespace {

using namespace pgjq;

SPIPlanPtr s_read;
// clang-format off
const plan_text k_read = {
    "SELECT array_agg(queue_name) FROM pgjq.queues WHERE NOT keep_completed", 0, {}};
// clang-format on

MemoryContext s_context;  // holds s_queues
bool s_valid = false;
uint64 s_invalidations = 0;  // tells a read that an invalidation arrived while it ran
Oid s_queues_relid = InvalidOid;
ArrayType* s_queues = nullptr;

void forget(Datum, Oid relid)
{
    // InvalidOid: the whole relcache was reset (for instance after an invalidation queue overflow)
    if (relid == InvalidOid || relid == s_queues_relid) {
        s_valid = false;
        s_invalidations++;
    }
}

}  // namespace

namespace pgjq {

ArrayType* queues_not_keeping_completed()
{
    if (s_valid)
        return s_queues;
    if (s_context == nullptr)
        s_context = AllocSetContextCreate(CacheMemoryContext, "pgjq keep_completed", ALLOCSET_SMALL_SIZES);
    s_queues_relid = pgjq_relation("queues");
    uint64 invalidations_before = s_invalidations;
    bool isnull, found;
    run_plan(saved_plan(&s_read, k_read), nullptr, nullptr);
    Datum names = first_value(&isnull, &found);
    MemoryContextReset(s_context);
    s_queues = nullptr;
    if (found && !isnull) {
        ArrayType* array = DatumGetArrayTypeP(names);
        s_queues = static_cast<ArrayType*>(MemoryContextAlloc(s_context, VARSIZE(array)));
        memcpy(s_queues, array, VARSIZE(array));
    }
    // An invalidation that arrived during the read leaves the list stale: read again next time. (An
    // ERROR in the read leaves s_valid false too.)
    s_valid = s_invalidations == invalidations_before;
    return s_queues;
}

void register_keep_completed_callback()
{
    CacheRegisterRelcacheCallback(forget, (Datum) 0);
}

}  // namespace pgjq
