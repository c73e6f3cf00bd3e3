-- The background pipeline (rules R5, R6).
--
-- What characterization found out about each file: NULL format_id until it
-- ran; 'UNKNOWN' when no signature matched.
ALTER TABLE files ADD COLUMN format_id      TEXT;
ALTER TABLE files ADD COLUMN format_name    TEXT    NOT NULL DEFAULT '';
ALTER TABLE files ADD COLUMN format_version TEXT    NOT NULL DEFAULT '';
ALTER TABLE files ADD COLUMN format_mime    TEXT    NOT NULL DEFAULT '';
ALTER TABLE files ADD COLUMN width          INTEGER NOT NULL DEFAULT 0;
ALTER TABLE files ADD COLUMN height         INTEGER NOT NULL DEFAULT 0;
ALTER TABLE files ADD COLUMN pages          INTEGER NOT NULL DEFAULT 0;
ALTER TABLE files ADD COLUMN format_note    TEXT    NOT NULL DEFAULT '';

-- The durable job queue: one row per job waiting, running or failed; a
-- finished job's row is deleted in the transaction that stores its result,
-- so the table holds only outstanding work. Times are Unix microseconds.
CREATE TABLE jobs (
    id       INTEGER PRIMARY KEY,
    queue    TEXT    NOT NULL,            -- characterize | derive | text | ocr
    resource INTEGER NOT NULL,            -- the file the job works on
    state    TEXT    NOT NULL,            -- queued | running | failed
    attempt  INTEGER NOT NULL DEFAULT 0,  -- claims so far
    run_at   INTEGER NOT NULL,            -- ready from (later after a failed attempt)
    lease    INTEGER NOT NULL DEFAULT 0,  -- a running job is lost after this
    worker   TEXT    NOT NULL DEFAULT '', -- who holds (or last held) it
    error    TEXT    NOT NULL DEFAULT '', -- the last attempt's error
    created  INTEGER NOT NULL
);
-- one job per file and queue: enqueueing again is a no-op
CREATE UNIQUE INDEX jobs_resource ON jobs (queue, resource);
-- claiming: the oldest ready jobs of a queue, one index range
CREATE INDEX jobs_ready ON jobs (queue, state, run_at, id);
-- reaping: running jobs whose worker died
CREATE INDEX jobs_lease ON jobs (lease) WHERE state = 'running';

-- queues paused by an operator (shelfmark jobs pause ocr); absent = running
CREATE TABLE job_queues (
    name   TEXT    PRIMARY KEY,
    paused INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;
