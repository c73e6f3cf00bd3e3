-- Small blobs of a content store whose large blobs live in an object
-- store (S3): one row per SHA-256, so a small file costs no request to the
-- object store. stored is when the blob was last stored (Unix
-- microseconds), for the collector of unreferenced blobs.
CREATE TABLE small_blobs (
    sha256 bytea  PRIMARY KEY,
    data   bytea  NOT NULL,
    stored bigint NOT NULL
);
