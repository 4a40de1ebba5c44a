-- 21_cron: cron expressions and time zones, through pgjq.next_firings, which computes firings exactly as
-- schedules fire them. Every `after` is fixed, so the firings are too; times are shown in UTC and, for the
-- time zone cases, as the zone's wall clock.
\set VERBOSITY default
SET timezone = 'UTC';

-- Five fields: lists, ranges, steps
SELECT f FROM pgjq.next_firings('*/15 9-10 * * *', 'UTC', '2026-01-01 09:50', 5) f;
SELECT f FROM pgjq.next_firings('5,10-12 0 1 1 *', 'UTC', '2026-01-01 00:00', 5) f;
SELECT f FROM pgjq.next_firings('0 0-20/10 * * *', 'UTC', '2026-01-01 00:00', 3) f;
-- names in any case; 0 and 7 are Sunday
SELECT f, to_char(f, 'Dy') FROM pgjq.next_firings('0 9 * * mon-fri', 'UTC', '2026-01-02 10:00', 4) f;
SELECT f FROM pgjq.next_firings('0 0 1 JAN,jul *', 'UTC', '2026-01-01 00:00', 3) f;
SELECT array_agg(f) FILTER (WHERE e = '0 12 * * 0') = array_agg(f) FILTER (WHERE e = '0 12 * * 7')
   AND array_agg(f) FILTER (WHERE e = '0 12 * * 7') = array_agg(f) FILTER (WHERE e = '0 12 * * SUN')
   AND bool_and(extract(dow FROM f) = 0) AS sunday_three_ways
  FROM unnest(ARRAY['0 12 * * 0', '0 12 * * 7', '0 12 * * SUN']) e, pgjq.next_firings(e, 'UTC', '2026-01-01', 10) f;
-- Vixie cron: both day fields restricted, either allows the day (the 13th, and every Friday) ...
SELECT f, to_char(f, 'Dy') FROM pgjq.next_firings('0 0 13 * fri', 'UTC', '2026-03-01', 7) f;
-- ... but a day field beginning with * restricts together with the other (odd days that are Fridays)
SELECT f, to_char(f, 'Dy') FROM pgjq.next_firings('0 0 */2 * fri', 'UTC', '2026-03-01', 4) f;
-- February 29th, only in leap years
SELECT f FROM pgjq.next_firings('0 0 29 2 *', 'UTC', '2026-01-01', 2) f;
-- six fields: seconds first
SELECT f FROM pgjq.next_firings('*/20 * * * * *', 'UTC', '2026-01-01 00:00:50', 4) f;
SELECT f FROM pgjq.next_firings('30 0 12 * * *', 'UTC', '2026-01-01 12:00:30', 2) f;
-- strictly after `after`, to the microsecond
SELECT f FROM pgjq.next_firings('* * * * * *', 'UTC', '2026-01-01 00:00:00.5', 2) f;

-- Aliases
SELECT e, f FROM unnest(ARRAY['@yearly', '@annually', '@monthly', '@weekly', '@daily', '@midnight', '@hourly']) e,
     pgjq.next_firings(e, 'UTC', '2026-03-04 05:06', 1) f;
SELECT f FROM pgjq.next_firings('  @DAILY  ', 'UTC', '2026-03-04 05:06', 1) f;

-- @every: counted from 1970-01-01 00:00:00 UTC, whatever the zone
SELECT f FROM pgjq.next_firings('@every 90s', 'UTC', '2026-01-01 00:00:10', 3) f;
SELECT f FROM pgjq.next_firings('@every 1h 30m', 'America/New_York', '2026-01-01 00:00', 2) f;
SELECT bool_and(extract(epoch FROM f)::bigint % 7 = 0) AS multiples_of_7, count(*)
  FROM pgjq.next_firings('@every 7 seconds', 'UTC', '2026-06-01 13:14:15', 100) f;
SELECT array_agg(a.f) = array_agg(b.f) AS zone_ignored
  FROM pgjq.next_firings('@every 2 hours', 'UTC', '2026-03-07', 20) WITH ORDINALITY a(f, n)
  JOIN pgjq.next_firings('@every 2 hours', 'America/New_York', '2026-03-07', 20) WITH ORDINALITY b(f, n) USING (n);

-- Time zones: a firing is its wall-clock time read in the zone as `timestamp ... AT TIME ZONE` reads it.
SELECT f, f AT TIME ZONE 'Asia/Kolkata' AS local FROM pgjq.next_firings('0 9 * * *', 'Asia/Kolkata', '2026-01-01', 2) f;
-- America/New_York, 2026-03-08: 02:00 EST jumps to 03:00 EDT. 02:30 does not exist that day: it fires once,
-- shifted forward by the gap, at 03:30 EDT.
SELECT f, f AT TIME ZONE 'America/New_York' AS local
  FROM pgjq.next_firings('30 2 * * *', 'America/New_York', '2026-03-06 12:00-05', 4) f;
