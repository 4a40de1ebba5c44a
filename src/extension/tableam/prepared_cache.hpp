// prepared_cache.hpp: the state a direct path prepares for the relations it writes through the table access
// method (row_insert.cpp, direct_claim.cpp, direct_archive.cpp), kept for the backend until an invalidation
// says that one of those relations, one of the indexes it was prepared for, a function or a type changed.
#pragma once

#include "pg/pg.hpp"

namespace pgjq {

constexpr int k_cached_relations = 3;

// One path's cache; a static of its file, watched for invalidations from its first use on.
struct prepared_cache {
    const char* context_name;  // of the memory the state lives in
    void* state;               // nullptr: nothing kept
    MemoryContext context;
    Oid relations[k_cached_relations];
    int nrelations;
    const void* key;  // what else the state was built for (row_insert.cpp: the row's shape)
    Oid* indexes;     // in TopMemoryContext, so that an error while building leaves it readable
    int nindexes, indexes_capacity;
    bool stale;
    bool watched;  // in the list the invalidation hub marks stale
};

// The invalidation hub (hooks/invalidation_hub.cpp): a relation (a table or one of its indexes) changed, or
// a function (a default's, a constraint's) or a type (an enum's labels) did; the caches built from it are
// stale.
void prepared_caches_relation_invalidated(Oid relid);
void prepared_caches_catalog_invalidated();

// The cache's state when it was built for these relations (locked), index OIDs and key and nothing changed
// since; otherwise build(arg)'s, built in a memory context of its own under the transaction's (so that an
// error leaves nothing behind) and kept in the cache's memory once complete. The state it replaces goes to the
// transaction's memory: a call further up the stack may still be using it (a claim or a completion run by a
// function that the outer call's CHECK constraint or default calls).
void* cached_state(prepared_cache* cache, const Oid* relations, int nrelations, List* index_oids, const void* key,
                   void* (*build)(void* arg), void* arg);

template <typename State, typename Build>
State* cached_state(prepared_cache* cache, const Oid* relations, int nrelations, List* index_oids, const void* key,
                    Build& build)
{
    auto call = [](void* arg) -> void* { return (*static_cast<Build*>(arg))(); };
    return static_cast<State*>(cached_state(cache, relations, nrelations, index_oids, key, call, &build));
}

// The table's indexes, each opened with RowExclusiveLock, and their OIDs (*oids, RelationGetIndexList's).
Relation* open_indexes(Relation rel, List** oids);
void close_indexes(Relation* indexes, int count);

}  // namespace pgjq
