-- Accounts, access control and the audit trail (see account.go and
-- access.go). Times are Unix microseconds (UTC).

-- A lease keeps a resource public until then; from then on it is private.
ALTER TABLE resources ADD COLUMN lease INTEGER;
-- "restricted" is now called "authenticated" (any signed-in user).
UPDATE resources SET visibility = 'authenticated' WHERE visibility = 'restricted';
-- embargoes and leases that end (AccessDue): a range of the few live
-- resources that have one
CREATE INDEX resources_embargo_live ON resources (embargo) WHERE embargo IS NOT NULL AND deleted IS NULL;
CREATE INDEX resources_lease_live ON resources (lease) WHERE lease IS NOT NULL AND deleted IS NULL;

CREATE TABLE users (
    key           INTEGER PRIMARY KEY AUTOINCREMENT,
    name          TEXT    NOT NULL UNIQUE,
    admin         INTEGER NOT NULL DEFAULT 0,
    disabled      INTEGER NOT NULL DEFAULT 0,
    password_hash TEXT    NOT NULL DEFAULT '', -- argon2id, encoded; '' = no password
    created       INTEGER NOT NULL
);

-- the groups of each user
CREATE TABLE user_groups (
    user_key INTEGER NOT NULL,
    grp      TEXT    NOT NULL,
    PRIMARY KEY (user_key, grp)
) WITHOUT ROWID;

-- API tokens and browser sessions: only the SHA-256 of the secret is kept
CREATE TABLE tokens (
    key      INTEGER PRIMARY KEY AUTOINCREMENT,
    user_key INTEGER NOT NULL,
    kind     TEXT    NOT NULL,            -- api | session
    hint     TEXT    NOT NULL DEFAULT '', -- the start of the secret
    hash     BLOB    NOT NULL UNIQUE,
    scope    TEXT    NOT NULL,            -- read | write | admin
    note     TEXT    NOT NULL DEFAULT '',
    created  INTEGER NOT NULL,
    expires  INTEGER,                     -- NULL: never
    revoked  INTEGER                      -- NULL: valid
);
-- a user's tokens of a kind, newest first
CREATE INDEX tokens_user ON tokens (user_key, kind, key);

-- roles on collections (resource 0: the whole repository), given to
-- principals "user:NAME" or "group:NAME"
CREATE TABLE grants (
    resource  INTEGER NOT NULL,
    principal TEXT    NOT NULL,
    role      TEXT    NOT NULL,
    PRIMARY KEY (resource, principal, role)
) WITHOUT ROWID;
CREATE INDEX grants_principal ON grants (principal, resource);

-- who deposited each resource
CREATE TABLE owners (
    resource INTEGER PRIMARY KEY,
    user_key INTEGER NOT NULL
);

-- the append-only audit trail, newest first by key
CREATE TABLE audit (
    key        INTEGER PRIMARY KEY AUTOINCREMENT,
    at         INTEGER NOT NULL,
    actor      TEXT    NOT NULL,            -- user name, anonymous or system:…
    user_key   INTEGER NOT NULL DEFAULT 0,
    token      INTEGER NOT NULL DEFAULT 0,
    action     TEXT    NOT NULL,
    resource   INTEGER NOT NULL DEFAULT 0,
    predicates TEXT    NOT NULL DEFAULT '', -- changed predicates, newline-joined
    outcome    TEXT    NOT NULL,            -- ok | denied | failed
    detail     TEXT    NOT NULL DEFAULT '',
    request    TEXT    NOT NULL DEFAULT ''
);
CREATE INDEX audit_resource ON audit (resource, key);
CREATE INDEX audit_actor ON audit (actor, key);

-- repository settings (for example the secret of the id permutation)
CREATE TABLE settings (
    name  TEXT PRIMARY KEY,
    value TEXT NOT NULL
) WITHOUT ROWID;
