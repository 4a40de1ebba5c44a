-- The baseline pgjq is measured against: the PostgreSQL job queue that "postgres job queue" recipes describe
-- (the design in the project's seed documents), as plain SQL and plpgsql. One `jobs` table with a partial
-- index on pending jobs in claim order, a plpgsql claim_job_batch that locks the next jobs with
-- FOR UPDATE SKIP LOCKED and marks them claimed, and completion by UPDATE. It creates `jobs` in the current
-- schema: load it into a database of its own; running it again starts over. pgjq-bench (src/bench/recipe_driver.cpp) enqueues with plain
-- INSERTs, claims with claim_job_batch and completes with complete_job (or one UPDATE per batch).

DROP TABLE IF EXISTS jobs CASCADE;

CREATE TABLE jobs (
    id            uuid         PRIMARY KEY DEFAULT gen_random_uuid(),
    job_type      varchar(50)  NOT NULL,
    priority      integer      NOT NULL DEFAULT 100,
    status        varchar(20)  NOT NULL DEFAULT 'pending',
    data          jsonb        NOT NULL DEFAULT '{}',
    progress      integer      DEFAULT 0,          -- progress reporting
    current_stage varchar(100),
    events_count  integer      DEFAULT 0,
    worker_id     varchar(100),                    -- who holds the job
    claimed_at    timestamptz,
    created_at    timestamptz  DEFAULT now(),      -- claim order within a priority
    started_at    timestamptz,
    completed_at  timestamptz,
    attempts      integer      DEFAULT 0,          -- retries
    max_attempts  integer      DEFAULT 3,
    last_error    text,
    CONSTRAINT valid_status CHECK (status IN ('pending', 'claimed', 'running', 'completed', 'failed', 'cancelled'))
);

-- What a claim walks: pending jobs only, highest priority first, oldest first.
CREATE INDEX jobs_claimable_idx ON jobs (priority DESC, created_at ASC) WHERE status = 'pending';
-- What a worker holds.
CREATE INDEX jobs_worker_idx ON jobs (worker_id) WHERE status IN ('claimed', 'running');

-- Claims up to p_batch_size pending jobs of the given types for p_worker_id: the next ones in claim order
-- that no concurrent claimer has locked, each with an attempt left.
CREATE OR REPLACE FUNCTION claim_job_batch(p_worker_id varchar, p_job_types varchar[], p_batch_size integer DEFAULT 10)
    RETURNS SETOF jobs LANGUAGE plpgsql AS $$
BEGIN
    RETURN QUERY
    WITH next_jobs AS (
        SELECT j.id FROM jobs j
         WHERE j.status = 'pending' AND j.job_type = ANY (p_job_types) AND j.attempts < j.max_attempts
         ORDER BY j.priority DESC, j.created_at ASC
         LIMIT p_batch_size
           FOR UPDATE SKIP LOCKED
    ), claimed AS (
        UPDATE jobs j
           SET status = 'claimed', worker_id = p_worker_id, claimed_at = now(), attempts = j.attempts + 1
         WHERE j.id IN (SELECT n.id FROM next_jobs n)
        RETURNING j.*
    )
    SELECT * FROM claimed;
END;
$$;

CREATE OR REPLACE FUNCTION complete_job(p_job_id uuid) RETURNS void LANGUAGE sql AS $$
    UPDATE jobs SET status = 'completed', progress = 100, completed_at = now() WHERE id = p_job_id;
$$;

CREATE OR REPLACE FUNCTION fail_job(p_job_id uuid, p_error text) RETURNS void LANGUAGE sql AS $$
    UPDATE jobs
       SET status = CASE WHEN attempts >= max_attempts THEN 'failed' ELSE 'pending' END,
           last_error = p_error, worker_id = NULL, claimed_at = NULL
     WHERE id = p_job_id;
$$;

-- Jobs held longer than p_timeout go back to pending while attempts remain.
CREATE OR REPLACE FUNCTION recover_stale_jobs(p_timeout interval) RETURNS bigint LANGUAGE sql AS $$
    WITH recovered AS (
        UPDATE jobs SET status = 'pending', worker_id = NULL, claimed_at = NULL
         WHERE status IN ('claimed', 'running') AND claimed_at < now() - p_timeout AND attempts < max_attempts
        RETURNING 1)
    SELECT count(*) FROM recovered;
$$;
