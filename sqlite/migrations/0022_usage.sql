-- Usage (usage.go in the root package): COUNTER's metrics counted per
-- resource (a work, a collection, or 0 for the whole repository) and
-- month (YYYYMM), added to in batches by each server's counter, so a read
-- never waits on a count. A work has a few rows a month at most.
CREATE TABLE usage_counts (
    resource INTEGER NOT NULL,
    month    INTEGER NOT NULL,
    metric   INTEGER NOT NULL,  -- 1 Total_Item_Investigations, 2 Unique_Item_Investigations, 3 Total_Item_Requests, 4 Unique_Item_Requests
    n        INTEGER NOT NULL,
    PRIMARY KEY (resource, metric, month)
) WITHOUT ROWID;
-- the most used resources of a month and metric (TopUsage)
CREATE INDEX usage_top ON usage_counts (month, metric, n);
