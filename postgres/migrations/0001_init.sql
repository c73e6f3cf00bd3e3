-- Shelfmark schema, PostgreSQL dialect: the same tables, columns and indexes
-- as sqlite/migrations/0001_init.sql. Times are Unix microseconds (UTC) in
-- bigint columns. Keys are numbers reserved in blocks from counters('key');
-- public ids are an encoding of them (see id.go).

CREATE TABLE counters (
    name  text   PRIMARY KEY,
    value bigint NOT NULL
);
INSERT INTO counters (name, value) VALUES ('key', 0), ('seq', 0);

CREATE TABLE resources (
    key        bigint PRIMARY KEY,
    kind       text   NOT NULL,           -- collection | work | fileset | file
    visibility text   NOT NULL,           -- public | restricted | private
    embargo    bigint,                    -- until (µs), or NULL
    parent     bigint,                    -- key of the holding work/file set, or NULL
    position   bigint,                    -- 1..n ordered; 2^42+key unordered; NULL without parent
    version    bigint NOT NULL,
    seq        bigint NOT NULL,           -- sequence number of the last change
    created    bigint NOT NULL,
    modified   bigint NOT NULL,
    deleted    bigint                     -- tombstone time (µs), or NULL
);
-- children in order (rule R2): one index walk per page at any depth
CREATE INDEX resources_children ON resources (parent, position) WHERE parent IS NOT NULL;
-- changes in commit order: OAI-PMH datestamps, incremental re-indexing
CREATE INDEX resources_seq ON resources (seq, key);

-- metadata: one row per field (resource, predicate) holding all its objects
-- in the compact encoding of field.go: an edit touches only the rows of the
-- fields it changes (R3), and a record of 54 statements over 16 predicates
-- is 16 rows.
CREATE TABLE fields (
    resource  bigint NOT NULL,
    predicate text   NOT NULL,
    objects   bytea  NOT NULL,
    PRIMARY KEY (resource, predicate)
);

-- membership stored on the member (rule R1): adding a member inserts one row
CREATE TABLE memberships (
    collection bigint NOT NULL,
    member     bigint NOT NULL,
    PRIMARY KEY (collection, member)
);
CREATE INDEX memberships_member ON memberships (member, collection);

CREATE TABLE files (
    resource     bigint PRIMARY KEY,
    name         text   NOT NULL,
    media_type   text   NOT NULL,
    size         bigint NOT NULL,
    sha256       text   NOT NULL,
    sha512       text   NOT NULL DEFAULT '',
    md5          text   NOT NULL DEFAULT '',
    use          text   NOT NULL,
    external_url text   NOT NULL DEFAULT ''
);
CREATE INDEX files_sha256 ON files (sha256) WHERE sha256 <> '';
