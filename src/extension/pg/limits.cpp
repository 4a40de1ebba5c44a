// limits.cpp: the value checks of limits.hpp.
#include "pg/limits.hpp"

#include "pg/settings.hpp"

namespace pgjq {

void check_queue_name(const char* queue_name)
{
    size_t len = strlen(queue_name);
    bool ok = len >= 1 && len <= static_cast<size_t>(k_queue_name_max);
    for (size_t i = 0; ok && i < len; i++) {
        char c = queue_name[i];
        ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-';
    }
    if (!ok)
        ereport(ERROR,
                (errcode(ERRCODE_INVALID_PARAMETER_VALUE), errmsg("invalid queue name \"%s\"", queue_name),
                 errdetail("A queue name is 1 to %d characters from a-z, 0-9, '_', '.' and '-'.", k_queue_name_max)));
}

void check_short_text(const char* value, const char* name)
{
    size_t len = strlen(value);
    if (len == 0)
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE), errmsg("%s must not be empty", name)));
    if (len > static_cast<size_t>(k_max_name_bytes))
        ereport(ERROR,
                (errcode(ERRCODE_INVALID_PARAMETER_VALUE), errmsg("%s is too long (%zu bytes)", name, len),
                 errdetail("The limit is %d bytes.", k_max_name_bytes)));
}

void check_int_range(int64 value, const char* name, int64 lo, int64 hi)
{
    if (value < lo || value > hi)
        ereport(ERROR,
                (errcode(ERRCODE_INVALID_PARAMETER_VALUE), errmsg("%s %lld is out of range", name, (long long) value),
                 errdetail("%s must be between %lld and %lld.", name, (long long) lo, (long long) hi)));
}

void check_priority(int32 priority)
{
    check_int_range(priority, "priority", k_min_priority, k_max_priority);
}

void check_max_attempts(int32 max_attempts)
{
    check_int_range(max_attempts, "max_attempts", k_min_attempts, k_max_attempts);
}

void check_max_pending(int64 max_pending)
{
    if (max_pending <= 0)
        ereport(ERROR,
                (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                 errmsg("max_pending %lld is out of range", (long long) max_pending),
                 errdetail("max_pending must be positive, or NULL for an unbounded queue.")));
}

// An infinite run_at would never fall due, or would be due before every other job for ever; and
// queue_stats' age arithmetic cannot take it.
void check_run_at(TimestampTz run_at)
{
    if (TIMESTAMP_NOT_FINITE(run_at))
        ereport(ERROR, (errcode(ERRCODE_INVALID_PARAMETER_VALUE), errmsg("run_at must be a finite timestamp")));
}

void check_json_size(const Jsonb* value, const char* name)
{
    int size = VARSIZE(value) - VARHDRSZ;
    if (size > max_payload_bytes)
        ereport(ERROR,
                (errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED), errmsg("%s is too large (%d bytes)", name, size),
                 errdetail("The limit set by pgjq.max_payload_bytes is %d bytes.", max_payload_bytes),
                 errhint("Store large data elsewhere and enqueue a reference to it.")));
}

void check_interval(const Interval* value, const char* name, const interval_bounds& bounds)
{
    int64 usecs = interval_usecs(value);
    if (usecs < bounds.min_usecs || usecs > bounds.max_usecs)
        ereport(ERROR,
                (errcode(ERRCODE_INVALID_PARAMETER_VALUE),
                 errmsg("%s %s is out of range", name,
                        DatumGetCString(DirectFunctionCall1(interval_out, IntervalPGetDatum(value)))),
                 errdetail("%s must be between %s and %s.", name, bounds.min_text, bounds.max_text)));
}

void raise_unknown_queue(const char* queue_name)
{
    ereport(ERROR, (errcode(ERRCODE_UNDEFINED_OBJECT), errmsg("queue \"%s\" does not exist", queue_name)));
    pg_unreachable();
}

int64 interval_usecs(const Interval* value)
{
    __int128 usecs = static_cast<__int128>(value->time) +
        (static_cast<__int128>(value->day) + static_cast<__int128>(value->month) * DAYS_PER_MONTH) * USECS_PER_DAY;
    if (usecs > PG_INT64_MAX)
        return PG_INT64_MAX;
    if (usecs < PG_INT64_MIN)
        return PG_INT64_MIN;
    return static_cast<int64>(usecs);
}

char* capped_error_message(char* message)
{
    int len = static_cast<int>(strlen(message));
    if (len <= k_max_error_bytes)
        return message;
    char marker[64];
    snprintf(marker, sizeof marker, " [truncated from %d bytes]", len);
    int kept = pg_mbcliplen(message, len, k_max_error_bytes - static_cast<int>(strlen(marker)));
    return psprintf("%.*s%s", kept, message, marker);
}

Interval* interval_from_usecs(int64 usecs)
{
    Interval* result = static_cast<Interval*>(palloc0(sizeof(Interval)));
    result->time = usecs;
    return result;
}

}  // namespace pgjq
