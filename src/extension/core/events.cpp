// events.cpp: events and parked jobs (see events.hpp).
#include "core/events.hpp"

#include "core/announcements.hpp"
#include "pg/spi.hpp"

namespace {

using namespace pgjq;

// Event locks: advisory locks in a space of pgjq's own (field4 of the lock tag; the group locks of
// core/waiting_jobs.cpp use 0x504A), keyed by hashes of the queue and the event's name. Two events whose
// hashes meet only wait for each other's commit.
constexpr uint16 k_event_lock_space = 0x504B;

SPIPlanPtr s_record, s_wake, s_park;
// clang-format off
// $1 queue, $2 name, $3 audience (NULL: every job of the queue), $4 payload, $5 expiry, $6 signalling role.
const plan_text k_record = {
    "INSERT INTO pgjq.events AS e (queue_name, event_name, audience, payload, signalled_by, expires_at)"
    " VALUES ($1, $2, $3, $4, $6, $5)"
    " ON CONFLICT (queue_name, event_name, (coalesce(audience::oid, 0::oid))) DO UPDATE"
    "   SET payload = EXCLUDED.payload, signalled_by = EXCLUDED.signalled_by, signalled_at = now(),"
    "       expires_at = EXCLUDED.expires_at"
    " WHERE e.expires_at <= now()",
    6, {TEXTOID, TEXTOID, REGROLEOID, JSONBOID, TIMESTAMPTZOID, REGROLEOID}};
// The parked waiters of the event ($1 queue, $2 name, $3 audience) are due now; in id order, as other
// writers of live_jobs lock them.
const plan_text k_wake = {
    "WITH waiting AS MATERIALIZED ("
    "  SELECT l.id FROM pgjq.event_waits w JOIN pgjq.live_jobs l ON l.id = w.job_id"
    "   WHERE w.queue_name = $1 AND w.event_name = $2 AND ($3::pg_catalog.regrole IS NULL OR w.waiter = $3)"
    "     AND l.status = 'pending' AND l.run_at > now()"
    "   ORDER BY l.id FOR NO KEY UPDATE OF l)"
    " UPDATE pgjq.live_jobs l SET run_at = now() FROM waiting w WHERE l.id = w.id",
    3, {TEXTOID, TEXTOID, REGROLEOID}};
// The held job $1 goes back to pending, due at $2, the attempt it ran uncounted (it is claimed again then).
const plan_text k_park = {
    "UPDATE pgjq.live_jobs SET status = 'pending', run_at = $2, worker_id = NULL, lease_expires_at = NULL,"
    " timeout_at = NULL, attempts = greatest(attempts - 1, 0) WHERE id = $1",
    2, {INT8OID, TIMESTAMPTZOID}};
// clang-format on

uint32 text_hash(const char* text)
{
    return hash_bytes(reinterpret_cast<const unsigned char*>(text), static_cast<int>(strlen(text)));
}

}  // namespace

namespace pgjq {

void lock_event(const char* queue_name, const char* event_name)
{
    LOCKTAG tag;
    SET_LOCKTAG_ADVISORY(tag, MyDatabaseId, text_hash(queue_name), text_hash(event_name), k_event_lock_space);
    (void) LockAcquire(&tag, ExclusiveLock, false, false);
}

int64 deliver_event(const char* queue_name, const char* event_name, Oid audience, Jsonb* payload,
                    TimestampTz expires_at, Oid signalled_by)
{
    lock_event(queue_name, event_name);
    Datum values[6] = {CStringGetTextDatum(queue_name), CStringGetTextDatum(event_name),
                       ObjectIdGetDatum(audience),      JsonbPGetDatum(payload),
                       TimestampTzGetDatum(expires_at), ObjectIdGetDatum(signalled_by)};
    char nulls[6] = {' ', ' ', OidIsValid(audience) ? ' ' : 'n', ' ', ' ', ' '};
    run_plan_latest(saved_plan(&s_record, k_record), values, nulls);
    uint64 woken = run_plan_latest(saved_plan(&s_wake, k_wake), values, nulls);
    // Due now by a change of run_at alone, which no trigger announces.
    if (woken > 0)
        announce_requeued_jobs(queue_name);
    return static_cast<int64>(woken);
}

void park_job(int64 job_id, TimestampTz until)
{
    Datum values[2] = {Int64GetDatum(job_id), TimestampTzGetDatum(until)};
    run_plan(saved_plan(&s_park, k_park), values, nullptr);
}

}  // namespace pgjq
