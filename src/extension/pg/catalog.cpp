// catalog.cpp: reading pgjq's relations and installed version from the catalogs (see catalog.hpp).
#include "pg/catalog.hpp"

namespace pgjq {

int version_number(const char* version)
{
    int major, minor, patch, consumed = 0;
    if (version == nullptr || sscanf(version, "%d.%d.%d%n", &major, &minor, &patch, &consumed) != 3 ||
        version[consumed] != '\0' || major < 0 || minor < 0 || minor > 99 || patch < 0 || patch > 99)
        return -1;
    return major * 10000 + minor * 100 + patch;
}

// pgjq's row of pg_extension (copied into `into`), or nullptr.
static HeapTuple extension_row(MemoryContext into, TupleDesc* desc)
{
    // As get_extension_oid does, by the unique index on the name.
    Relation rel = table_open(ExtensionRelationId, AccessShareLock);
    ScanKeyData key;
    ScanKeyInit(&key, Anum_pg_extension_extname, BTEqualStrategyNumber, F_NAMEEQ, CStringGetDatum("pgjq"));
    SysScanDesc scan = systable_beginscan(rel, ExtensionNameIndexId, true, nullptr, 1, &key);
    HeapTuple tuple = systable_getnext(scan);
    HeapTuple copy = nullptr;
    if (HeapTupleIsValid(tuple)) {
        MemoryContext caller = MemoryContextSwitchTo(into);
        copy = heap_copytuple(tuple);
        *desc = CreateTupleDescCopy(RelationGetDescr(rel));
        MemoryContextSwitchTo(caller);
    }
    systable_endscan(scan);
    table_close(rel, AccessShareLock);
    return copy;
}

char* installed_version()
{
    TupleDesc desc;
    HeapTuple row = extension_row(CurrentMemoryContext, &desc);
    if (row == nullptr)
        return nullptr;
    bool isnull;
    Datum value = heap_getattr(row, Anum_pg_extension_extversion, desc, &isnull);  // never null
    return isnull ? nullptr : TextDatumGetCString(value);
}

static installation s_installation;
static bool s_installation_valid = false;
static uint64 s_invalidations = 0;  // tells a read that an invalidation arrived while it ran

const installation& current_installation()
{
    if (s_installation_valid)
        return s_installation;
    uint64 invalidations_before = s_invalidations;
    TupleDesc desc;
    HeapTuple row = extension_row(CurrentMemoryContext, &desc);
    installation found = {false, -1, InvalidOid};
    if (row != nullptr) {
        bool isnull;
        Datum version = heap_getattr(row, Anum_pg_extension_extversion, desc, &isnull);
        found.installed = true;
        found.version = isnull ? -1 : version_number(TextDatumGetCString(version));
        found.owner = reinterpret_cast<Form_pg_extension>(GETSTRUCT(row))->extowner;
    }
    s_installation = found;
    s_installation_valid = s_invalidations == invalidations_before;  // else read again next time
    return s_installation;
}

void installation_relation_invalidated(Oid)
{
    s_installation_valid = false;
    s_invalidations++;
}

Oid pgjq_relation(const char* name)
{
    Oid schema = get_namespace_oid("pgjq", true);
    return OidIsValid(schema) ? get_relname_relid(name, schema) : InvalidOid;
}

}  // namespace pgjq
