package sqlite

// HoldPassiveCheckpoints keeps the checkpointer from copying the log into
// the database file until release is called, so that a test can take a
// read snapshot that needs the log's frames.
func (db *DB) HoldPassiveCheckpoints() (release func()) {
	db.ckpt.hold.Lock()
	return db.ckpt.hold.Unlock
}
