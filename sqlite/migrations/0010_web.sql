-- The web index (web.go in the root package): the state of every WARC
-- file, the captures (indexed records) of those files, the URLs and
-- domains they name, and the current links between the pages.
--
-- Times are Unix nanoseconds. The inbound indexes are partial: a URL or a
-- domain without inbound links (most of those only captured) costs no
-- entry, and "the top n by inbound links" reads n entries of them.
CREATE TABLE web_files (
    file        INTEGER PRIMARY KEY, -- the file resource holding the WARC bytes
    work        INTEGER NOT NULL,
    byte_offset INTEGER NOT NULL,    -- every record before it is indexed
    records     INTEGER NOT NULL,
    errors      INTEGER NOT NULL,
    done        INTEGER NOT NULL,
    removed     INTEGER NOT NULL
);

CREATE TABLE web_domains (
    id      INTEGER PRIMARY KEY,
    name    TEXT    NOT NULL UNIQUE,
    urls    INTEGER NOT NULL DEFAULT 0,
    inbound INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX web_domains_top ON web_domains (inbound DESC, id) WHERE inbound > 0;

CREATE TABLE web_urls (
    id      INTEGER PRIMARY KEY,
    surt    TEXT    NOT NULL UNIQUE,
    url     TEXT    NOT NULL,
    domain  INTEGER NOT NULL,
    current INTEGER NOT NULL DEFAULT 0 -- the capture whose links are the page's
);

-- The inbound count of every URL (one row per web_urls row), apart from
-- the wide rows of web_urls: a batch changes thousands of counts, and
-- narrow rows put them on fewer pages to write.
CREATE TABLE web_url_counts (
    id      INTEGER PRIMARY KEY, -- web_urls.id
    domain  INTEGER NOT NULL,
    inbound INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX web_url_counts_top ON web_url_counts (domain, inbound DESC, id) WHERE inbound > 0;

-- links: NULL when the record tells no links, else the target URL ids as
-- varint deltas (shelfmark.EncodeLinkIDs), empty for a page without links.
-- The url and file indexes end in the rowid (id) implicitly.
CREATE TABLE web_captures (
    id          INTEGER PRIMARY KEY,
    url         INTEGER NOT NULL,
    file        INTEGER NOT NULL,
    byte_offset INTEGER NOT NULL,
    byte_length INTEGER NOT NULL,
    time        INTEGER NOT NULL,
    type        TEXT    NOT NULL,
    mime        TEXT    NOT NULL,
    status      INTEGER NOT NULL,
    digest      TEXT    NOT NULL,
    record_id   TEXT    NOT NULL,
    links       BLOB
);
CREATE INDEX web_captures_url ON web_captures (url, time);
CREATE INDEX web_captures_file ON web_captures (file);

-- The current links, from the page src to the URL dst: the inbound links
-- of a URL are one range of the key.
CREATE TABLE web_links (
    dst INTEGER NOT NULL,
    src INTEGER NOT NULL,
    PRIMARY KEY (dst, src)
) WITHOUT ROWID;
