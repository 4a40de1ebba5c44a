// name_resolution.cpp: the pin declared in name_resolution.hpp.
#include "core/name_resolution.hpp"

namespace pgjq {

#if PG_VERSION_NUM < 170000

// The path "pg_catalog, pg_temp" (the SQL functions' SET clause) would give: pg_catalog first, the session's
// temporary schema (if it has one) last, where only relations and types are looked up.
int pin_name_resolution()
{
    Oid temp_schema, temp_toast_schema;
    GetTempNamespaceState(&temp_schema, &temp_toast_schema);
    OverrideSearchPath path = {};
    path.schemas = OidIsValid(temp_schema) ? list_make1_oid(temp_schema) : NIL;
    path.addCatalog = true;
    path.addTemp = false;
    PushOverrideSearchPath(&path);
    list_free(path.schemas);
    return 0;
}

void unpin_name_resolution(int)
{
    PopOverrideSearchPath();
}

#else

// PostgreSQL 17 removed the override stack: the setting itself, in a GUC nest level of the call's own
// (pg_temp named last, or it would be searched first for relations).
int pin_name_resolution()
{
    const int level = NewGUCNestLevel();
    (void) set_config_option("search_path", "pg_catalog, pg_temp", PGC_USERSET, PGC_S_SESSION, GUC_ACTION_SAVE, true, 0,
                             false);
    return level;
}

void unpin_name_resolution(int token)
{
    AtEOXact_GUC(true, token);
}

#endif

}  // namespace pgjq
