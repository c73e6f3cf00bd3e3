-- Uploads: which user sent which bytes (by SHA-256) that no file of theirs
-- names yet: the same tables, columns and indexes as
-- sqlite/migrations/0015_uploads.sql. A record lets its user name the
-- bytes in a file, keeps them from the collector of unreferenced blobs and
-- counts towards the user's quota; it goes when the user names the bytes,
-- when the upload is refused, or after the collector's grace period.
-- Times are Unix microseconds (UTC).
CREATE TABLE uploads (
    user_key bigint  NOT NULL,
    sha256   text    NOT NULL,
    size     bigint  NOT NULL,
    stored   bigint  NOT NULL,
    uses     bigint  NOT NULL DEFAULT 1, -- uploads of these bytes by this user waiting to be named or refused
    PRIMARY KEY (user_key, sha256)
);
-- the collector asks whether any upload holds some bytes
CREATE INDEX uploads_sha256 ON uploads (sha256);
-- pruning the records past the grace period
CREATE INDEX uploads_stored ON uploads (stored);
-- What the records of each user hold, kept by the statements that write
-- them so that a quota check reads one row; user_key 0 holds the totals of
-- all users.
CREATE TABLE upload_usage (
    user_key bigint  PRIMARY KEY,
    files    bigint  NOT NULL,
    bytes    bigint  NOT NULL
);