-- every half hour through the gap: 02:00 and 02:30 land on 03:00 and 03:30, which fire once each
SELECT f, f AT TIME ZONE 'America/New_York' AS local
  FROM pgjq.next_firings('*/30 * * * *', 'America/New_York', '2026-03-08 00:45-05', 5) f;
-- 2026-11-01: 02:00 EDT falls back to 01:00 EST. 01:30 happens twice: it fires once, at its second
-- occurrence (01:30 EST).
SELECT f, f AT TIME ZONE 'America/New_York' AS local
  FROM pgjq.next_firings('30 1 * * *', 'America/New_York', '2026-10-30 12:00-04', 3) f;
-- every half hour through the repeated hour: 01:00 and 01:30 fire once each, after 00:30 EDT by 90 minutes
SELECT f, f AT TIME ZONE 'America/New_York' AS local
  FROM pgjq.next_firings('*/30 * * * *', 'America/New_York', '2026-11-01 00:00-04', 5) f;
-- over a month with a gap: 8 wall-clock times a day, less the 2 that shift onto others; increasing, no
-- instant twice, each firing what PostgreSQL reads for its wall-clock time
SELECT count(*) AS firings, count(*) = 31 * 8 - 2 AS each_instant_once, count(DISTINCT f) AS distinct_instants,
       bool_and(f = (f AT TIME ZONE 'America/New_York') AT TIME ZONE 'America/New_York') AS read_as_postgres_reads
  FROM pgjq.next_firings('*/30 0-3 * * *', 'America/New_York', '2026-02-28 23:59-05', 1000) f
 WHERE f < '2026-04-01 00:00-04';
SELECT bool_and(f = (f AT TIME ZONE 'America/New_York') AT TIME ZONE 'America/New_York') AS read_as_postgres_reads,
       count(*) = 30 * 8 AS every_wall_time_once
  FROM pgjq.next_firings('*/30 0-3 * * *', 'America/New_York', '2026-10-31 23:59-04', 1000) f
 WHERE f < '2026-12-01 00:00-05';
-- Europe/London, 2026-03-29 01:00 GMT -> 02:00 BST; a zone's name in any case
SELECT f, f AT TIME ZONE 'Europe/London' AS local
  FROM pgjq.next_firings('30 1 29 3 *', 'europe/london', '2026-01-01', 1) f;

-- The count is bounded: at most 1000
SELECT count(*) FROM pgjq.next_firings('* * * * * *', 'UTC', '2026-01-01', 1000);

-- Bad input: each names the field and the value
SELECT pgjq.next_firings('61 * * * *');
SELECT pgjq.next_firings('* 24 * * *');
SELECT pgjq.next_firings('* * 0 * *');
SELECT pgjq.next_firings('* * 32 * *');
SELECT pgjq.next_firings('* * * 13 *');
SELECT pgjq.next_firings('* * * * 8');
SELECT pgjq.next_firings('60 * * * * *');
SELECT pgjq.next_firings('* * * foo *');
SELECT pgjq.next_firings('* * * * monday');
SELECT pgjq.next_firings('x * * * *');
SELECT pgjq.next_firings('5-3 * * * *');
SELECT pgjq.next_firings('5- * * * *');
SELECT pgjq.next_firings('*/0 * * * *');
SELECT pgjq.next_firings('*/61 * * * *');
SELECT pgjq.next_firings('1/5 * * * *');
SELECT pgjq.next_firings('1,,2 * * * *');
SELECT pgjq.next_firings('1, * * * *');
SELECT pgjq.next_firings('L * * * *');
SELECT pgjq.next_firings('* * * *');
SELECT pgjq.next_firings('* * * * * * *');
SELECT pgjq.next_firings('');
SELECT pgjq.next_firings('   ');
SELECT pgjq.next_firings('@fortnightly');
SELECT pgjq.next_firings('@daily 5');
SELECT pgjq.next_firings('@every');
SELECT pgjq.next_firings('@every 0s');
SELECT pgjq.next_firings('@every 367 days');
SELECT pgjq.next_firings('@every 5 fortnights');
SELECT pgjq.next_firings('@every five minutes');
SELECT pgjq.next_firings(repeat('1,', 600) || '1 * * * *');
-- an expression that never fires is refused
SELECT pgjq.next_firings('0 0 30 2 *');
SELECT pgjq.next_firings('0 0 31 apr,jun,sep,nov *');
-- ... unless the day of the week may allow a day
SELECT count(*) FROM pgjq.next_firings('0 0 31 2 mon', 'UTC', '2026-01-01', 3);
-- other arguments
SELECT pgjq.next_firings('@daily', 'Mars/Olympus_Mons');
SELECT pgjq.next_firings('@daily', '');
SELECT pgjq.next_firings('@daily', 'UTC', 'infinity');
SELECT pgjq.next_firings('@daily', 'UTC', now(), 0);
SELECT pgjq.next_firings('@daily', 'UTC', now(), 1001);
SELECT pgjq.next_firings(NULL);
SELECT pgjq.next_firings('@daily', NULL);
SELECT pgjq.next_firings('@daily', 'UTC', NULL);
SELECT pgjq.next_firings('@daily', 'UTC', now(), NULL);
RESET timezone;
