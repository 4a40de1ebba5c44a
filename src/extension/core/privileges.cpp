// privileges.cpp: capabilities (see privileges.hpp) and this backend's copy of pgjq.grants, read again
// after every change to it (its statement trigger sends a relcache invalidation to every backend).
#include "core/privileges.hpp"

#include "pg/catalog.hpp"
#include "pg/limits.hpp"
#include "pg/spi.hpp"

namespace {

using namespace pgjq;

struct grant_row {
    Oid grantee;
    uint8 capability;
    bool every_queue;
    char queue[k_queue_name_max + 1];
};

MemoryContext s_context = nullptr;  // holds s_grants
grant_row* s_grants = nullptr;
int s_ngrants = 0;
bool s_valid = false;
uint64 s_invalidations = 0;  // tells a read that an invalidation arrived while it ran
Oid s_grants_relid = InvalidOid;

SPIPlanPtr s_read;
// clang-format off
const plan_text k_read = {"SELECT grantee::oid, capability, queue_name FROM pgjq.grants", 0, {}};
// clang-format on

struct capability_name {
    capability bit;
    const char* name;
};
const capability_name k_capabilities[] = {
    {cap_producer, "producer"}, {cap_worker, "worker"}, {cap_admin, "admin"}, {cap_observer, "observer"}};

const char* name_of(capability cap)
{
    for (const capability_name& c : k_capabilities)
        if (c.bit == cap)
            return c.name;
    return "?";
}

}  // namespace

namespace pgjq {
uint8 capability_named(const char* name)
{
    for (const capability_name& c : k_capabilities)
        if (strcmp(c.name, name) == 0)
            return c.bit;
    return 0;
}
}  // namespace pgjq

namespace {

// Reads pgjq.grants as the extension's owner, whoever calls (the views' functions run as the reader).
void load_grants()
{
    if (s_valid)
        return;
    if (s_context == nullptr)
        s_context = AllocSetContextCreate(CacheMemoryContext, "pgjq grants", ALLOCSET_SMALL_SIZES);
    uint64 invalidations_before = s_invalidations;
    s_grants_relid = pgjq_relation("grants");
    Oid saved_user;
    int saved_context;
    GetUserIdAndSecContext(&saved_user, &saved_context);
    SetUserIdAndSecContext(current_installation().owner, saved_context | SECURITY_LOCAL_USERID_CHANGE);
    SPI_connect();
    // read-only: the views call this from STABLE functions, under the query's own snapshot
    uint64 n = read_plan(saved_plan(&s_read, k_read));
    MemoryContextReset(s_context);
    s_grants = static_cast<grant_row*>(MemoryContextAllocZero(s_context, sizeof(grant_row) * (n + 1)));
    for (uint64 i = 0; i < n; i++) {
        HeapTuple row = SPI_tuptable->vals[i];
        TupleDesc desc = SPI_tuptable->tupdesc;
        bool isnull;
        grant_row* g = &s_grants[i];
        g->grantee = DatumGetObjectId(SPI_getbinval(row, desc, 1, &isnull));
        char* cap = SPI_getvalue(row, desc, 2);
        g->capability = cap ? capability_named(cap) : 0;
        char* queue = SPI_getvalue(row, desc, 3);
        g->every_queue = queue == nullptr;
        if (queue)
            strlcpy(g->queue, queue, sizeof g->queue);
    }
    s_ngrants = static_cast<int>(n);
    SPI_finish();
    SetUserIdAndSecContext(saved_user, saved_context);
    s_valid = s_invalidations == invalidations_before;  // else read again next time
}

bool privileged(Oid role)
{
    return role == current_installation().owner || superuser_arg(role);
}

enum class scope { one_queue, some_queue, every_queue };

// Does `role` hold one of the capabilities in `caps` for `queue_name`, for some queue or for every queue?
bool role_holds(Oid role, uint8 caps, const char* queue_name, scope where = scope::one_queue)
{
    load_grants();
    for (int i = 0; i < s_ngrants; i++) {
        const grant_row& g = s_grants[i];
        if ((g.capability & caps) == 0)
            continue;
        if (where == scope::every_queue && !g.every_queue)
            continue;
        if (where == scope::one_queue && !g.every_queue && strcmp(queue_name, g.queue) != 0)
            continue;
        if (has_privs_of_role(role, g.grantee))
            return true;
    }
    return false;
}

// The capabilities in `caps`, named for an error message: "producer", "producer or admin".
const char* names_of(uint8 caps)
{
    const char* names = nullptr;
    for (const capability_name& c : k_capabilities)
        if (caps & c.bit)
            names = names ? psprintf("%s or %s", names, c.name) : c.name;
    return names ? names : "?";
}

const char* caller_name(const api_call& call)
{
    const char* role = GetUserNameFromId(call.caller, true);
    return role ? role : "?";
}

}  // namespace

