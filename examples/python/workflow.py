#!/usr/bin/env python3
"""A pgjq workflow in plain SQL from Python (psycopg 3): three steps, a join, and an event.

    python3 workflow.py CONNINFO start ORDER    start the workflow of an order; prints its id
    python3 workflow.py CONNINFO work           run its steps until none can run now
    python3 workflow.py CONNINFO signal ORDER   say the order is paid: the event its last step waits for
    python3 workflow.py CONNINFO show ID        the workflow and its steps

CONNINFO may be "" (libpq's environment: PGHOST, PGDATABASE, ...). The workflow of an order:

    price ──┐
            ├──> ship (waits for the event "paid:ORDER", then reads both results)
    stock ──┘

- start_workflow(name, steps) enqueues the three steps in one transaction: price and stock are runnable at
  commit, ship waits until both finished (its "after"). workflow_key makes a second start of the same order
  return the first workflow instead of a duplicate.
- A step is an ordinary job: claimed with claim_job_batch, reported with complete or fail. Its result is
  what the steps after it read with step_results(job_id), by step name (a page of up to 1000; a join of more
  steps passes the last name it read as after_step for the next page).
- wait_for_event(job_id, worker_id, event) returns the event's payload, or NULL: the job is parked (its lease
  is gone, no attempt is counted) until someone calls signal(event, payload, queue). A parked job must not be
  completed or failed: the handler returns PARKED and the loop reports nothing. When the event comes the job
  is claimed again and its handler runs from the start; the same wait_for_event then returns the payload.
  A signal that comes first is kept (keep_for), so the order of the two does not matter.
"""
import json
import sys

import psycopg
from psycopg.types.json import Jsonb

WORKER_ID = "python-workflow-example"
QUEUE = "examples"
STEP_TYPES = ["price", "stock", "ship"]
PARKED = object()  # what a handler returns for a job that wait_for_event parked: report nothing


def start(conn, order: int) -> int:
    items = 3
    steps = [
        {"name": "price", "job_type": "price", "payload": {"order": order, "items": items}, "queue": QUEUE},
        {"name": "stock", "job_type": "stock", "payload": {"order": order, "items": items}, "queue": QUEUE},
        {"name": "ship", "job_type": "ship", "payload": {"order": order}, "queue": QUEUE,
         "after": ["price", "stock"]},
    ]
    (workflow_id,) = conn.execute(
        "SELECT pgjq.start_workflow('order', %s, workflow_key => %s)", (Jsonb(steps), f"order-{order}")
    ).fetchone()
    return workflow_id


def handle(conn, job_id: int, job_type: str, payload: dict):
    """One step's work: its result, or PARKED. Raising fails the step (and, by default, the workflow)."""
    if job_type == "price":
        return {"total": 10 * payload["items"]}
    if job_type == "stock":
        return {"reserved": payload["items"]}
    if job_type == "ship":
        (paid,) = conn.execute(
            "SELECT pgjq.wait_for_event(%s, %s, %s, timeout => '1 day')",
            (job_id, WORKER_ID, f"paid:{payload['order']}"),
        ).fetchone()
        if paid is None:
            return PARKED
        # The join: every step it waits for, by name, with its result.
        results = {
            name: result
            for name, status, result in conn.execute(
                "SELECT step_name, status, result FROM pgjq.step_results(%s)", (job_id,)
            )
        }
        return {"total": results["price"]["total"], "reserved": results["stock"]["reserved"], "paid_by": paid["by"]}
    raise ValueError(f"no handler for job type {job_type!r}")


def work(conn) -> None:
    """Runs steps until none can run now (a real worker would LISTEN and go on: see worker.py)."""
    while True:
        jobs = conn.execute(
            "SELECT id, job_type, payload FROM pgjq.claim_job_batch(%s, %s, 10, %s)", (WORKER_ID, STEP_TYPES, QUEUE)
        ).fetchall()
        if not jobs:
            return
        for job_id, job_type, payload in jobs:
            try:
                result = handle(conn, job_id, job_type, payload)
            except Exception as e:
                conn.execute("SELECT pgjq.fail(%s, %s, %s)", (job_id, WORKER_ID, f"{type(e).__name__}: {e}"))
                print(f"step {job_type} (job {job_id}) failed: {e}", flush=True)
                continue
            if result is PARKED:
                print(f"step {job_type} (job {job_id}) parked until its event", flush=True)
                continue
            conn.execute("SELECT pgjq.complete(%s, %s, %s)", (job_id, WORKER_ID, Jsonb(result)))
            print(f"step {job_type} (job {job_id}) completed: {json.dumps(result)}", flush=True)


def signal(conn, order: int) -> int:
    (woken,) = conn.execute(
        "SELECT pgjq.signal(%s, %s, queue_name => %s)", (f"paid:{order}", Jsonb({"by": "card"}), QUEUE)
    ).fetchone()
    return woken


def show(conn, workflow_id: int) -> None:
    row = conn.execute(
        "SELECT workflow_name, workflow_key, status, steps_finished, steps_total FROM pgjq.workflows WHERE id = %s",
        (workflow_id,),
    ).fetchone()
    if row is None:
        print(f"no workflow {workflow_id}")
        return
    print("workflow {} ({}, key {}): {}, {}/{} steps finished".format(workflow_id, *row))
    for name, status, depends_on, waiting_for, result in conn.execute(
        "SELECT step_name, status, depends_on, waiting_for, result FROM pgjq.workflow_steps(%s)", (workflow_id,)
    ):
        after = f" after {', '.join(depends_on)}" if depends_on else ""
        waiting = f", waiting for {waiting_for}" if waiting_for else ""
        print(f"  {name}{after}: {status}{waiting}" + (f" -> {json.dumps(result)}" if result is not None else ""))


def main() -> int:
    if len(sys.argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    conninfo, command, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    # autocommit: each call is a transaction of its own (a claim's lease, a report, a signal commit at once)
    with psycopg.connect(conninfo, autocommit=True) as conn:
        if command == "start":
            print(start(conn, int(args[0])))
        elif command == "work":
            work(conn)
        elif command == "signal":
            print(f"woken: {signal(conn, int(args[0]))}")
        elif command == "show":
            show(conn, int(args[0]))
        else:
            print(__doc__, file=sys.stderr)
            return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
