package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// defaultCopyMinRows is the number of rows from which a bulk insert is sent
// with COPY (binary format) instead of as one INSERT over unnest arrays.
//
// Measured on PostgreSQL 15, one durable transaction per insert, time of the
// COPY over the time of the unnest statement: at 64 rows 0.92–1.20 (the
// fields and memberships inserts, which COPY inside a savepoint, were
// slower), at 128 rows 0.73–0.92, at 256 rows 0.56–0.93, at 4,096 rows
// about 0.5. Below the threshold the extra round trips of COPY (and of the
// savepoint) cost more than COPY saves; from it on, COPY's multi-row heap
// inserts and cheaper parsing win.
const defaultCopyMinRows = 128

// copySavepoint is the savepoint that guards a COPY which may collide with
// existing rows.
const copySavepoint = "shelfmark_copy"

// maxCopySavepoints caps the savepoints one write transaction opens for
// COPY; further bulk inserts of fields and memberships use the unnest
// statements. Each savepoint that writes is a subtransaction with an id of
// its own, and PostgreSQL keeps only 64 of them per transaction in shared
// memory: past that the transaction's subtransactions overflow, and until it
// ends every other session's snapshot must look them up in pg_subtrans. A
// batch flushes (and so copies) a few times at most, unless many of its ops
// each add hundreds of members.
const maxCopySavepoints = 32

// copyInSavepoint reports whether a bulk insert of n rows that may meet
// existing rows should use copyNew, and counts the savepoint it will take.
func (t *writeTx) copyInSavepoint(n int) bool {
	if !t.r.useCopy(n) || t.savepoints >= maxCopySavepoints {
		return false
	}
	t.savepoints++
	return true
}

// uniqueViolation is SQLSTATE unique_violation.
const uniqueViolation = "23505"

// copyFrom sends n rows to table with COPY … FROM STDIN; row(i) returns the
// values of row i in the order of cols, or an error that ends the copy. It reports the statement to the
// tracer as "COPY table (cols) FROM STDIN" with the number of rows copied.
//
// A COPY that fails (a unique violation, a lost connection) leaves the
// transaction aborted, as a failed INSERT does: the caller returns the error
// and the transaction rolls back.
func (r runner) copyFrom(ctx context.Context, table string, cols []string, n int, row func(i int) ([]any, error)) (int64, error) {
	src := pgx.CopyFromSlice(n, row)
	count, err := r.q.CopyFrom(ctx, pgx.Identifier{table}, cols, src)
	r.trace("COPY "+table+" ("+strings.Join(cols, ", ")+") FROM STDIN", count)
	return count, full(err)
}

// copyNew copies rows that are expected to be new into a table with a
// primary key, inside a savepoint. If a row already exists (or repeats
// within the input), the COPY fails with a unique violation; copyNew then
// rolls back to the savepoint, which leaves the transaction as it was, and
// reports conflict = true so that the caller can write the rows with its
// ON CONFLICT statement instead. Any other error is returned, the
// transaction rolled back to the savepoint when the connection allows.
func (r runner) copyNew(ctx context.Context, table string, cols []string, n int, row func(i int) ([]any, error)) (conflict bool, err error) {
	if _, err := r.exec(ctx, "SAVEPOINT "+copySavepoint); err != nil {
		return false, fmt.Errorf("savepoint before copy: %w", err)
	}
	if _, err := r.copyFrom(ctx, table, cols, n, row); err != nil {
		if _, rerr := r.exec(ctx, "ROLLBACK TO SAVEPOINT "+copySavepoint+"; RELEASE SAVEPOINT "+copySavepoint); rerr != nil {
			return false, fmt.Errorf("copy: %w (and rolling back to the savepoint failed: %v)", err, rerr)
		}
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == uniqueViolation {
			return true, nil
		}
		return false, fmt.Errorf("copy: %w", err)
	}
	if _, err := r.exec(ctx, "RELEASE SAVEPOINT "+copySavepoint); err != nil {
		return false, fmt.Errorf("release savepoint after copy: %w", err)
	}
	return false, nil
}
