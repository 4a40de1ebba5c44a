#!/usr/bin/env python3
"""Checks that a Python worker's Waiter does not sleep through a notification that arrives while a claim runs.

    python3 notified_during_claim.py DIR [CONNINFO]

DIR holds the worker.py whose Waiter is checked (docs/getting-started.md's, examples/python's); CONNINFO
defaults to libpq's environment. The claim is stood in for by a query that waits on an advisory lock,
which another session releases only after its NOTIFY pgjq_new_job has committed: the notification reaches
the worker's session while that query runs, whatever the machine's speed, and psycopg reads it then.
The wait that follows must end at once: a Waiter that only select()s on the socket sleeps its 30 s.
"""
import sys
import threading
import time

import psycopg

sys.path.insert(0, sys.argv[1])
import worker  # noqa: E402 (the worker under test, from DIR)

conninfo = sys.argv[2] if len(sys.argv) > 2 else ""
conn = psycopg.connect(conninfo, autocommit=True)
waiter = worker.Waiter(conn)
other = psycopg.connect(conninfo, autocommit=True)
other.execute("SELECT pg_advisory_lock(47)")


def notify_then_release():
    time.sleep(0.2)
    other.execute("NOTIFY pgjq_new_job, 'mail'")
    other.execute("SELECT pg_advisory_unlock(47)")


threading.Thread(target=notify_then_release).start()
conn.execute("SELECT pg_advisory_lock(47)")  # the "claim": returns only after the notification has come
conn.execute("SELECT pg_advisory_unlock(47)")
started = time.monotonic()
waiter.wait(30)
waited = time.monotonic() - started
print(f"psycopg {psycopg.__version__}: the wait after a claim during which a job was announced took {waited:.2f} s")
sys.exit(0 if waited < 10 else 1)
