-- A depositor's resources, newest first: the staff workspace's "my works"
-- reads one range of it a page (Owned), whatever the number of deposits.
CREATE INDEX owners_user ON owners (user_key, resource);
