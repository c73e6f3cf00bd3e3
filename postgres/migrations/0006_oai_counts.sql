-- How many rows of the OAI-PMH view each format holds (collection 0) and
-- how many each set holds directly: the same table as
-- sqlite/migrations/0006_oai_counts.sql, kept by PutOAIRecords one change per
-- format and set of a batch, so a list's completeListSize is one primary key
-- read at any size instead of a count over the list.
CREATE TABLE oai_counts (
    prefix     text   NOT NULL,
    collection bigint NOT NULL,        -- 0: every row of the format
    n          bigint NOT NULL,
    PRIMARY KEY (prefix, collection)
);
INSERT INTO oai_counts (prefix, collection, n)
    SELECT prefix, 0, count(*) FROM oai_records GROUP BY prefix;
INSERT INTO oai_counts (prefix, collection, n)
    SELECT prefix, collection, count(*) FROM oai_set_records GROUP BY prefix, collection;