namespace pgjq {

api_call begin_api_call()
{
    api_call call;
    call.caller = GetUserId();
    const installation& inst = current_installation();
    // A database at 0.1.0 keeps its model (privileges.hpp): nothing is checked, and nobody is switched to.
    const bool at_0_1_0 = database_at_0_1_0();
    call.privileged = at_0_1_0 || call.caller == inst.owner || superuser_arg(call.caller);
    GetUserIdAndSecContext(&call.saved_user, &call.saved_security_context);
    call.switched = !at_0_1_0 && call.caller != inst.owner;
    if (call.switched)
        SetUserIdAndSecContext(inst.owner, call.saved_security_context | SECURITY_LOCAL_USERID_CHANGE);
    return call;
}

api_call on_behalf_of(const api_call& call, Oid role)
{
    api_call as_role = call;
    as_role.caller = role;
    as_role.privileged = privileged(role);
    as_role.switched = false;  // the call that switched restores the user
    return as_role;
}

void end_api_call(const api_call& call)
{
    if (call.switched)
        SetUserIdAndSecContext(call.saved_user, call.saved_security_context);
}

bool holds(const api_call& call, uint8 caps, const char* queue_name)
{
    return call.privileged || role_holds(call.caller, caps, queue_name);
}

void require(const api_call& call, capability cap, const char* queue_name)
{
    if (holds(call, cap, queue_name))
        return;
    const char* role = caller_name(call);
    ereport(
        ERROR,
        (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
         errmsg("permission denied: role \"%s\" does not hold the %s capability for queue \"%s\"", role, name_of(cap),
                queue_name),
         errhint("The extension's owner grants it with pgjq.grant_%s('%s', '%s').", name_of(cap), role, queue_name)));
}

void require_some(const api_call& call, uint8 caps)
{
    if (call.privileged || role_holds(call.caller, caps, nullptr, scope::some_queue))
        return;
    const char* role = caller_name(call);
    ereport(ERROR,
            (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
             errmsg("permission denied: role \"%s\" does not hold the pgjq %s capability", role, names_of(caps)),
             errhint("The extension's owner grants capabilities with pgjq.grant_producer, grant_worker, "
                     "grant_admin and grant_observer.")));
}

void require_every(const api_call& call, uint8 caps)
{
    if (call.privileged || role_holds(call.caller, caps, nullptr, scope::every_queue))
        return;
    const char* role = caller_name(call);
    ereport(ERROR,
            (errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
             errmsg("permission denied: role \"%s\" does not hold the pgjq %s capability for every queue", role,
                    names_of(caps)),
             errdetail("This concerns the whole database, so a grant for some queues is not enough."),
             errhint("The extension's owner grants it without a queue, as in pgjq.grant_admin('%s').", role)));
}

bool may_read_queue(Oid role, const char* queue_name)
{
    return privileged(role) || role_holds(role, cap_producer | cap_worker | cap_admin | cap_observer, queue_name);
}

bool may_read_job(Oid role, const char* queue_name, Oid enqueued_by)
{
    if (database_at_0_1_0() || privileged(role) || role_holds(role, cap_worker | cap_admin | cap_observer, queue_name))
        return true;
    return role_holds(role, cap_producer, queue_name) &&
        (!OidIsValid(enqueued_by) || has_privs_of_role(role, enqueued_by));
}

void grants_relation_invalidated(Oid relid)
{
    // InvalidOid: the whole relcache was reset (for instance after an invalidation queue overflow)
    if (relid == InvalidOid || relid == s_grants_relid) {
        s_valid = false;
        s_invalidations++;
    }
}

}  // namespace pgjq
