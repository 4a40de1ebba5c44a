// schedule_clock.hpp: a schedule's cron expression (core/cron.hpp) on the calendar of its time zone, with
// PostgreSQL's time zone machinery: the checks of the arguments, and the instants of the firings.
//
// A firing is a wall-clock time the expression allows, read in the schedule's zone as PostgreSQL reads
// `timestamp '...' AT TIME ZONE zone` (DetermineTimeZoneOffset): a time skipped by a spring-forward gap is
// read with the offset before the change, so it fires once, shifted forward by the gap (02:30 in
// America/New_York on 2026-03-08 fires at 03:30 EDT); a time repeated by a fall-back is read with the offset
// after the change, so it fires once, at its second occurrence (01:30 on 2026-11-01 fires at 01:30 EST).
// Each instant fires once: a shifted firing that lands on another firing is one firing. @every expressions
// count seconds from 1970-01-01 00:00:00 UTC and ignore the zone.
#pragma once

#include "core/cron.hpp"
#include "pg/pg.hpp"

namespace pgjq {

struct schedule_clock {
    cron_expr expr;
    pg_tz* zone;
};

// The expression, checked: 22023 naming the field and value, or saying that it never fires.
cron_expr cron_or_raise(const char* cron);
// The zone, or 22023 when PostgreSQL does not know it.
pg_tz* time_zone_or_raise(const char* name);

// The first firing strictly after `after`; DT_NOEND when there is none within k_search_years.
TimestampTz next_firing(const schedule_clock& clock, TimestampTz after);

// The firings in [first, until], `first` being one: how many (at most `cap`), and the latest of them.
int64 firings_through(const schedule_clock& clock, TimestampTz first, TimestampTz until, int64 cap,
                      TimestampTz* latest);

}  // namespace pgjq
