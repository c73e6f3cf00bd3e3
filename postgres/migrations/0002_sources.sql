-- Ingest source keys: the stable key of each ingested item and the
-- resource it became, so a re-run skips what is already stored.
CREATE TABLE sources (
    source_key text   PRIMARY KEY,
    resource   bigint NOT NULL
);
