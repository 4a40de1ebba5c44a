// sqlstate.hpp: pgjq's own SQLSTATEs (class PJ), the codes callers branch on. Documented in docs/errors.md.
#pragma once

#include "pg/pg.hpp"

// The queue already holds max_pending unfinished jobs.
#define PGJQ_ERRCODE_QUEUE_FULL MAKE_SQLSTATE('P', 'J', '0', '0', '1')
// The calling worker does not hold the job (never claimed it, or its lease expired and the job was
// recovered or handed to another worker). The job is left untouched.
#define PGJQ_ERRCODE_NOT_LEASE_HOLDER MAKE_SQLSTATE('P', 'J', '0', '0', '2')
// The job the calling worker held was cancelled; the worker should stop working on it.
#define PGJQ_ERRCODE_JOB_CANCELLED MAKE_SQLSTATE('P', 'J', '0', '0', '3')
// A retry would give the job a unique_key that another unfinished job of its queue holds now.
#define PGJQ_ERRCODE_UNIQUE_KEY_HELD MAKE_SQLSTATE('P', 'J', '0', '0', '4')
// The job ran past its execution timeout (the queue's job_timeout or its own): the worker should stop; the
// job is failed for that attempt when its lease is recovered.
#define PGJQ_ERRCODE_JOB_TIMED_OUT MAKE_SQLSTATE('P', 'J', '0', '0', '5')
// A job's wait for an event (wait_for_event) reached its timeout before the event arrived: an ordinary
// failure of the job's attempt, for its worker to report.
#define PGJQ_ERRCODE_EVENT_TIMED_OUT MAKE_SQLSTATE('P', 'J', '0', '0', '6')
