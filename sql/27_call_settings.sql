-- What an API call runs under, whatever its caller set: names resolve as under search_path = pg_catalog,
-- pg_temp (never in a schema of the caller's search_path), and pgjq's statements are planned and run with
-- jit and enable_seqscan off. Afterwards the caller's settings are its own again, also when the call failed
-- inside a block that caught the error. A trigger the owner adds to pgjq.live_jobs records what a
-- statement of the enqueue sees (with a trigger on the table an enqueue runs its INSERT statement).
-- No temporary object is created before the probe: pg_temp would then show in current_schemas.
DROP ROLE IF EXISTS regress_pgjq_pin_producer;
CREATE ROLE regress_pgjq_pin_producer;
CREATE SCHEMA regress_pin_caller;
GRANT USAGE ON SCHEMA regress_pin_caller TO regress_pgjq_pin_producer;
SELECT pgjq.create_queue('pin_q');
SELECT pgjq.create_queue('pin_capped', max_pending => 10);
SELECT pgjq.grant_producer('regress_pgjq_pin_producer', 'pin_q'),
       pgjq.grant_producer('regress_pgjq_pin_producer', 'pin_capped');

CREATE TABLE public.pin_seen (call text, schemas name[], seqscan text, jit text);
CREATE FUNCTION public.pin_probe() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO public.pin_seen VALUES (NEW.queue_name || '/' || NEW.job_type, pg_catalog.current_schemas(true),
                                        pg_catalog.current_setting('enable_seqscan'),
                                        pg_catalog.current_setting('jit'));
    RETURN NEW;
END
$$;
CREATE TRIGGER pin_probe BEFORE INSERT ON pgjq.live_jobs FOR EACH ROW EXECUTE FUNCTION public.pin_probe();

SET ROLE regress_pgjq_pin_producer;
SET search_path = regress_pin_caller, public;
SET enable_seqscan = on;
SET jit = on;
SELECT pgjq.enqueue('enqueue', '{}', 'pin_q') > 0 AS enqueued,
       pgjq.try_enqueue('try_enqueue', '{}', 'pin_q') > 0 AS try_enqueued,
       pgjq.enqueue('capped', '{}', 'pin_capped') > 0 AS capped,
       pgjq.enqueue('keyed', '{}', 'pin_q', unique_key => 'k') > 0 AS keyed;
INSERT INTO pgjq.jobs (job_type, payload, queue_name) VALUES ('inserted', '{}', 'pin_q');
SELECT current_schemas(false) AS caller_schemas, current_setting('enable_seqscan') AS caller_seqscan,
       current_setting('jit') AS caller_jit;
-- A call that fails inside a block that catches its error leaves the caller's settings as they were.
DO $$
BEGIN
    PERFORM pgjq.enqueue('refused', '{}', 'not_granted_q');
EXCEPTION WHEN insufficient_privilege THEN
    RAISE NOTICE 'refused: %', SQLERRM;
END
$$;
SELECT current_schemas(false) AS after_refusal, current_setting('enable_seqscan') AS seqscan_after_refusal;
RESET ROLE;
RESET search_path;
RESET enable_seqscan;
RESET jit;
SELECT * FROM public.pin_seen ORDER BY call;

DROP TRIGGER pin_probe ON pgjq.live_jobs;
DROP FUNCTION public.pin_probe();
DROP TABLE public.pin_seen;
SELECT pgjq.revoke_producer('regress_pgjq_pin_producer', 'pin_q'),
       pgjq.revoke_producer('regress_pgjq_pin_producer', 'pin_capped');
SELECT pgjq.drop_queue('pin_q', force => true), pgjq.drop_queue('pin_capped', force => true);
DROP SCHEMA regress_pin_caller;
DROP ROLE regress_pgjq_pin_producer;
