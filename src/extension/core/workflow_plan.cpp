// workflow_plan.cpp: reading, ordering, enqueuing and recording a call's workflow steps (see
// workflow_plan.hpp).
#include "core/workflow_plan.hpp"

#include "core/workflows.hpp"

#include "core/enqueue.hpp"
#include "core/enqueue_dependencies.hpp"
#include "core/lifecycle.hpp"
#include "core/queue_cache.hpp"
#include "pg/limits.hpp"
#include "pg/settings.hpp"
#include "pg/spi.hpp"

namespace {

using namespace pgjq;

struct name_entry {
    char name[k_max_name_bytes + 1];
    int index;
};

[[noreturn]] void refuse(int index, const char* problem)
{
    ereport(ERROR,
            (errcode(ERRCODE_INVALID_PARAMETER_VALUE), errmsg("steps[%d] %s", index, problem),
             errhint("A step is an object with \"name\" and \"job_type\", and optionally \"payload\", \"queue\","
                     " \"after\" (names of steps), \"priority\", \"max_attempts\" and \"timeout\".")));
}

char* string_field(const JsonbValue& v, int index, const char* key)
{
    if (v.type != jbvString)
        refuse(index, psprintf("has a \"%s\" that is not a string", key));
    return pnstrdup(v.val.string.val, v.val.string.len);
}

int32 int_field(const JsonbValue& v, int index, const char* key)
{
    if (v.type != jbvNumeric)
        refuse(index, psprintf("has a \"%s\" that is not a number", key));
    char* text = DatumGetCString(DirectFunctionCall1(numeric_out, NumericGetDatum(v.val.numeric)));
    char* end = nullptr;
    errno = 0;
    long value = strtol(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0' || value < PG_INT32_MIN || value > PG_INT32_MAX)
        refuse(index, psprintf("has a \"%s\" of %s, which is not a 32-bit integer", key, text));
    return static_cast<int32>(value);
}

// The names of "after": an array of distinct strings.
void read_after(const JsonbValue& v, int index, step_spec* s)
{
    if (v.type != jbvBinary || !JsonContainerIsArray(v.val.binary.data))
        refuse(index, "has an \"after\" that is not an array of step names");
    int n = JsonContainerSize(v.val.binary.data);
    if (n > k_max_step_parents)
        refuse(index, psprintf("is after %d steps; the limit is %d", n, k_max_step_parents));
    s->after = static_cast<char**>(palloc(sizeof(char*) * (n + 1)));
    s->nafter = 0;
    JsonbIterator* it = JsonbIteratorInit(v.val.binary.data);
    JsonbValue element;
    JsonbIteratorToken token;
    while ((token = JsonbIteratorNext(&it, &element, true)) != WJB_DONE) {
        if (token != WJB_ELEM)
            continue;
        if (element.type != jbvString)
            refuse(index, "has an \"after\" element that is not a string");
        s->after[s->nafter] = pnstrdup(element.val.string.val, element.val.string.len);
        check_short_text(s->after[s->nafter++], "a name in \"after\"");
    }
    // Distinct, so that each edge counts once: sort and drop repeats.
    qsort(s->after, s->nafter, sizeof(char*), [](const void* a, const void* b) {
        return strcmp(*static_cast<char* const*>(a), *static_cast<char* const*>(b));
    });
    int kept = 0;
    for (int i = 0; i < s->nafter; i++)
        if (kept == 0 || strcmp(s->after[i], s->after[kept - 1]) != 0)
            s->after[kept++] = s->after[i];
    s->nafter = kept;
}

void read_step(const JsonbValue& v, int index, step_spec* s)
{
    if (v.type != jbvBinary || !JsonContainerIsObject(v.val.binary.data))
        refuse(index, "is not a JSON object");
    memset(s, 0, sizeof *s);
    s->queue_name = pstrdup("default");
    s->priority = k_default_priority;
    JsonbIterator* it = JsonbIteratorInit(v.val.binary.data);
    JsonbValue key, value;
    JsonbIteratorToken token;
    while ((token = JsonbIteratorNext(&it, &key, true)) != WJB_DONE) {
        if (token != WJB_KEY)
            continue;
        char* k = pnstrdup(key.val.string.val, key.val.string.len);
        (void) JsonbIteratorNext(&it, &value, true);
        if (strcmp(k, "name") == 0)
            s->name = string_field(value, index, k);
        else if (strcmp(k, "job_type") == 0)
            s->job_type = string_field(value, index, k);
        else if (strcmp(k, "queue") == 0)
            s->queue_name = string_field(value, index, k);
        else if (strcmp(k, "payload") == 0)
            s->payload = JsonbValueToJsonb(&value);
        else if (strcmp(k, "after") == 0)
            read_after(value, index, s);
        else if (strcmp(k, "priority") == 0)
            s->priority = int_field(value, index, k);
        else if (strcmp(k, "max_attempts") == 0) {
            s->has_max_attempts = true;
            s->max_attempts = int_field(value, index, k);
        } else if (strcmp(k, "timeout") == 0) {
            char* text = string_field(value, index, k);
            s->timeout = DatumGetIntervalP(DirectFunctionCall3(interval_in, CStringGetDatum(text),
                                                               ObjectIdGetDatum(InvalidOid), Int32GetDatum(-1)));
            check_interval(s->timeout, "timeout", k_timeout_bounds);
        } else
            refuse(index, psprintf("has an unknown key \"%s\"", k));
    }
    if (s->name == nullptr)
        refuse(index, "has no \"name\"");
    if (s->job_type == nullptr)
        refuse(index, "has no \"job_type\"");
    check_short_text(s->name, "a step's name");
    check_short_text(s->job_type, "job_type");
    check_queue_name(s->queue_name);
    check_priority(s->priority);
    if (s->has_max_attempts)
        check_max_attempts(s->max_attempts);
    if (s->payload == nullptr)
        s->payload = DatumGetJsonbP(DirectFunctionCall1(jsonb_in, CStringGetDatum("{}")));
    check_json_size(s->payload, "payload");
    if (s->after == nullptr)
        s->nafter = 0;
    s->parents = static_cast<int*>(palloc(sizeof(int) * (s->nafter + 1)));
}

// Names the cycle that the steps not ordered (`ordered[i]` false) contain: from one of them, walks to a
// parent not ordered until a step repeats.
[[noreturn]] void refuse_cycle(const step_plan& plan, const bool* ordered)
{
    int* position = static_cast<int*>(palloc(sizeof(int) * plan.nsteps));
    int* path = static_cast<int*>(palloc(sizeof(int) * (plan.nsteps + 1)));
    for (int i = 0; i < plan.nsteps; i++)
        position[i] = -1;
    int at = 0;
    while (ordered[at])
        at++;
    int length = 0;
    while (position[at] < 0) {
        position[at] = length;
        path[length++] = at;
        const step_spec& s = plan.steps[at];
        int next = -1;
        for (int j = 0; j < s.nafter && next < 0; j++)
            if (s.parents[j] >= 0 && !ordered[s.parents[j]])
                next = s.parents[j];
        at = next;  // a step left unordered waits for another one left unordered
    }
    StringInfoData cycle;
    initStringInfo(&cycle);
    for (int k = position[at]; k < length; k++)
        appendStringInfo(&cycle, "\"%s\" after ", plan.steps[path[k]].name);
    appendStringInfo(&cycle, "\"%s\"", plan.steps[at].name);
    ereport(ERROR,
            (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
             errmsg("the steps depend on each other in a cycle: %s", cycle.data),
             errdetail("A step can only start after the steps it names in \"after\" finish.")));
}

// Kahn's order: a step once every parent of this call is ordered, in the call's order otherwise.
void order_steps(step_plan* plan)
{
    int n = plan->nsteps;
    int* waiting_for = static_cast<int*>(palloc0(sizeof(int) * n));
    int* first_child = static_cast<int*>(palloc0(sizeof(int) * (n + 1)));
    for (int i = 0; i < n; i++)
        for (int j = 0; j < plan->steps[i].nafter; j++)
            if (plan->steps[i].parents[j] >= 0) {
                waiting_for[i]++;
                first_child[plan->steps[i].parents[j] + 1]++;
            }
    for (int i = 0; i < n; i++)
        first_child[i + 1] += first_child[i];
    int* children = static_cast<int*>(palloc(sizeof(int) * (first_child[n] + 1)));
    int* filled = static_cast<int*>(palloc0(sizeof(int) * n));
    for (int i = 0; i < n; i++)
        for (int j = 0; j < plan->steps[i].nafter; j++) {
            int p = plan->steps[i].parents[j];
            if (p >= 0)
                children[first_child[p] + filled[p]++] = i;
        }
    bool* ordered = static_cast<bool*>(palloc0(sizeof(bool) * n));
    plan->order = static_cast<int*>(palloc(sizeof(int) * n));
    int head = 0, tail = 0;
    for (int i = 0; i < n; i++)
        if (waiting_for[i] == 0)
            plan->order[tail++] = i;
    while (head < tail) {
        int p = plan->order[head++];
        ordered[p] = true;
        for (int c = first_child[p]; c < first_child[p + 1]; c++)
            if (--waiting_for[children[c]] == 0)
                plan->order[tail++] = children[c];
    }
    if (tail < n)
        refuse_cycle(*plan, ordered);
}

SPIPlanPtr s_record_steps, s_record_edges;
// clang-format off
const plan_text k_record_steps = {
    "INSERT INTO pgjq.workflow_run_steps (job_id, workflow_id, step_name, queue_name, job_type, enqueued_by,"
    "                                 max_attempts, unmet, broken)"
    " SELECT s.job_id, $2, s.step_name, s.queue_name, s.job_type, $3, s.max_attempts, s.unmet, s.broken"
    "   FROM ROWS FROM (pg_catalog.unnest($1::int8[]), pg_catalog.unnest($4::text[]), pg_catalog.unnest($5::text[]),"
    "                   pg_catalog.unnest($6::text[]), pg_catalog.unnest($7::int4[]), pg_catalog.unnest($8::int4[]),"
    "                   pg_catalog.unnest($9::bool[]))"
    "        AS s(job_id, step_name, queue_name, job_type, max_attempts, unmet, broken)",
    9, {INT8ARRAYOID, INT8OID, REGROLEOID, TEXTARRAYOID, TEXTARRAYOID, TEXTARRAYOID, INT4ARRAYOID, INT4ARRAYOID,
        BOOLARRAYOID}};
const plan_text k_record_edges = {
    "INSERT INTO pgjq.workflow_edges (parent_job, child_job)"
    " SELECT * FROM ROWS FROM (pg_catalog.unnest($1::int8[]), pg_catalog.unnest($2::int8[]))",
    2, {INT8ARRAYOID, INT8ARRAYOID}};
// clang-format on

Datum text_array(Datum* values, int n)
{
    return PointerGetDatum(construct_array(values, n, TEXTOID, -1, false, TYPALIGN_INT));
}

Datum int4_array(Datum* values, int n)
{
    return PointerGetDatum(construct_array(values, n, INT4OID, 4, true, TYPALIGN_INT));
}

// Refuses a queue that keeps no completed jobs: its steps' results would be gone before their children
// read them.
void check_keeps_results(const char* queue_name)
{
    ArrayType* not_keeping = queues_not_keeping_completed();
    if (not_keeping == nullptr)
        return;
    Datum* names;
    bool* nulls;
    int n;
    deconstruct_array(not_keeping, TEXTOID, -1, false, TYPALIGN_INT, &names, &nulls, &n);
    for (int i = 0; i < n; i++)
        if (!nulls[i] && strcmp(TextDatumGetCString(names[i]), queue_name) == 0)
            ereport(ERROR,
                    (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                     errmsg("queue \"%s\" keeps no completed jobs", queue_name),
                     errdetail("A workflow's steps hand their results to the steps after them."),
                     errhint("Run its steps in a queue with keep_completed => true.")));
}

}  // namespace

namespace pgjq {

step_plan read_steps(const Jsonb* steps, bool allow_existing)
{
    if (!JB_ROOT_IS_ARRAY(steps) || JB_ROOT_IS_SCALAR(steps))
        ereport(ERROR,
                (errcode(ERRCODE_INVALID_PARAMETER_VALUE), errmsg("steps must be a JSON array of step objects")));
    int n = JB_ROOT_COUNT(steps);
    if (n == 0)
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE), errmsg("steps must not be empty")));
    if (n > k_max_workflow_steps)
        ereport(ERROR,
                (errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED), errmsg("steps has %d elements", n),
                 errdetail("A workflow has at most %d steps.", k_max_workflow_steps)));
    int bytes = VARSIZE(steps) - VARHDRSZ;
    if (bytes > max_batch_bytes)
        ereport(ERROR,
                (errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED), errmsg("steps is too large (%d bytes)", bytes),
                 errdetail("The limit set by pgjq.max_batch_bytes is %d bytes.", max_batch_bytes)));
    step_plan plan = {static_cast<step_spec*>(palloc(sizeof(step_spec) * n)), nullptr, n, 0};
    int index = 0;
    for_each_payload(steps, [&](JsonbValue& v) {
        read_step(v, index, &plan.steps[index]);
        index++;
    });

    HASHCTL ctl;
    memset(&ctl, 0, sizeof ctl);
    ctl.keysize = k_max_name_bytes + 1;
    ctl.entrysize = sizeof(name_entry);
    ctl.hcxt = CurrentMemoryContext;
    HTAB* names = hash_create("pgjq step names", n, &ctl, HASH_ELEM | HASH_STRINGS | HASH_CONTEXT);
    for (int i = 0; i < n; i++) {
        bool found;
        auto* e = static_cast<name_entry*>(hash_search(names, plan.steps[i].name, HASH_ENTER, &found));
        if (found)
            refuse(i, psprintf("repeats the name \"%s\" of steps[%d]", plan.steps[i].name, e->index));
        e->index = i;
    }
    int64 edges = 0;
    for (int i = 0; i < n; i++) {
        step_spec& s = plan.steps[i];
        for (int j = 0; j < s.nafter; j++) {
            auto* e = static_cast<name_entry*>(hash_search(names, s.after[j], HASH_FIND, nullptr));
            if (e == nullptr && !allow_existing)
                refuse(i, psprintf("(\"%s\") is after \"%s\", which is not one of the steps", s.name, s.after[j]));
            s.parents[j] = e ? e->index : -1;
        }
        edges += s.nafter;
    }
    if (edges > k_max_edges_per_call)
        ereport(ERROR,
                (errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED), errmsg("the steps have %lld dependencies", (long long) edges),
                 errdetail("At most %d can be added in one call.", k_max_edges_per_call)));
    plan.nedges = static_cast<int>(edges);
    order_steps(&plan);
    return plan;
}

