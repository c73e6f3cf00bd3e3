-- Requests for access (access_requests.go in the root package): a signed-in
-- reader asks for the files of a work that shows its record but not its
-- files; the work's managers grant the viewer role on that work until a
-- date (a row of grants with expires), or refuse.
CREATE TABLE access_requests (
    key        INTEGER PRIMARY KEY,
    resource   INTEGER NOT NULL,            -- the work
    user_key   INTEGER NOT NULL,            -- who asks
    message    TEXT    NOT NULL,
    created    INTEGER NOT NULL,
    state      TEXT    NOT NULL,            -- open, granted, refused
    decided    INTEGER,                     -- NULL while open
    decided_by INTEGER,
    until      INTEGER,                     -- the grant's end, when granted
    reply      TEXT    NOT NULL DEFAULT ''
);
-- the requests waiting (and decided), newest first, for the managers' list
CREATE INDEX access_requests_state ON access_requests (state, key);
-- one reader's requests, and theirs on one work
CREATE INDEX access_requests_user ON access_requests (user_key, resource, key);
-- a grant made by a decision ends (NULL: never, as roles on collections)
ALTER TABLE grants ADD COLUMN expires INTEGER;
