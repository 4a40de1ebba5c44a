// counted_tables.cpp: what utility commands do to the enqueue counts (see counted_tables.hpp).
#include "core/counted_tables.hpp"

#include "core/depth.hpp"
#include "core/enqueue_counts.hpp"
#include "pg/catalog.hpp"
#include "pg/pg.hpp"

namespace {

bool loads_counted_table(const Node* stmt)
{
    if (!IsA(stmt, CopyStmt))
        return false;
    const CopyStmt* copy = castNode(CopyStmt, const_cast<Node*>(stmt));
    if (!copy->is_from || copy->relation == nullptr)
        return false;
    Oid relid = RangeVarGetRelid(copy->relation, NoLock, true);
    return OidIsValid(relid) &&
        (relid == pgjq::pgjq_relation("live_jobs") || relid == pgjq::pgjq_relation("queue_depth"));
}

// A CREATE EXTENSION that makes the tables (not one that finds them there: IF NOT EXISTS).
bool creates_pgjq(const Node* stmt)
{
    return IsA(stmt, CreateExtensionStmt) &&
        strcmp(castNode(CreateExtensionStmt, const_cast<Node*>(stmt))->extname, "pgjq") == 0 &&
        pgjq::enqueue_counts_available() && !OidIsValid(get_extension_oid("pgjq", true));
}

}  // namespace

namespace pgjq {

counted_tables_command before_counted_tables_command(const Node* stmt)
{
    // Read before the tables exist: a COPY committed since (by a restore) makes the mark not count.
    counted_tables_command command = {creates_pgjq(stmt), 0, loads_counted_table(stmt)};
    if (command.creating_pgjq)
        command.epoch = enqueue_counts_epoch();
    if (command.loading && enqueue_counts_available())
        unreconcile_at_commit();
    return command;
}

void after_counted_tables_command(const counted_tables_command& command)
{
    if (command.creating_pgjq)
        reconciled_at_commit(pgjq_relation("queue_depth"), command.epoch);
    if (command.loading)
        recount_every_queue();
}

}  // namespace pgjq
