-- The OAI-PMH view (rule R11; see oai.go): one row per (work,
-- metadata format) with its rendered payload, numbered by the view's own
-- sequence (seq, unique across formats, rising with every write of a row).
-- Datestamps never fall as seq rises, so a from/until window is one seq
-- range, and every list is a keyset walk over seq: one index range per page
-- at any depth, never OFFSET.
CREATE TABLE oai_records (
    seq       INTEGER PRIMARY KEY,
    prefix    TEXT    NOT NULL,       -- metadataPrefix: oai_dc | marcxml | …
    key       INTEGER NOT NULL,       -- the work's key
    datestamp INTEGER NOT NULL,       -- Unix seconds (UTC)
    deleted   INTEGER NOT NULL,       -- 1 for a tombstone
    sets      TEXT    NOT NULL,       -- collection keys, comma-separated, ascending; '' for none
    payload   BLOB    NOT NULL        -- the content of <metadata>; empty for a tombstone
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
    collection INTEGER NOT NULL,
    prefix     TEXT    NOT NULL,
    seq        INTEGER NOT NULL,
    PRIMARY KEY (collection, prefix, seq)
) WITHOUT ROWID;

-- public collections as sets; spec is the ids of the ancestors and the
-- collection's own, joined by ':', so a set and those below it are one range
-- of the unique spec index
CREATE TABLE oai_sets (
    key  INTEGER PRIMARY KEY,
    spec TEXT    NOT NULL UNIQUE,
    name TEXT    NOT NULL
);

-- embargoes that end: a range of the few resources that have one
CREATE INDEX resources_embargo ON resources (embargo) WHERE embargo IS NOT NULL;
