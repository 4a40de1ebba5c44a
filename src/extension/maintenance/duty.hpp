// duty.hpp: what a maintenance duty is. A database's maintenance worker (maintenance_worker.cpp) runs the
// duties of the table in duties.cpp, each when its time has come or when a wake-up concerns it. A duty:
// - runs with no transaction open and opens and commits its own (begin_duty_transaction), so that its
//   work commits or fails alone;
// - returns when it wants to run next, and what it handled (counted in pgjq.worker_status());
// - may fail: the worker catches the ERROR, logs it, counts it, and retries that duty alone after a
//   backoff (1 s, doubling to 1 min) while the others go on.
// Adding a duty is one entry in duties.cpp.
#pragma once

#include "core/doorbell.hpp"
#include "maintenance/shared_state.hpp"

namespace pgjq {

// What the worker knows during one round of duties; the duties may pass news through it.
struct maintenance_round {
    Oid dboid;
    const char* datname;
    db_slot* slot;    // this database's slot (read and written under the shared state's lock)
    TimestampTz now;  // when the round started
    // The relay delivered notices of jobs that finished or went back to pending since the vacuum last
    // looked: their old row versions in live_jobs are dead. New jobs alone leave nothing to vacuum.
    bool jobs_moved;
    bool relayed;  // the relay delivered notices in this round: more commits are likely on their way
};

struct duty_outcome {
    TimestampTz next_run;  // when to run again on its own; DT_NOEND: only when woken
    int64 done;            // what this run handled
    // When work is next due whether or not a worker is resident (a lease ends, a job falls due, finished
    // jobs to prune); DT_NOEND: none. Periodic looks that only guard against missed wake-ups are not
    // deadlines: a worker the launcher started exits when its next deadline is far (launcher.cpp).
    TimestampTz deadline;
};

struct duty {
    const char* name;  // "lease_recovery": in the log and worker_status()
    duty_outcome (*run)(maintenance_round& round);
    bool (*woken)(const maintenance_round& round);  // must it run before its time? nullptr: never
};

// The duties, in the order each round runs them.
extern const duty* const k_duties[];
extern const int k_duty_count;

// The index in k_duties (and in db_slot::duties) of the duty called `name`; -1 when there is none.
int duty_index(const char* name);

// A duty's transaction: the statement time, a snapshot, an SPI connection and what pg_stat_activity shows.
void begin_duty_transaction(const char* activity);
// Commits it; the caller's memory context is current again afterwards.
void commit_duty_transaction();
// The worker's transactions do not wait for their WAL (what they do is redone if a crash loses it); one
// that creates jobs must, as any enqueue does: this makes the current one commit as the server's
// synchronous_commit says.
void commit_as_enqueues_do();

// What committing transactions reported (core/deadlines.hpp) since the duty concerned last took it, or 0.
TimestampTz reported_deadline(const maintenance_round& round, deadline_kind kind);
// Forgets a report once the duty acted on it, unless a newer one replaced it meanwhile.
void forget_reported_deadline(const maintenance_round& round, deadline_kind kind, TimestampTz reported);

// For tests: raises an ERROR if pgjq.test_failing_duty names this duty. Each duty calls it where a failure
// would hurt most (inside its transaction; the relay after it took its events).
void test_failure_point(const char* duty_name);

// The longest the worker sleeps; the duties' own deadlines are capped by it.
TimestampTz naptime_from(TimestampTz now);

}  // namespace pgjq
