-- A pgjq producer in plain psql: the order and its job commit together (a ROLLBACK would leave neither).
--   psql -X -v ON_ERROR_STOP=1 -v order=41 -f producer.sql
SET client_min_messages = warning;
CREATE TABLE IF NOT EXISTS example_orders (id bigint PRIMARY KEY, customer text NOT NULL);
BEGIN;
INSERT INTO example_orders VALUES (:order, 'psql') ON CONFLICT DO NOTHING;
SELECT pgjq.enqueue('email', jsonb_build_object('order', :order), queue_name => 'examples') AS job_id;
COMMIT;
