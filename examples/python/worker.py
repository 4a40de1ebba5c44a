#!/usr/bin/env python3
"""A complete pgjq worker in plain SQL from Python (psycopg 3): what the C++ worker runtime does.

    python3 worker.py [CONNINFO] [--exit-when-idle]

The loop, and why:
- The connection is in autocommit mode: each pgjq call is a transaction by itself, so a claim's lease
  and a report are committed at once (and a worker's calls need not wait for their WAL flush).
- LISTEN pgjq_new_job: the server notifies at the commit of an enqueue, so the worker sleeps on its socket
  instead of polling, and claims again at once when woken, or after IDLE_SECONDS at the latest (a notice
  missed during a reconnect costs latency, never a job). A notice that arrives while a claim runs is read
  by psycopg during that query, so the wait must not sleep through it: see Waiter.
- claim_job_batch(worker_id, job_types, batch, queue) leases up to `batch` jobs; each is reported with
  complete(id, worker_id, result) or fail(id, worker_id, error). A failure is retried with backoff until
  the queue's max_attempts, then the job is dead-lettered (status 'failed').
- A report refused with SQLSTATE PJ002 (not the lease holder: the lease expired and the job went to
  someone else) or PJ003 (cancelled) or PJ005 (timed out) means: drop the job, go on.
- Long jobs call heartbeat(id, worker_id) before the lease ends (here: between steps).
- Each claimed job comes with the headers its producer gave (NULL if none): its W3C traceparent names the
  producer's trace and span, so the handler's span continues that trace (with OpenTelemetry:
  opentelemetry.propagate.extract(headers) as the context of the span it starts).
- A lost connection: reconnect with backoff; the jobs held are recovered when their lease ends.
- SIGTERM / SIGINT: finish the job at hand, report it, and exit.
"""
import json
import re
import select
import signal
import sys
import time

import psycopg
from psycopg.types.json import Jsonb

WORKER_ID = "python-example"
QUEUE = "examples"
BATCH = 10
IDLE_SECONDS = 5.0
GIVE_UP = {"PJ002", "PJ003", "PJ005"}  # the job is no longer ours: drop it

stopping = False


def stop(*_):
    global stopping
    stopping = True


def handle(job_type: str, payload: dict) -> dict:
    """The application's work. Raising fails the job (it is retried, then dead-lettered)."""
    if job_type == "email":
        return {"sent_to": f"customer of order {payload['order']}"}
    raise ValueError(f"no handler for job type {job_type!r}")


class Waiter:
    """LISTENs for new jobs; wait() sleeps until one is announced or `seconds` pass, and never sleeps
    through a notification that came while a claim or report ran (psycopg reads it during that query).
    psycopg 3.2.4 and later keep such notifications for conn.notifies(), which takes a timeout since 3.2;
    before 3.2.4 only a notify handler sees them, so one records them and the wait is a select() on the
    connection's socket, whose data the next query reads."""

    def __init__(self, conn):
        self.conn = conn
        self.keeps_notifications = tuple(int(n) for n in re.findall(r"\d+", psycopg.__version__)[:3]) >= (3, 2, 4)
        self.notified = False
        if not self.keeps_notifications:
            conn.add_notify_handler(self.on_notify)
        conn.execute("LISTEN pgjq_new_job")  # before the first claim, so that no job slips in between

    def on_notify(self, notify) -> None:
        self.notified = True

    def wait(self, seconds: float) -> None:
        if self.keeps_notifications:
            for _ in self.conn.notifies(timeout=seconds, stop_after=1):
                pass
        elif not self.notified:
            select.select([self.conn.fileno()], [], [], seconds)
        self.notified = False


def trace_of(headers: dict) -> str:
    """The trace id of the producer's span, from its W3C traceparent (version-traceid-parentid-flags); the
    handler's own span would take it with a new span id, the producer's span id as its parent."""
    parts = headers.get("traceparent", "").split("-")
    return parts[1] if len(parts) >= 4 else "-"


def report(conn, sql: str, params) -> None:
    try:
        conn.execute(sql, params)
    except psycopg.Error as e:
        if e.sqlstate in GIVE_UP:
            print(f"dropped: {e.sqlstate} {e.diag.message_primary}", file=sys.stderr)
            return
        raise


def work(conn, exit_when_idle: bool) -> None:
    waiter = Waiter(conn)
    while not stopping:
        jobs = conn.execute(
            "SELECT id, job_type, payload, headers FROM pgjq.claim_job_batch(%s, NULL, %s, %s)",
            (WORKER_ID, BATCH, QUEUE),
        ).fetchall()
        for job_id, job_type, payload, headers in jobs:
            trace = trace_of(headers or {})
            try:
                result = handle(job_type, payload)
            except Exception as e:  # the handler's failure, recorded on the job
                report(conn, "SELECT pgjq.fail(%s, %s, %s)", (job_id, WORKER_ID, f"{type(e).__name__}: {e}"))
                # flushed: a worker's log is read while it runs (by its supervisor, or the examples test)
                print(f"job {job_id} failed: {e} (trace {trace})", flush=True)
            else:
                report(conn, "SELECT pgjq.complete(%s, %s, %s)", (job_id, WORKER_ID, Jsonb(result)))
                print(f"job {job_id} completed: {json.dumps(result)} (trace {trace})", flush=True)
        if jobs:
            continue  # there may be more: claim again before sleeping
        if exit_when_idle:
            return
        waiter.wait(IDLE_SECONDS)


def main() -> int:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    exit_when_idle = "--exit-when-idle" in sys.argv
    conninfo = args[0] if args else ""
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    delay = 0.5
    while not stopping:
        try:
            with psycopg.connect(conninfo, autocommit=True) as conn:
                delay = 0.5
                work(conn, exit_when_idle)
                return 0
        except psycopg.OperationalError as e:  # connection lost: our leases expire and are recovered
            print(f"connection lost ({e}); reconnecting in {delay:.1f} s", file=sys.stderr)
            time.sleep(delay)
            delay = min(delay * 2, 30.0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
