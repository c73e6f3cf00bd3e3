-- Preservation events and fixity: the same tables, columns and indexes as
-- postgres/migrations/0016_fixity.sql (only the event id's declaration
-- differs). Times are Unix microseconds (UTC).
--
-- The PREMIS events the repository records (fixity checks, recoveries);
-- the others (ingestion, characterization, versions, deletion) are told
-- from the resources and the preservation copy.
CREATE TABLE preservation_events (
    id        INTEGER PRIMARY KEY,
    resource  INTEGER NOT NULL, -- the key of the file (or object) the event is about
    type      TEXT NOT NULL, -- the PREMIS event type's label
    at        INTEGER NOT NULL,
    agent     TEXT NOT NULL,
    outcome   TEXT NOT NULL, -- success or failure
    detail    TEXT NOT NULL,
    copy      TEXT NOT NULL, -- store or ocfl
    algorithm TEXT NOT NULL,
    digest    TEXT NOT NULL
);
-- a resource's events, oldest first
CREATE INDEX preservation_events_resource ON preservation_events (resource, id);
-- The last fixity check of each copy of each stored file: item is the
-- SHA-256 in the content store, the content path in an OCFL object.
CREATE TABLE fixity_states (
    resource INTEGER NOT NULL,
    copy     TEXT NOT NULL,
    item     TEXT NOT NULL,
    checked  INTEGER NOT NULL,
    outcome  TEXT NOT NULL, -- ok, repaired or damaged
    damaged  INTEGER NOT NULL, -- 1 while no whole copy is known
    detail   TEXT NOT NULL,
    PRIMARY KEY (resource, copy, item)
);
-- the report of failed checks
CREATE INDEX fixity_states_failed ON fixity_states (resource, copy, item) WHERE outcome <> 'ok';
-- the files whose download must fail, and the metric
CREATE INDEX fixity_states_damaged ON fixity_states (resource) WHERE damaged = 1;
-- The progress of the fixity pass (one row, id 1), so that a pass resumes
-- where it stopped.
CREATE TABLE fixity_pass (
    id       INTEGER PRIMARY KEY,
    started  INTEGER NOT NULL,
    finished INTEGER NOT NULL,
    cursor   TEXT NOT NULL,
    files    INTEGER NOT NULL,
    bytes    INTEGER NOT NULL,
    damaged  INTEGER NOT NULL,
    repaired INTEGER NOT NULL
);
