-- Calls pgjq's functions with random arguments drawn from values each argument's type makes interesting:
-- NULLs, empty and oversized values, boundaries, infinities, malformed arrays and JSON, jobs and queues that
-- exist and that do not. Run by scripts/fuzz.sh as a role holding every capability, with :iterations and
-- :seed set. Every call runs in its own subtransaction; an internal error (XX000) is collected and raised at
-- the end with the call that caused it, any other error is expected.
SELECT setseed(:seed / 32768.0);
DO $fuzz$
DECLARE
    fn record;
    args text;
    sql text;
    state text;
    message text;
    internal text[] := '{}';
    outcomes jsonb := '{}';
    iterations integer := current_setting('fuzz.iterations')::integer;
    -- literal values by argument type ("%id" is replaced by a job id that exists, or recently did)
    pools jsonb := $pools${
      "text": ["NULL", "''", "'default'", "'short'", "'fifo'", "'no_such_queue'", "'Bad Name'", "repeat('x', 49)",
               "repeat('x', 201)", "repeat('é', 5000)", "'a''b'", "E'\\x01'", "'w'", "'t'", "'🙂'",
               "'* * * * * *'", "'@every 1s'", "'0 0 29 2 */7'", "'America/New_York'", "'run_once'"],
      "jsonb": ["NULL", "'{}'", "'[]'", "'null'", "'1'", "'\"s\"'", "'[{}, {}]'", "'{\"a\": [1, 2]}'",
                "(SELECT jsonb_agg(g) FROM generate_series(1, 10001) g)", "repeat('[', 100) || repeat(']', 100)"],
      "integer": ["NULL", "0", "1", "-1", "10", "100", "10000", "10001", "32767", "32768", "2147483647", "-2147483648"],
      "bigint": ["NULL", "0", "-1", "9223372036854775807", "%id", "%id", "%id"],
      "timestamp with time zone": ["NULL", "now()", "'infinity'", "'-infinity'", "now() + interval '1 hour'",
                                   "'294276-12-31'", "'4713-01-01 BC'"],
      "interval": ["NULL", "'0'", "'-1 second'", "'1 second'", "'1 year'", "'1 year 1 microsecond'", "'178000000 years'",
                   "'-178000000 years'", "'2147483647 months'", "'100 years'"],
      "boolean": ["NULL", "true", "false"],
      "text[]": ["NULL", "'{}'", "'{NULL}'", "'{t}'", "'{t,later}'", "'{{t},{u}}'", "ARRAY['']",
                 "(SELECT array_agg(g::text) FROM generate_series(1, 10001) g)"],
      "bigint[]": ["NULL", "'{}'", "'{NULL}'", "ARRAY[%id]", "ARRAY[%id, %id]", "'{{1},{2}}'",
                   "(SELECT array_agg(g) FROM generate_series(1, 10001) g)"],
      "name": ["NULL", "'fuzzer'", "'postgres'", "'no_such_role'"],
      "regrole": ["NULL", "'fuzzer'"]
    }$pools$;
    pick text;
    calls text[];
BEGIN
    SELECT array_agg(p.oid::regprocedure::text) INTO calls FROM pg_proc p
     WHERE p.pronamespace = 'pgjq'::regnamespace AND p.prorettype <> 'trigger'::regtype;
    FOR i IN 1..iterations LOOP
        pick := calls[1 + floor(random() * array_length(calls, 1))::integer];
        SELECT p.oid, p.proname, p.proargtypes INTO fn FROM pg_proc p WHERE p.oid = pick::regprocedure;
        SELECT coalesce(string_agg(
                   CASE WHEN pools ? format_type(t, NULL) THEN
                       '(' || (SELECT replace(v, '%id', coalesce((SELECT id FROM pgjq.jobs ORDER BY random() LIMIT 1), 1)::text)
                                 FROM jsonb_array_elements_text(pools -> format_type(t, NULL)) AS e(v)
                                ORDER BY random() LIMIT 1)
                       || ')::' || format_type(t, NULL)
                   ELSE 'NULL' END, ', ' ORDER BY n), '')
          INTO args FROM unnest(fn.proargtypes) WITH ORDINALITY AS a(t, n);
        sql := format('SELECT * FROM pgjq.%I(%s)', fn.proname, args);
        BEGIN
            EXECUTE sql;
            state := 'ok';
        EXCEPTION WHEN OTHERS THEN
            GET STACKED DIAGNOSTICS state = RETURNED_SQLSTATE, message = MESSAGE_TEXT;
            IF state = 'XX000' THEN
                internal := internal || (sql || ' -> ' || message);
            END IF;
        END;
        outcomes := jsonb_set(outcomes, ARRAY[state], to_jsonb(coalesce((outcomes ->> state)::integer, 0) + 1));
    END LOOP;
    RAISE NOTICE 'outcomes by SQLSTATE: %', outcomes;
    IF array_length(internal, 1) > 0 THEN
        RAISE EXCEPTION 'internal errors: %', array_to_string(internal, E'\n');
    END IF;
END
$fuzz$;
