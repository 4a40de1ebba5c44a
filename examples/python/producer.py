#!/usr/bin/env python3
"""A pgjq producer in plain SQL from Python (psycopg 3): each order and its job commit together.

    python3 producer.py [CONNINFO] [ORDERS]

CONNINFO defaults to libpq's environment (PGHOST, PGDATABASE, ...). The job is enqueued inside the
transaction that writes the order: if anything fails before COMMIT, neither exists.

Each job carries the trace context of the span that enqueued it (headers => {"traceparent": ...}), so that
the worker's span continues the producer's trace. A service with OpenTelemetry fills the headers with
opentelemetry.propagate.inject(headers); this example makes the W3C traceparent of a span itself.
"""
import os
import sys

import psycopg
from psycopg.types.json import Jsonb


def current_traceparent() -> str:
    """The W3C traceparent of the span handling this order: version 00, trace id, span id, sampled."""
    return f"00-{os.urandom(16).hex()}-{os.urandom(8).hex()}-01"


def main() -> int:
    conninfo = sys.argv[1] if len(sys.argv) > 1 else ""
    orders = int(sys.argv[2]) if len(sys.argv) > 2 else 10
    with psycopg.connect(conninfo) as conn:
        conn.execute("CREATE TABLE IF NOT EXISTS example_orders (id bigint PRIMARY KEY, customer text NOT NULL)")
        conn.commit()
        for n in range(1, orders + 1):
            with conn.transaction():  # BEGIN ... COMMIT, or ROLLBACK if the block raises
                conn.execute("INSERT INTO example_orders VALUES (%s, %s) ON CONFLICT DO NOTHING", (n, f"c{n}"))
                # Every tenth order asks for something the worker cannot do, to show a failing job.
                kind = "refund" if n % 10 == 0 else "email"
                traceparent = current_traceparent()
                (job_id,) = conn.execute(
                    "SELECT pgjq.enqueue(%s, %s, queue_name => 'examples', headers => %s)",
                    (kind, Jsonb({"order": n}), Jsonb({"traceparent": traceparent})),
                ).fetchone()
            print(f"order {n}: job {job_id} ({kind}) trace {traceparent.split('-')[1]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
