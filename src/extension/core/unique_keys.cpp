// unique_keys.cpp: unique keys and their windows at enqueue (see unique_keys.hpp).
#include "core/unique_keys.hpp"

#include "core/announcements.hpp"
#include "pg/spi.hpp"
#include "versions/statement.hpp"

namespace {

using namespace pgjq;

SPIPlanPtr s_window_holder, s_take_window, s_withdraw;

// clang-format off
// A key is the enqueuing role's ($3): another tenant's job of the same key is not its holder.
statement s_find_unique = {"unique_keys.find_unique", {
    "SELECT id FROM pgjq.live_jobs WHERE queue_name = $1 AND unique_key = $2 AND enqueued_by = $3", 3,
    {TEXTOID, TEXTOID, REGROLEOID}}};
// unique_for: the job holding the key's window now, if any; taking the window for job $4 until now() + $5
// (only if it has expired; the primary key makes a concurrent taker wait for this transaction); and
// withdrawing the job this call inserted when the window turns out to be held.
const plan_text k_window_holder = {
    "SELECT job_id FROM pgjq.unique_windows"
    " WHERE queue_name = $1 AND unique_key = $2 AND enqueued_by = $3 AND expires_at > now()",
    3, {TEXTOID, TEXTOID, REGROLEOID}};
const plan_text k_take_window = {
    "INSERT INTO pgjq.unique_windows AS w (queue_name, unique_key, enqueued_by, job_id, expires_at)"
    " VALUES ($1, $2, $3, $4, now() + $5)"
    " ON CONFLICT (queue_name, enqueued_by, unique_key)"
    "  DO UPDATE SET job_id = excluded.job_id, expires_at = excluded.expires_at"
    "  WHERE w.expires_at <= now() RETURNING job_id",
    5, {TEXTOID, TEXTOID, REGROLEOID, INT8OID, INTERVALOID}};
const plan_text k_withdraw = {"DELETE FROM pgjq.live_jobs WHERE id = $1", 1, {INT8OID}};
// clang-format on

// The job id a lookup by queue and unique_key (`plan`) finds, if any.
bool find_by_key(const enqueue_request& r, SPIPlanPtr plan, int64* id)
{
    Datum values[3] = {r.queue_text, CStringGetTextDatum(r.unique_key), ObjectIdGetDatum(r.call->caller)};
    run_plan(plan, values, nullptr, 1);
    bool isnull, found;
    Datum value = first_value(&isnull, &found);
    if (found)
        *id = DatumGetInt64(value);
    return found;
}

}  // namespace

namespace pgjq {

// The unfinished job holding r.unique_key; with unique_for, else the job whose window holds it.
bool find_key_holder(const enqueue_request& r, int64* id)
{
    return find_by_key(r, saved_plan(&s_find_unique), id) ||
        (r.unique_for && find_by_key(r, saved_plan(&s_window_holder, k_window_holder), id));
}

// unique_for: takes the key's window for job `id`; false when another job's window holds it (committed
// meanwhile: the primary key made this wait for it).
bool take_window(const enqueue_request& r, int64 id)
{
    Datum values[5] = {r.queue_text, CStringGetTextDatum(r.unique_key), ObjectIdGetDatum(r.call->caller),
                       Int64GetDatum(id), IntervalPGetDatum(r.unique_for)};
    return run_plan(saved_plan(&s_take_window, k_take_window), values, nullptr) == 1;
}

// unique_for: withdraws job `id`, which this call inserted, when another job's window took the key meanwhile.
void withdraw_job(int64 id)
{
    Datum withdrawn[1] = {Int64GetDatum(id)};
    run_plan(saved_plan(&s_withdraw, k_withdraw), withdrawn, nullptr);
    note_live_rows_replaced();
}

}  // namespace pgjq
