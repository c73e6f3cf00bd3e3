package sqlstore

import (
	"context"
	"fmt"
	"time"

	"github.com/shelfmark/shelfmark"
)

// FixitySQL is the statements of the preservation events and fixity
// states (shelfmark.PreservationEvents), the same in both dialects
// (written once, in fixityShared). Their arguments are those named, in
// that order.
type FixitySQL struct {
	AddEvent string // resource, type, at, agent, outcome, detail, copy, algorithm, digest
	Events   string // resource, after, limit
	// PutFixity inserts or replaces a state: resource, copy, item,
	// checked, outcome, damaged, detail.
	PutFixity      string
	FixityStates   string // resource, copy, item, limit (all)
	FailedStates   string // resource, copy, item, limit (not ok)
	DamagedFiles   string // keys
	CountDamaged   string
	FixityPass     string
	OriginalFiles  string // after, limit
	SaveFixityPass string // started, finished, cursor, files, bytes, damaged, repaired
}

// eventCols are the columns of an event, in the order scanned.
const eventCols = `id, resource, type, at, agent, outcome, detail, copy, algorithm, digest`

// stateCols are the columns of a fixity state, in the order scanned.
const stateCols = `resource, copy, item, checked, outcome, damaged, detail`

// fixityShared is FixitySQL with PostgreSQL's placeholders (see Shared).
var fixityShared = FixitySQL{
	AddEvent: `INSERT INTO preservation_events (resource, type, at, agent, outcome, detail, copy, algorithm, digest)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
	// the index preservation_events_resource
	Events: `SELECT ` + eventCols + ` FROM preservation_events WHERE resource = $1 AND id > $2 ORDER BY id LIMIT $3`,
	PutFixity: `INSERT INTO fixity_states (` + stateCols + `) VALUES ($1, $2, $3, $4, $5, $6, $7)
ON CONFLICT (resource, copy, item) DO UPDATE SET checked = excluded.checked, outcome = excluded.outcome,
damaged = excluded.damaged, detail = excluded.detail`,
	// keyset over the primary key
	FixityStates: `SELECT ` + stateCols + ` FROM fixity_states
WHERE resource > $1 OR (resource = $1 AND (copy > $2 OR (copy = $2 AND item > $3)))
ORDER BY resource, copy, item LIMIT $4`,
	// the partial index fixity_states_failed
	FailedStates: `SELECT ` + stateCols + ` FROM fixity_states
WHERE outcome <> 'ok' AND (resource > $1 OR (resource = $1 AND (copy > $2 OR (copy = $2 AND item > $3))))
ORDER BY resource, copy, item LIMIT $4`,
	// the partial index fixity_states_damaged
	DamagedFiles: `SELECT DISTINCT resource FROM fixity_states WHERE damaged = 1 AND resource = ANY($1)`,
	CountDamaged: `SELECT count(DISTINCT resource) FROM fixity_states WHERE damaged = 1`,
	OriginalFiles: `SELECT f.resource, r.parent, f.sha256, f.sha512, f.size FROM files f JOIN resources r ON r.key = f.resource
WHERE f.resource > $1 AND f.use = 'original' AND f.sha256 <> '' AND f.external_url = '' AND r.deleted IS NULL
ORDER BY f.resource LIMIT $2`,
	FixityPass: `SELECT started, finished, cursor, files, bytes, damaged, repaired FROM fixity_pass WHERE id = 1`,
	SaveFixityPass: `INSERT INTO fixity_pass (id, started, finished, cursor, files, bytes, damaged, repaired)
VALUES (1, $1, $2, $3, $4, $5, $6, $7)
ON CONFLICT (id) DO UPDATE SET started = excluded.started, finished = excluded.finished, cursor = excluded.cursor,
files = excluded.files, bytes = excluded.bytes, damaged = excluded.damaged, repaired = excluded.repaired`,
}

var _ shelfmark.PreservationEvents = (*Direct)(nil)

// micros is t in Unix microseconds, 0 for the zero time.
func micros(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMicro()
}

// AddEvents implements shelfmark.PreservationEvents: one statement per
// event, in one transaction on SQLite (each its own on PostgreSQL).
func (x *Direct) AddEvents(ctx context.Context, events []shelfmark.PreservationEvent) error {
	if len(events) == 0 {
		return nil
	}
	err := x.with(ctx, true, func(q Execer) error {
		for _, e := range events {
			if _, err := q.Exec(ctx, x.d.AddEvent, e.Resource, e.Type, e.At.UnixMicro(), e.Agent, e.Outcome, e.Detail,
				e.Copy, e.Algorithm, e.Digest); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("%srecord %d preservation events: %w", x.d.Prefix, len(events), err)
	}
	return nil
}

// Events implements shelfmark.PreservationEvents in one statement.
func (x *Direct) Events(ctx context.Context, resource, after int64, limit int) ([]shelfmark.PreservationEvent, error) {
	limit = min(max(limit, 1), shelfmark.MaxEventPage+1)
	var out []shelfmark.PreservationEvent
	err := x.with(ctx, false, func(q Execer) (err error) {
		out, err = Collect(ctx, q, x.d.Events, []any{resource, after, limit}, func(r Scanner) (shelfmark.PreservationEvent, error) {
			var e shelfmark.PreservationEvent
			var at int64
			err := r.Scan(&e.ID, &e.Resource, &e.Type, &at, &e.Agent, &e.Outcome, &e.Detail, &e.Copy, &e.Algorithm, &e.Digest)
			e.At = FromMicros(at)
			return e, err
		})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("%spreservation events of %d: %w", x.d.Prefix, resource, err)
	}
	return out, nil
}

// PutFixity implements shelfmark.PreservationEvents: one statement per
// state, in one transaction on SQLite (each its own on PostgreSQL).
func (x *Direct) PutFixity(ctx context.Context, states []shelfmark.FixityState) error {
	if len(states) == 0 {
		return nil
	}
	err := x.with(ctx, true, func(q Execer) error {
		for _, s := range states {
			damaged := int64(0)
			if s.Damaged {
				damaged = 1
			}
			if _, err := q.Exec(ctx, x.d.PutFixity, s.Resource, s.Copy, s.Item, s.Checked.UnixMicro(), s.Outcome, damaged, s.Detail); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("%srecord %d fixity states: %w", x.d.Prefix, len(states), err)
	}
	return nil
}

// FixityStates implements shelfmark.PreservationEvents in one statement
// over the primary key (or the partial index of failed states).
func (x *Direct) FixityStates(ctx context.Context, after shelfmark.FixityState, failed bool, limit int) ([]shelfmark.FixityState, error) {
	limit = min(max(limit, 1), shelfmark.MaxEventPage)
	stmt := x.d.FixityStates
	if failed {
		stmt = x.d.FailedStates
	}
	var out []shelfmark.FixityState
	err := x.with(ctx, false, func(q Execer) (err error) {
		out, err = Collect(ctx, q, stmt, []any{after.Resource, after.Copy, after.Item, limit}, func(r Scanner) (shelfmark.FixityState, error) {
			var s shelfmark.FixityState
			var checked, damaged int64
			err := r.Scan(&s.Resource, &s.Copy, &s.Item, &checked, &s.Outcome, &damaged, &s.Detail)
			s.Checked, s.Damaged = FromMicros(checked), damaged != 0
			return s, err
		})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("%sfixity states: %w", x.d.Prefix, err)
	}
	return out, nil
}

// DamagedFiles implements shelfmark.PreservationEvents in one statement.
func (x *Direct) DamagedFiles(ctx context.Context, keys []int64) (map[int64]bool, error) {
	out := map[int64]bool{}
	if len(keys) == 0 {
		return out, nil
	}
	err := x.with(ctx, false, func(q Execer) error {
		return q.EachRow(ctx, x.d.DamagedFiles, []any{x.d.Int64s(keys)}, func(r Scanner) error {
			var k int64
			err := r.Scan(&k)
			out[k] = true
			return err
		})
	})
	if err != nil {
		return nil, fmt.Errorf("%sdamaged files: %w", x.d.Prefix, err)
	}
	return out, nil
}

// CountDamaged implements shelfmark.PreservationEvents in one statement.
func (x *Direct) CountDamaged(ctx context.Context) (int64, error) {
	var n int64
	err := x.with(ctx, false, func(q Execer) error {
		return Row(ctx, q, x.d.CountDamaged, nil, &n)
	})
	if err != nil {
		return 0, fmt.Errorf("%scount damaged files: %w", x.d.Prefix, err)
	}
	return n, nil
}

// FixityPass implements shelfmark.PreservationEvents in one statement.
func (x *Direct) FixityPass(ctx context.Context) (shelfmark.FixityPass, error) {
	var p shelfmark.FixityPass
	err := x.with(ctx, false, func(q Execer) error {
		return q.EachRow(ctx, x.d.FixityPass, nil, func(r Scanner) error {
			var started, finished int64
			err := r.Scan(&started, &finished, &p.Cursor, &p.Files, &p.Bytes, &p.Damaged, &p.Repaired)
			if started != 0 {
				p.Started = FromMicros(started)
			}
			if finished != 0 {
				p.Finished = FromMicros(finished)
			}
			return err
		})
	})
	if err != nil {
		return p, fmt.Errorf("%sfixity pass: %w", x.d.Prefix, err)
	}
	return p, nil
}

// SaveFixityPass implements shelfmark.PreservationEvents in one statement.
func (x *Direct) SaveFixityPass(ctx context.Context, p shelfmark.FixityPass) error {
	err := x.with(ctx, true, func(q Execer) error {
		_, err := q.Exec(ctx, x.d.SaveFixityPass, micros(p.Started), micros(p.Finished), p.Cursor, p.Files, p.Bytes, p.Damaged, p.Repaired)
		return err
	})
	if err != nil {
		return fmt.Errorf("%ssave the fixity pass: %w", x.d.Prefix, err)
	}
	return nil
}

// OriginalFiles implements shelfmark.PreservationEvents in one statement.
func (x *Direct) OriginalFiles(ctx context.Context, after int64, limit int) ([]shelfmark.StoredFile, error) {
	limit = min(max(limit, 1), shelfmark.MaxEventPage)
	var out []shelfmark.StoredFile
	err := x.with(ctx, false, func(q Execer) (err error) {
		out, err = Collect(ctx, q, x.d.OriginalFiles, []any{after, limit}, func(r Scanner) (shelfmark.StoredFile, error) {
			var f shelfmark.StoredFile
			var parent *int64
			err := r.Scan(&f.Key, &parent, &f.SHA256, &f.SHA512, &f.Size)
			if parent != nil {
				f.FileSet = *parent
			}
			return f, err
		})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("%soriginal files: %w", x.d.Prefix, err)
	}
	return out, nil
}
