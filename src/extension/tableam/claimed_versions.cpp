// claimed_versions.cpp: the places of the versions this backend's claims wrote (see claimed_versions.hpp).
// Direct-mapped by job id: the jobs of a batch have near ids and fall into different slots, and a place
// overwritten by another job's is only a lookup through the key.
#include "tableam/claimed_versions.hpp"

#include "pg/compat.hpp"
#include "tableam/table_writes.hpp"

namespace {

using namespace pgjq;

struct claimed_place {
    Oid relid;
    Oid relfilenode;  // a table rewritten (TRUNCATE, VACUUM FULL, CLUSTER) has another
    int64 id;
    ItemPointerData tid;
};
constexpr int k_places = 1024;  // a power of two, above the largest batch workers usually claim
claimed_place s_places[k_places];

claimed_place& place_of(int64 id)
{
    return s_places[static_cast<uint64>(id) & (k_places - 1)];
}

}  // namespace

namespace pgjq {

void remember_claimed_version(Relation live, int64 id, const ItemPointerData* tid)
{
    claimed_place& p = place_of(id);
    p.relid = RelationGetRelid(live);
    p.relfilenode = compat::relation_file_number(live);
    p.id = id;
    p.tid = *tid;
}

bool claimed_version(Relation live, int64 id, ItemPointerData* tid)
{
    const claimed_place& p = place_of(id);
    if (p.id != id || p.relid != RelationGetRelid(live) || p.relfilenode != compat::relation_file_number(live) ||
        !ItemPointerIsValid(&p.tid))
        return false;
    *tid = p.tid;
    return true;
}

}  // namespace pgjq
