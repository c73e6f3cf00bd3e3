-- Failed authentications per key (a client address "ip:…" or a user name
-- "user:…"), shared by the servers of one database so that a brute-force
-- limit holds across them: the same table, columns and indexes as
-- sqlite/migrations/0012_auth_failures.sql. Times are Unix microseconds
-- (UTC); blocked_until 0 means the key need not wait.
CREATE TABLE auth_failures (
    key           text   PRIMARY KEY,
    failures      bigint NOT NULL,
    last_failure  bigint NOT NULL,
    blocked_until bigint NOT NULL DEFAULT 0
);
-- the keys that must wait (read by every server every few seconds)
CREATE INDEX auth_failures_blocked ON auth_failures (blocked_until) WHERE blocked_until > 0;
-- pruning the forgotten keys
CREATE INDEX auth_failures_last ON auth_failures (last_failure);
