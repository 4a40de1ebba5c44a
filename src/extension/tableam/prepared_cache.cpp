// prepared_cache.cpp: a direct path's prepared state and what makes it stale (see prepared_cache.hpp).
#include "tableam/prepared_cache.hpp"

namespace {

using namespace pgjq;

constexpr int k_max_caches = 8;
prepared_cache* s_caches[k_max_caches];
int s_ncaches = 0;

bool built_for(const prepared_cache* cache, const Oid* relations, int nrelations, List* index_oids, const void* key)
{
    if (cache->state == nullptr || cache->stale || cache->key != key || cache->nrelations != nrelations ||
        cache->nindexes != list_length(index_oids))
        return false;
    for (int i = 0; i < nrelations; i++)
        if (cache->relations[i] != relations[i])
            return false;
    for (int i = 0; i < cache->nindexes; i++)
        if (cache->indexes[i] != list_nth_oid(index_oids, i))
            return false;
    return true;
}

// What the state is built for, recorded before it is built: an invalidation from then on marks it stale.
void remember_inputs(prepared_cache* cache, const Oid* relations, int nrelations, List* index_oids, const void* key)
{
    if (nrelations > k_cached_relations)
        elog(ERROR, "pgjq: a prepared state watches at most %d relations", k_cached_relations);
    const int nindexes = list_length(index_oids);
    if (nindexes > cache->indexes_capacity) {
        const int capacity = Max(nindexes, 2 * cache->indexes_capacity);
        cache->indexes =
            static_cast<Oid*>(cache->indexes != nullptr ? repalloc(cache->indexes, sizeof(Oid) * capacity)
                                                        : MemoryContextAlloc(TopMemoryContext, sizeof(Oid) * capacity));
        cache->indexes_capacity = capacity;
    }
    for (int i = 0; i < nrelations; i++)
        cache->relations[i] = relations[i];
    cache->nrelations = nrelations;
    for (int i = 0; i < nindexes; i++)
        cache->indexes[i] = list_nth_oid(index_oids, i);
    cache->nindexes = nindexes;
    cache->key = key;
    cache->stale = false;
}

}  // namespace

namespace pgjq {

// A relation's own invalidation, or one of its indexes' (whether an index takes inserts is read from its
// relcache entry when the state is built, rather than trusted to change only with the table's).
void prepared_caches_relation_invalidated(Oid relid)
{
    for (int c = 0; c < s_ncaches; c++) {
        prepared_cache* cache = s_caches[c];
        bool named = relid == InvalidOid;
        for (int i = 0; !named && i < cache->nrelations; i++)
            named = cache->relations[i] == relid;
        for (int i = 0; !named && i < cache->nindexes; i++)
            named = cache->indexes[i] == relid;
        cache->stale = cache->stale || named;
    }
}

// A function (a default's, a constraint's) or a type (an enum's labels) changed.
void prepared_caches_catalog_invalidated()
{
    for (int c = 0; c < s_ncaches; c++)
        s_caches[c]->stale = true;
}

void* cached_state(prepared_cache* cache, const Oid* relations, int nrelations, List* index_oids, const void* key,
                   void* (*build)(void* arg), void* arg)
{
    if (!cache->watched) {
        if (s_ncaches == k_max_caches)
            elog(ERROR, "pgjq: more than %d prepared-state caches", k_max_caches);
        s_caches[s_ncaches++] = cache;
        cache->watched = true;
    }
    if (built_for(cache, relations, nrelations, index_oids, key))
        return cache->state;
    if (cache->state != nullptr)
        MemoryContextSetParent(cache->context, TopTransactionContext);
    cache->state = nullptr;
    cache->context = nullptr;
    remember_inputs(cache, relations, nrelations, index_oids, key);
    // (The macro AllocSetContextCreate takes only a literal name; context_name is one, kept by the cache.)
    MemoryContext building =
        AllocSetContextCreateInternal(TopTransactionContext, cache->context_name, ALLOCSET_SMALL_SIZES);
    MemoryContext caller = MemoryContextSwitchTo(building);
    void* built = build(arg);
    MemoryContextSwitchTo(caller);
    MemoryContextSetParent(building, CacheMemoryContext);
    cache->context = building;
    cache->state = built;
    return built;
}

Relation* open_indexes(Relation rel, List** oids)
{
    *oids = RelationGetIndexList(rel);
    const int count = list_length(*oids);
    Relation* indexes = static_cast<Relation*>(palloc(sizeof(Relation) * (count + 1)));
    for (int i = 0; i < count; i++)
        indexes[i] = index_open(list_nth_oid(*oids, i), RowExclusiveLock);
    return indexes;
}

void close_indexes(Relation* indexes, int count)
{
    for (int i = 0; i < count; i++)
        index_close(indexes[i], NoLock);
}

}  // namespace pgjq
