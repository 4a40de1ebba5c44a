// schedule_clock.cpp: cron expressions in time zones (see schedule_clock.hpp).
#include "core/schedule_clock.hpp"

namespace pgjq {

namespace {

// Seconds from the Unix epoch to PostgreSQL's (2000-01-01).
constexpr int64 k_unix_to_postgres_secs = static_cast<int64>(POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * SECS_PER_DAY;

int64 floor_div(int64 a, int64 b)
{
    int64 q = a / b;
    return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

// The wall-clock time of `t` in `zone`, to the second (rounded down); false when out of range.
bool wall_of(TimestampTz t, pg_tz* zone, wall_time* wall)
{
    struct pg_tm tm;
    fsec_t fsec;
    int offset;
    if (timestamp2tm(t, &offset, &tm, &fsec, nullptr, zone) != 0)
        return false;
    *wall = {tm.tm_year, tm.tm_mon, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec};
    return true;
}

// The instant of a wall-clock time in `zone`, read as timestamp '...' AT TIME ZONE zone reads it.
TimestampTz instant_of(const wall_time& wall, pg_tz* zone)
{
    struct pg_tm tm;
    memset(&tm, 0, sizeof tm);
    tm.tm_year = wall.year;
    tm.tm_mon = wall.month;
    tm.tm_mday = wall.day;
    tm.tm_hour = wall.hour;
    tm.tm_min = wall.minute;
    tm.tm_sec = wall.second;
    int offset = DetermineTimeZoneOffset(&tm, zone);
    TimestampTz result;
    if (tm2timestamp(&tm, 0, &offset, &result) != 0 || !IS_VALID_TIMESTAMP(result))
        return DT_NOEND;
    return result;
}

}  // namespace

cron_expr cron_or_raise(const char* cron)
{
    size_t len = strlen(cron);
    if (len > static_cast<size_t>(k_max_cron_bytes))
        ereport(ERROR,
                (errcode(ERRCODE_INVALID_PARAMETER_VALUE), errmsg("cron is too long (%zu bytes)", len),
                 errdetail("The limit is %d bytes.", k_max_cron_bytes)));
    cron_parse_result parsed = parse_cron(cron);
    if (!parsed.ok)
        ereport(ERROR,
                (errcode(ERRCODE_INVALID_PARAMETER_VALUE), errmsg("%s", parsed.error),
                 errdetail("The cron expression is \"%s\".", cron),
                 errhint("A cron expression is minute hour day-of-month month day-of-week, with an optional "
                         "seconds field first, or an alias: @yearly, @monthly, @weekly, @daily, @hourly, "
                         "@every 30 seconds.")));
    char why[128];
    if (!cron_ever_fires(parsed.expr, why, sizeof why))
        ereport(ERROR,
                (errcode(ERRCODE_INVALID_PARAMETER_VALUE), errmsg("cron expression \"%s\" never fires", cron),
                 errdetail("%s", why)));
    return parsed.expr;
}

pg_tz* time_zone_or_raise(const char* name)
{
    pg_tz* zone = name[0] == '\0' ? nullptr : pg_tzset(name);
    if (zone == nullptr)
        ereport(ERROR,
                (errcode(ERRCODE_INVALID_PARAMETER_VALUE), errmsg("time zone \"%s\" is not recognized", name),
                 errhint("The names PostgreSQL knows are in pg_timezone_names, as in 'Europe/Paris'.")));
    return zone;
}

TimestampTz next_firing(const schedule_clock& clock, TimestampTz after)
{
    if (TIMESTAMP_NOT_FINITE(after))
        return DT_NOEND;
    if (clock.expr.every_seconds > 0) {
        int64 interval = clock.expr.every_seconds;
        int64 unix_secs = floor_div(after, USECS_PER_SEC) + k_unix_to_postgres_secs;
        int64 next_secs = (floor_div(unix_secs, interval) + 1) * interval - k_unix_to_postgres_secs;
        if (next_secs > END_TIMESTAMP / USECS_PER_SEC - 1)
            return DT_NOEND;
        return next_secs * USECS_PER_SEC;
    }
    wall_time wall;
    if (!wall_of(after, clock.zone, &wall))
        return DT_NOEND;
    // A candidate's instant is later than `after` except, perhaps, around a transition; then look further.
    for (int i = 0; i < 1000; i++) {
        wall_time candidate;
        if (!next_wall_time(clock.expr, wall, &candidate))
            return DT_NOEND;
        TimestampTz instant = instant_of(candidate, clock.zone);
        if (instant > after)
            return instant;
        wall = candidate;
    }
    return DT_NOEND;
}

int64 firings_through(const schedule_clock& clock, TimestampTz first, TimestampTz until, int64 cap, TimestampTz* latest)
{
    *latest = first;
    if (until <= first)
        return 1;
    if (clock.expr.every_seconds > 0) {
        int64 interval = clock.expr.every_seconds * USECS_PER_SEC;
        int64 more = (until - first) / interval;
        *latest = first + more * interval;
        return more + 1 < cap ? more + 1 : cap;
    }
    int64 count = 1;
    for (;;) {
        TimestampTz next = next_firing(clock, *latest);
        if (next > until)
            return count;
        *latest = next;
        if (++count >= cap)
            break;
    }
    // Too many to count: find the latest one from `until` backwards, in windows that double.
    for (int64 window = USECS_PER_SEC; window < until - *latest; window *= 2) {
        TimestampTz from = next_firing(clock, until - window);
        if (from > until)
            continue;
        while (from <= until) {
            *latest = from;
            from = next_firing(clock, from);
        }
        break;
    }
    return cap;
}

}  // namespace pgjq
