-- The background pipeline (rules R5, R6).
--
-- What characterization found out about each file: NULL format_id until it
-- ran; 'UNKNOWN' when no signature matched.
ALTER TABLE files
    ADD COLUMN format_id      text,
    ADD COLUMN format_name    text    NOT NULL DEFAULT '',
    ADD COLUMN format_version text    NOT NULL DEFAULT '',
    ADD COLUMN format_mime    text    NOT NULL DEFAULT '',
    ADD COLUMN width          integer NOT NULL DEFAULT 0,
    ADD COLUMN height         integer NOT NULL DEFAULT 0,
    ADD COLUMN pages          integer NOT NULL DEFAULT 0,
    ADD COLUMN format_note    text    NOT NULL DEFAULT '';

-- The durable job queue: one row per job waiting, running or failed; a
-- finished job's row is deleted in the transaction that stores its result,
-- so the table holds only outstanding work. Workers on several machines
-- claim with FOR UPDATE SKIP LOCKED. Times are Unix microseconds.
CREATE TABLE jobs (
    id       bigserial PRIMARY KEY,
    queue    text    NOT NULL,             -- characterize | derive | text | ocr
    resource bigint  NOT NULL,             -- the file the job works on
    state    text    NOT NULL,             -- queued | running | failed
    attempt  integer NOT NULL DEFAULT 0,   -- claims so far
    run_at   bigint  NOT NULL,             -- ready from (later after a failed attempt)
    lease    bigint  NOT NULL DEFAULT 0,   -- a running job is lost after this
    worker   text    NOT NULL DEFAULT '',  -- who holds (or last held) it
    error    text    NOT NULL DEFAULT '',  -- the last attempt's error
    created  bigint  NOT NULL
);
-- one job per file and queue: enqueueing again is a no-op
CREATE UNIQUE INDEX jobs_resource ON jobs (queue, resource);
-- claiming: the oldest ready jobs of a queue, one index range
CREATE INDEX jobs_ready ON jobs (queue, state, run_at, id);
-- reaping: running jobs whose worker died
CREATE INDEX jobs_lease ON jobs (lease) WHERE state = 'running';

-- queues paused by an operator (shelfmark jobs pause ocr); absent = running
CREATE TABLE job_queues (
    name   text    PRIMARY KEY,
    paused boolean NOT NULL DEFAULT false
);
