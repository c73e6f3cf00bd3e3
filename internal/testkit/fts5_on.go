//go:build sqlite_fts5

package testkit

// fts5 says the binary has SQLite's full-text search (the sqlite_fts5 tag).
const fts5 = true
