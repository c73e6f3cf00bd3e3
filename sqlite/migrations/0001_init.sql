-- Shelfmark schema, SQLite dialect. Times are Unix microseconds (UTC).
-- Keys are numbers reserved in blocks from counters('key'); public ids are an
-- encoding of them (see id.go).

CREATE TABLE counters (
    name  TEXT PRIMARY KEY,
    value INTEGER NOT NULL
) WITHOUT ROWID;
INSERT INTO counters (name, value) VALUES ('key', 0), ('seq', 0);

CREATE TABLE resources (
    key        INTEGER PRIMARY KEY,
    kind       TEXT    NOT NULL,          -- collection | work | fileset | file
    visibility TEXT    NOT NULL,          -- public | restricted | private
    embargo    INTEGER,                   -- until (µs), or NULL
    parent     INTEGER,                   -- key of the holding work/file set, or NULL
    position   INTEGER,                   -- 1..n ordered; 2^42+key unordered; NULL without parent
    version    INTEGER NOT NULL,
    seq        INTEGER NOT NULL,          -- sequence number of the last change
    created    INTEGER NOT NULL,
    modified   INTEGER NOT NULL,
    deleted    INTEGER                    -- tombstone time (µs), or NULL
);
-- children in order (rule R2): one index walk per page at any depth
CREATE INDEX resources_children ON resources (parent, position) WHERE parent IS NOT NULL;
-- changes in commit order: OAI-PMH datestamps, incremental re-indexing
CREATE INDEX resources_seq ON resources (seq, key);

-- metadata: one row per field (resource, predicate) holding all its objects
-- in the compact encoding of field.go, so an edit touches only the rows of
-- the fields it changes (R3), and a record of 54 statements over 16
-- predicates is 16 rows. Clustered by resource (WITHOUT ROWID): a resource's
-- metadata is one contiguous range.
CREATE TABLE fields (
    resource  INTEGER NOT NULL,
    predicate TEXT    NOT NULL,
    objects   BLOB    NOT NULL,
    PRIMARY KEY (resource, predicate)
) WITHOUT ROWID;

-- membership stored on the member (rule R1): adding a member inserts one row
CREATE TABLE memberships (
    collection INTEGER NOT NULL,
    member     INTEGER NOT NULL,
    PRIMARY KEY (collection, member)
) WITHOUT ROWID;
CREATE INDEX memberships_member ON memberships (member, collection);

CREATE TABLE files (
    resource     INTEGER PRIMARY KEY,
    name         TEXT    NOT NULL,
    media_type   TEXT    NOT NULL,
    size         INTEGER NOT NULL,
    sha256       TEXT    NOT NULL,
    sha512       TEXT    NOT NULL DEFAULT '',
    md5          TEXT    NOT NULL DEFAULT '',
    use          TEXT    NOT NULL,
    external_url TEXT    NOT NULL DEFAULT ''
);
CREATE INDEX files_sha256 ON files (sha256) WHERE sha256 <> '';
