// invalidation_hub.cpp: pgjq's one relation-cache callback, and its catalog-cache callbacks for functions
// and types. Each backend-local copy of something in the catalogs or in pgjq's tables forgets it here and
// reads it again at its next use; none of these handlers reads anything itself (an invalidation may arrive in
// the middle of any catalog access), so their order does not matter.
#include "hooks/hubs.hpp"

#include "core/privileges.hpp"
#include "core/queue_cache.hpp"
#include "pg/catalog.hpp"
#include "pg/pg.hpp"
#include "tableam/claim_index_plan.hpp"
#include "tableam/prepared_cache.hpp"

namespace {

using namespace pgjq;

// `relid` InvalidOid: the whole relation cache was reset (after an invalidation queue overflow, say).
void on_relation_invalidated(Datum, Oid relid)
{
    installation_relation_invalidated(relid);
    queues_relation_invalidated(relid);
    grants_relation_invalidated(relid);
    claim_index_relation_invalidated(relid);
    prepared_caches_relation_invalidated(relid);
}

void on_function_or_type_invalidated(Datum, int, uint32)
{
    prepared_caches_catalog_invalidated();
}

}  // namespace

namespace pgjq {

void register_invalidation_hub()
{
    CacheRegisterRelcacheCallback(on_relation_invalidated, (Datum) 0);
    CacheRegisterSyscacheCallback(PROCOID, on_function_or_type_invalidated, (Datum) 0);
    CacheRegisterSyscacheCallback(TYPEOID, on_function_or_type_invalidated, (Datum) 0);
}

}  // namespace pgjq
