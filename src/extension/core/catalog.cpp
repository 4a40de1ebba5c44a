// catalog.cpp: reading pgjq's relations and installed version from the catalogs (see catalog.hpp).
#include "core/catalog.hpp"

extern "C" {
#include "access/genam.h"
#include "catalog/indexing.h"
#include "catalog/pg_extension.h"
#include "utils/fmgroids.h"
#include "utils/rel.h"
}

namespace pgjq {

int version_number(const char* version)
{
    int major, minor, patch, consumed = 0;
    if (version == nullptr || sscanf(version, "%d.%d.%d%n", &major, &minor, &patch, &consumed) != 3 ||
        version[consumed] != '\0' || major < 0 || minor < 0 || minor > 99 || patch < 0 || patch > 99)
        return -1;
    return major * 10000 + minor * 100 + patch;
}

char* installed_version()
{
    // As get_extension_oid does, by the unique index on the name; extversion is never null.
    Relation rel = table_open(ExtensionRelationId, AccessShareLock);
    ScanKeyData key;
    ScanKeyInit(&key, Anum_pg_extension_extname, BTEqualStrategyNumber, F_NAMEEQ, CStringGetDatum("pgjq"));
    SysScanDesc scan = systable_beginscan(rel, ExtensionNameIndexId, true, nullptr, 1, &key);
    HeapTuple tuple = systable_getnext(scan);
    char* version = nullptr;
    if (HeapTupleIsValid(tuple)) {
        bool isnull;
        Datum value = heap_getattr(tuple, Anum_pg_extension_extversion, RelationGetDescr(rel), &isnull);
        if (!isnull)
            version = TextDatumGetCString(value);
    }
    systable_endscan(scan);
    table_close(rel, AccessShareLock);
    return version;
}

Oid pgjq_relation(const char* name)
{
    Oid schema = get_namespace_oid("pgjq", true);
    return OidIsValid(schema) ? get_relname_relid(name, schema) : InvalidOid;
}

}  // namespace pgjq
