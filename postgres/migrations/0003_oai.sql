-- The OAI-PMH view, PostgreSQL dialect: the same tables, columns and indexes
-- as sqlite/migrations/0003_oai.sql (rule R11; see oai.go). One row
-- per (work, metadata format) with its rendered payload, numbered by the
-- view's own sequence (seq, unique across formats, rising with every write
-- of a row). Datestamps never fall as seq rises, so a from/until window is
-- one seq range, and every list is a keyset walk over seq: one index range
-- per page at any depth, never OFFSET.
CREATE TABLE oai_records (
    seq       bigint  PRIMARY KEY,
    prefix    text    NOT NULL,       -- metadataPrefix: oai_dc | marcxml | …
    key       bigint  NOT NULL,       -- the work's key
    datestamp bigint  NOT NULL,       -- Unix seconds (UTC)
    deleted   boolean NOT NULL,       -- a tombstone
    sets      text    NOT NULL,       -- collection keys, comma-separated, ascending; '' for none
    payload   bytea   NOT NULL        -- the content of <metadata>; empty for a tombstone
);
-- one row per work and format: GetRecord, and the row a new one replaces
CREATE UNIQUE INDEX oai_records_key ON oai_records (key, prefix);
-- ListRecords / ListIdentifiers: the keyset walk of one format
CREATE INDEX oai_records_prefix ON oai_records (prefix, seq);
-- from/until: the first and last seq of a datestamp window (OAISeqRange)
CREATE INDEX oai_records_datestamp ON oai_records (prefix, datestamp, seq);

-- set membership of the view's rows: one row per (row, set in its sets), so
-- a list restricted to a set is one range of the primary key
CREATE TABLE oai_set_records (
    collection bigint NOT NULL,
    prefix     text   NOT NULL,
    seq        bigint NOT NULL,
    PRIMARY KEY (collection, prefix, seq)
);

-- public collections as sets; spec is the ids of the ancestors and the
-- collection's own, joined by ':', so a set and those below it are one range
-- of the unique spec index. COLLATE "C" compares bytes, as SQLite does: the
-- range spec >= 'X:' AND spec < 'X;' then holds exactly the specs below X,
-- whatever the database's collation.
CREATE TABLE oai_sets (
    key  bigint PRIMARY KEY,
    spec text   COLLATE "C" NOT NULL UNIQUE,
    name text   NOT NULL
);

-- embargoes that end: a range of the few resources that have one
CREATE INDEX resources_embargo ON resources (embargo) WHERE embargo IS NOT NULL;
