// cron.hpp: cron expressions, in pure C++ that includes no PostgreSQL header (CONTRIBUTING.md, "Layout"):
// parsing, and the search for the next wall-clock time an expression allows. Wall-clock times are
// calendar fields with no time zone; core/schedule_clock.hpp turns them into instants in a schedule's zone.
//
// The grammar (docs/periodic-jobs.md):
// - five fields, minute hour day-of-month month day-of-week, or six with a seconds field first. Each field
//   is a list of elements separated by commas; an element is `*`, a number, a name (jan-dec in the month
//   field, sun-sat in the day-of-week field, any case), a range `a-b`, and `*` or a range may take a step
//   `/n`. Day-of-week 0 and 7 are Sunday. As in Vixie cron, a day matches when the day-of-month and the
//   day-of-week fields both allow it, except when both are restricted (neither begins with `*`): then
//   either may allow it;
// - the aliases @yearly (@annually), @monthly, @weekly, @daily (@midnight) and @hourly;
// - `@every <amount><unit> ...` (units s, m, h, d and their long forms): every so many seconds, counted
//   from 1970-01-01 00:00:00 UTC, whatever the time zone.
//
// Nothing here allocates or throws: the results are plain structs, so the PG-facing layer may keep them
// on its stack across PostgreSQL calls that can raise.
#pragma once

#include <cstddef>
#include <cstdint>

namespace pgjq {

// The longest expression accepted, in bytes.
constexpr int k_max_cron_bytes = 1000;
// The bounds of @every.
constexpr int64_t k_min_every_seconds = 1;
constexpr int64_t k_max_every_seconds = INT64_C(366) * 24 * 3600;

struct cron_expr {
    uint64_t seconds;  // bit s: second s (0-59); {0} in a five-field expression
    uint64_t minutes;  // bit m: minute m (0-59)
    uint32_t hours;    // bit h: hour h (0-23)
    uint32_t days;     // bit d: day of month d (1-31)
    uint16_t months;   // bit m: month m (1-12)
    uint8_t weekdays;  // bit w: weekday w (0-6, 0 = Sunday)
    bool days_star;    // the day-of-month field began with '*' (Vixie's rule above)
    bool weekdays_star;
    int64_t every_seconds;  // > 0: an @every expression, and the fields above are unused
};

struct cron_parse_result {
    bool ok;
    cron_expr expr;
    char error[256];  // when not ok: what is wrong, naming the field and the value
};

cron_parse_result parse_cron(const char* text) noexcept;

// Whether some day of the calendar satisfies the expression; when not, `why` says which fields exclude
// every day. (@every expressions always fire.)
bool cron_ever_fires(const cron_expr& e, char* why, size_t why_len) noexcept;

// A wall-clock time: month 1-12, day 1-31, hour 0-23, minute and second 0-59.
struct wall_time {
    int year, month, day, hour, minute, second;
};

// The first wall-clock time strictly after `after` that `e` allows (not an @every expression), within
// k_search_years years; false when there is none there.
constexpr int k_search_years = 400;  // the Gregorian calendar repeats itself every 400 years
bool next_wall_time(const cron_expr& e, const wall_time& after, wall_time* next) noexcept;

// Days since 1970-01-01 of a date of the proleptic Gregorian calendar, and its weekday (0 = Sunday).
int64_t days_from_civil(int year, int month, int day) noexcept;
int weekday_of(int year, int month, int day) noexcept;
int days_in_month(int year, int month) noexcept;

}  // namespace pgjq
