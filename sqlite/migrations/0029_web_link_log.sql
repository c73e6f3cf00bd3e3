-- The web index's log of link changes (webmerge.go in the root package).
-- A batch of records does not change web_links and the inbound counts in
-- place: it adds its link changes here, summed per link, and a merge
-- moves them into web_links, web_url_counts and web_domains in key order,
-- a range of dst per transaction. The log is small and stays in cache, so
-- a batch writes few pages; a merge writes each page of the large tables
-- once for all the batches it takes in.
--
-- delta is +1 (a link to add), -1 (a link to remove) or 0 (added and
-- removed again since the last merge: nothing to do). A URL's inbound
-- count moves by the sum of its rows' deltas.
CREATE TABLE web_link_log (
    dst   INTEGER NOT NULL,
    src   INTEGER NOT NULL,
    delta INTEGER NOT NULL,
    PRIMARY KEY (dst, src)
) WITHOUT ROWID;

-- One row, written first by every merge transaction: on a backend with
-- parallel writers it makes merges take turns, so the changes of one link
-- are applied in the order they were taken from the log. chunks counts
-- the merge transactions ever run.
CREATE TABLE web_merge (
    id     INTEGER PRIMARY KEY CHECK (id = 1),
    chunks INTEGER NOT NULL
);
INSERT INTO web_merge (id, chunks) VALUES (1, 0);
