-- Ingest source keys: the stable key of each ingested item and the
-- resource it became, so a re-run skips what is already stored.
CREATE TABLE sources (
    source_key TEXT    PRIMARY KEY,
    resource   INTEGER NOT NULL
) WITHOUT ROWID;
