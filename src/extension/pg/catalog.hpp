// catalog.hpp: what the catalogs say about pgjq in the current database: its relations, and which version
// of its SQL objects is installed. After a package upgrade this library runs against databases still at an
// older version until someone runs ALTER EXTENSION pgjq UPDATE there; code that needs objects of a later
// version asks installed_version() first.
#pragma once

#include "pg/pg.hpp"

namespace pgjq {

// The version this library was built for: pgjq.control's default_version (the Makefile passes it).
constexpr const char* k_library_version = PGJQ_VERSION;

// "major.minor.patch" as major * 10000 + minor * 100 + patch, so versions compare as numbers; -1 when
// the text is not of that form.
int version_number(const char* version);

// pgjq's extversion in the current database (palloc'd), or nullptr when the extension is not installed.
// Needs a transaction.
char* installed_version();

// What this backend knows of pgjq in its database, read from pg_extension once and again after any
// relcache invalidation: ALTER EXTENSION pgjq UPDATE alters pgjq's tables, which sends one to every
// backend, so each sees the new version from its next transaction on. Needs a transaction.
struct installation {
    bool installed;
    int version;  // version_number() of extversion
    Oid owner;    // extowner: the role the SQL functions act as
};
const installation& current_installation();

// 0.2.0: capabilities are rows of pgjq.grants, jobs record their roles, and jobs may wait (group keys,
// dependencies), time out and be capped or rate-limited per queue. A database still at 0.1.0 is served as
// versions/statement.hpp says.
constexpr int k_version_0_2 = 200;

// Whether pgjq in the current database is still at 0.1.0 (read from the catalogs once per invalidation).
inline bool database_at_0_1_0()
{
    return current_installation().version < k_version_0_2;
}

// 0.3.0: workflows, the error history of attempts, and trace context on jobs (their headers column).
constexpr int k_version_0_3 = 300;

// Whether pgjq in the current database is older than 0.3.0.
inline bool database_before_0_3_0()
{
    return current_installation().version < k_version_0_3;
}

// The invalidation hub (hooks/invalidation_hub.cpp): any relation's invalidation makes current_installation()
// read the catalogs again.
void installation_relation_invalidated(Oid relid);

// The OID of pgjq's relation `name` (table or sequence), InvalidOid while the extension's schema or the
// relation does not exist.
Oid pgjq_relation(const char* name);

}  // namespace pgjq
