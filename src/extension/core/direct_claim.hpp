// direct_claim.hpp: a leased claim through the table access method.
//
// The leased claim's statement (api/claim.cpp) locks the jobs it picks with FOR UPDATE SKIP LOCKED, finds
// each again through the primary key to update it, and returns the rows through two CTEs and a sort: a
// lock record in the WAL and a second index descent per job, and an executor started for each claim.
// claim_directly walks live_jobs_claim_idx itself, in its order (priority DESC, id), and updates each
// job it finds without waiting: a job that another transaction is changing or holds locked (another
// claim, a cancel, a claim in a transaction) is passed over, as SKIP LOCKED passes over it; a job changed
// by a transaction that committed after the claim's snapshot is taken in its latest version if that is
// still claimable, as the statement's recheck (EvalPlanQual) would take it. Each update applies what the
// statement's would: the table's CHECK and NOT NULL constraints and the new version's index entries. The
// table's update triggers are pgjq's two, whose WHEN clauses a claim never meets (NEW.status = 'pending').
#pragma once

#include "core/claim_floor.hpp"
#include "pg/pg.hpp"

namespace pgjq {

// What the claim's statement takes as parameters (api/claim.cpp).
struct direct_claim_request {
    const char* queue_name;
    int32 batch;
    const char* worker_id;
    Datum lease;           // interval
    ArrayType* job_types;  // nullptr: any type
    Oid role;
    bool has_job_timeout;
    Datum job_timeout;   // interval: the queue's, for jobs without their own
    TimestampTz due_by;  // run_at <= due_by
    bool from_floor;     // only the floor's priority, from its id on
    job_key floor;
};

// Claims into the call's result set (a materialized SETOF pgjq.jobs) in claim order. Returns how many, with
// the key where its scan of the claim index took the last job and the earliest lease end; or -1, having
// done nothing, when the statement must run: a transaction that is read only, parallel, or not READ
// COMMITTED (the statement raises a serialization failure where this would pass a job over); a table,
// index, trigger or column this does not know; a caller without the privileges.
int64 claim_directly(FunctionCallInfo fcinfo, const direct_claim_request& r, job_key* last,
                     TimestampTz* first_lease_end);

}  // namespace pgjq