ArrayType* enqueue_steps(const step_plan& plan, int64 workflow_id, const existing_steps& existing, bool cancel_broken,
                         const api_call& call)
{
    int n = plan.nsteps;
    // Every queue is checked before the first step is enqueued.
    for (int i = 0; i < n; i++) {
        const char* queue_name = plan.steps[i].queue_name;
        bool seen = false;
        for (int j = 0; j < i && !seen; j++)
            seen = strcmp(plan.steps[j].queue_name, queue_name) == 0;
        if (seen)
            continue;
        require(call, cap_producer, queue_name);
        check_keeps_results(queue_name);
        mark_dependencies_used(CStringGetTextDatum(queue_name));
    }

    int64* ids = static_cast<int64*>(palloc(sizeof(int64) * n));
    Datum* names = static_cast<Datum*>(palloc(sizeof(Datum) * n));
    Datum* queues = static_cast<Datum*>(palloc(sizeof(Datum) * n));
    Datum* types = static_cast<Datum*>(palloc(sizeof(Datum) * n));
    Datum* max_attempts = static_cast<Datum*>(palloc(sizeof(Datum) * n));
    Datum* unmet = static_cast<Datum*>(palloc(sizeof(Datum) * n));
    Datum* broken = static_cast<Datum*>(palloc(sizeof(Datum) * n));
    int64* parents = static_cast<int64*>(palloc(sizeof(int64) * (plan.nedges + 1)));
    int64* children = static_cast<int64*>(palloc(sizeof(int64) * (plan.nedges + 1)));
    int64* to_cancel = static_cast<int64*>(palloc(sizeof(int64) * (n + 1)));
    int nedges = 0, ncancel = 0;
    for (int k = 0; k < n; k++) {
        int i = plan.order[k];
        const step_spec& s = plan.steps[i];
        int waiting = 0;
        bool is_broken = false;
        for (int j = 0; j < s.nafter; j++) {
            int64 parent = 0;
            if (s.parents[j] >= 0) {
                parent = ids[s.parents[j]];  // ordered before this one
                waiting++;
            } else {
                int e = 0;
                while (e < existing.n && strcmp(existing.names[e], s.after[j]) != 0)
                    e++;
                if (e == existing.n)
                    refuse(i,
                           psprintf("(\"%s\") is after \"%s\", which is not a step of workflow %lld", s.name,
                                    s.after[j], (long long) workflow_id));
                parent = existing.ids[e];
                waiting += existing.unfinished[e] ? 1 : 0;
                is_broken = is_broken || existing.broken[e];
            }
            parents[nedges] = parent;
            children[nedges] = 0;  // filled once this step has its id
            nedges++;
        }
        enqueue_request r;
        r.call = &call;
        r.queue_name = s.queue_name;
        r.queue_text = CStringGetTextDatum(s.queue_name);
        r.job_type = s.job_type;
        r.payload = s.payload;
        r.priority = s.priority;
        r.has_run_at = false;
        r.run_at = 0;
        r.has_max_attempts = s.has_max_attempts;
        r.max_attempts = s.max_attempts;
        r.unique_key = nullptr;
        r.group_key = nullptr;
        r.unique_for = nullptr;
        r.timeout = s.timeout;
        r.depends_on = nullptr;
        r.depends = {(Datum) 0, 0, false};
        r.count = 1;
        r.held = waiting > 0 || (is_broken && cancel_broken);
        check_request(r, false);
        enqueued_job stored;
        enqueue_one(r, true, &ids[i], &stored);
        for (int e = nedges - s.nafter; e < nedges; e++)
            children[e] = ids[i];
        names[i] = CStringGetTextDatum(s.name);
        queues[i] = r.queue_text;
        types[i] = CStringGetTextDatum(s.job_type);
        max_attempts[i] = Int32GetDatum(stored.max_attempts);
        unmet[i] = Int32GetDatum(waiting);
        broken[i] = BoolGetDatum(is_broken);
        if (is_broken && cancel_broken)
            to_cancel[ncancel++] = ids[i];
    }

    Datum* id_datums = static_cast<Datum*>(palloc(sizeof(Datum) * n));
    for (int i = 0; i < n; i++)
        id_datums[i] = Int64GetDatum(ids[i]);
    ArrayType* id_array = construct_array(id_datums, n, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE);
    Datum values[9] = {PointerGetDatum(id_array),
                       Int64GetDatum(workflow_id),
                       ObjectIdGetDatum(call.caller),
                       text_array(names, n),
                       text_array(queues, n),
                       text_array(types, n),
                       int4_array(max_attempts, n),
                       int4_array(unmet, n),
                       PointerGetDatum(construct_array(broken, n, BOOLOID, 1, true, TYPALIGN_CHAR))};
    run_plan(saved_plan(&s_record_steps, k_record_steps), values, nullptr);
    if (nedges > 0) {
        Datum edges[2] = {PointerGetDatum(job_id_array(parents, nedges)),
                          PointerGetDatum(job_id_array(children, nedges))};
        run_plan(saved_plan(&s_record_edges, k_record_edges), edges, nullptr);
    }
    if (ncancel > 0) {
        archive_request cancelled = {PointerGetDatum(job_id_array(to_cancel, ncancel)),
                                     "cancelled",
                                     nullptr,
                                     nullptr,
                                     call.caller,
                                     nullptr,
                                     k_cancelled_by_parent};
        archive_jobs(cancelled);
    }
    return id_array;
}

}  // namespace pgjq
