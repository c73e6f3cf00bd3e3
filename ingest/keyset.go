package ingest

import (
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	// SQLite keeps the keys that no longer fit in memory.
	_ "github.com/mattn/go-sqlite3"
)

// memKeys is how many keys a keySet holds in memory before it moves them
// to disk: about 64 thousand keys, a few MiB.
const memKeys = 1 << 16

// keySet remembers keys with a number each (the row where an identifier
// was first seen, or how many times a row's fingerprint was), in memory
// bounded whatever the number of keys: the first memKeys in a map, then all
// of them in a temporary SQLite database that close deletes. Lookups on
// disk cost a B-tree search of the page cache, a few microseconds.
type keySet struct {
	limit int // memKeys, smaller in tests
	mem   map[string]int
	dir   string // of the database, once spilled
	db    *sql.DB
	tx    *sql.Tx
	adds  int // since the last commit
}

func newKeySet() *keySet { return &keySet{limit: memKeys, mem: map[string]int{}} }

// get returns the number kept for key.
func (k *keySet) get(key string) (int, bool, error) {
	if k.db == nil {
		row, ok := k.mem[key]
		return row, ok, nil
	}
	var row int
	err := k.tx.QueryRow(`SELECT row FROM keys WHERE key = ?`, key).Scan(&row)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, false, nil
	} else if err != nil {
		return 0, false, fmt.Errorf("ingest: seen keys: %w", err)
	}
	return row, true, nil
}

// add keeps row as key's number, replacing any number kept before.
func (k *keySet) add(key string, row int) error {
	if k.db == nil {
		k.mem[key] = row
		if len(k.mem) < k.limit {
			return nil
		}
		return k.spill()
	}
	if _, err := k.tx.Exec(`INSERT OR REPLACE INTO keys (key, row) VALUES (?, ?)`, key, row); err != nil {
		return fmt.Errorf("ingest: seen keys: %w", err)
	}
	if k.adds++; k.adds >= 10000 {
		// Commit now and then so that the page cache, not the
		// transaction, holds the pages; durability is not wanted.
		if err := k.tx.Commit(); err != nil {
			return fmt.Errorf("ingest: seen keys: %w", err)
		}
		tx, err := k.db.Begin()
		if err != nil {
			return fmt.Errorf("ingest: seen keys: %w", err)
		}
		k.tx, k.adds = tx, 0
	}
	return nil
}

// spill moves the keys in memory to a new temporary database.
func (k *keySet) spill() error {
	dir, err := os.MkdirTemp("", "shelfmark-keys-")
	if err != nil {
		return fmt.Errorf("ingest: seen keys: %w", err)
	}
	db, err := sql.Open("sqlite3", "file:"+filepath.Join(dir, "keys.db")+"?_journal_mode=OFF&_synchronous=OFF")
	if err == nil {
		db.SetMaxOpenConns(1)
		_, err = db.Exec(`CREATE TABLE keys (key TEXT PRIMARY KEY, row INTEGER NOT NULL) WITHOUT ROWID`)
	}
	var tx *sql.Tx
	if err == nil {
		tx, err = db.Begin()
	}
	if err != nil {
		if db != nil {
			db.Close()
		}
		os.RemoveAll(dir)
		return fmt.Errorf("ingest: seen keys: %w", err)
	}
	k.dir, k.db, k.tx = dir, db, tx
	mem := k.mem
	k.mem = nil
	for key, row := range mem {
		if err := k.add(key, row); err != nil {
			return err
		}
	}
	return nil
}

// close deletes the temporary database, if any.
func (k *keySet) close() error {
	if k.db == nil {
		return nil
	}
	err := errors.Join(k.tx.Rollback(), k.db.Close(), os.RemoveAll(k.dir))
	k.db, k.tx = nil, nil
	return err
}
