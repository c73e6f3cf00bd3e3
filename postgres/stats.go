package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// The planner's statistics of a growing table.
//
// The engine's statements are prepared once on each pooled connection, and
// after five runs PostgreSQL plans such a statement once for every value
// (a generic plan) and keeps that plan until the statistics of a table it
// reads change. A plan made while a table was nearly empty can therefore
// outlive the table's growth: on a new database, the read of the
// collections of a batch of works (MemberOfMany) was planned while
// resources held a few rows, as a loop over every row of resources, and
// took 20–60 ms a call once resources held a few thousand works, instead
// of a tenth of a millisecond, which made the followers of the change feed
// hold the processor against the writes. Autovacuum gathers the statistics
// of a table again once a tenth of it has changed, but only on its own
// round (autovacuum_naptime, a minute by default): until then a table that
// grew from nothing keeps the plans of its first rows.
//
// So each process, every statsEvery, asks PostgreSQL's own counters which
// of the schema's tables have at least doubled in live rows since their
// statistics were gathered (and hold at least statsMinRows), and analyses
// those: PostgreSQL then plans again every statement that reads them. A
// table is analysed about log2(rows / statsMinRows) times in its life, a
// sample of at most 30,000 rows each (default_statistics_target); one
// process at a time does it (statsLockClass), and a table that
// autovacuum is working on is skipped (SKIP_LOCKED) until the next tick.

// statsEvery is how often a process looks for tables that have doubled.
const statsEvery = 2 * time.Second

// statsMinRows is the size below which a table is left to autovacuum: the
// cost of any plan over so few rows is small.
const statsMinRows = 256

// statsTimeout bounds one tick: the look-up and its analyses.
const statsTimeout = time.Minute

// statsLockClass is the first key of the lock that lets one process at a
// time analyse a schema's tables; the second is the schema's hash.
const statsLockClass int32 = 0x53685374 // "ShSt"

// staleTablesSQL names the tables of the connection's schema whose live
// rows (as counted by PostgreSQL since its last analysis) reach $1 and
// twice the rows that analysis found (reltuples, -1 before the first).
const staleTablesSQL = `SELECT s.schemaname, s.relname FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid
WHERE s.schemaname = current_schema() AND s.n_live_tup >= greatest($1, 2 * c.reltuples)
ORDER BY s.relname`

// tickStats is the ticker's analysis of the tables that doubled, ended
// with parent (when the DB closes); its error is dropped, and the next
// tick tries again.
func (db *DB) tickStats(parent context.Context) {
	ctx, cancel := context.WithTimeout(parent, statsTimeout)
	defer cancel()
	_, _ = db.analyzeGrown(ctx)
}

// analyzeGrown analyses the schema's tables that have doubled since their
// statistics were gathered and returns their names; none while another
// process is doing it.
func (db *DB) analyzeGrown(ctx context.Context) ([]string, error) {
	tx, err := db.pool.Begin(ctx)
	if err != nil {
		return nil, fmt.Errorf("postgres: statistics: begin: %w", err)
	}
	defer func() { _ = tx.Rollback(context.Background()) }()
	var mine bool
	if err := tx.QueryRow(ctx, "SELECT pg_try_advisory_xact_lock($1, "+schemaLockKey+")", statsLockClass).Scan(&mine); err != nil {
		return nil, fmt.Errorf("postgres: statistics: lock: %w", err)
	}
	if !mine {
		return nil, nil
	}
	rows, err := tx.Query(ctx, staleTablesSQL, statsMinRows)
	if err != nil {
		return nil, fmt.Errorf("postgres: statistics: find grown tables: %w", err)
	}
	var names []string
	tables, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (pgx.Identifier, error) {
		var schema, name string
		err := r.Scan(&schema, &name)
		names = append(names, name)
		return pgx.Identifier{schema, name}, err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: statistics: find grown tables: %w", err)
	}
	for _, t := range tables {
		if _, err := tx.Exec(ctx, "ANALYZE (SKIP_LOCKED) "+t.Sanitize()); err != nil {
			return nil, fmt.Errorf("postgres: statistics: analyse %s: %w", t.Sanitize(), err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, fmt.Errorf("postgres: statistics: commit: %w", err)
	}
	return names, nil
}
