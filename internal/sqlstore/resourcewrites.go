package sqlstore

import (
	"context"
	"fmt"
	"strings"

	"github.com/shelfmark/shelfmark"
)

// ResourceWrites is a dialect's statements of the resource writes of
// WriteTx. Their arguments are those named, in that order.
type ResourceWrites struct {
	// UpdateResource writes a row's mutable fields: key, visibility,
	// embargo, lease, version, seq, modified, deleted, eff_visibility,
	// eff_embargo, eff_lease.
	UpdateResource string
	// AccessDependents reads the ResourceCols of the live children of a
	// list of keys and of the live files made from them: keys.
	AccessDependents string
	DeleteGrants     string // resource
	// AllocateKeys adds n to the key counter and returns its new value: n.
	AllocateKeys string
}

// resourceCols are the columns of ResourceCols as a bulk write sends them.
var resourceCols = []Col{{"key", Int64}, {"kind", Text}, {"visibility", Text}, {"embargo", NullInt64}, {"lease", NullInt64},
	{"parent", NullInt64}, {"position", NullInt64}, {"version", Int64}, {"seq", Int64}, {"created", Int64},
	{"modified", Int64}, {"deleted", NullInt64}, {"source", NullInt64}, {"eff_visibility", Text},
	{"eff_embargo", NullInt64}, {"eff_lease", NullInt64}}

// InsertResources inserts rows in one bulk write; a row whose key exists
// fails it.
func (w *WriteTx) InsertResources(ctx context.Context, rows []*shelfmark.ResourceRow) error {
	return w.insert(ctx, "insert %d resources", "resources", Rows{Cols: resourceCols, N: len(rows), Row: func(i int, v []any) {
		r := rows[i]
		v[0], v[1], v[2], v[3], v[4] = r.Key, string(r.Kind), string(r.Visibility), NullMicros(r.Embargo), NullMicros(r.Lease)
		v[5], v[6], v[7], v[8], v[9] = NullZero(r.Parent), NullZero(r.Position), r.Version, r.Seq, r.Created.UnixMicro()
		v[10], v[11], v[12], v[13] = r.Modified.UnixMicro(), NullMicros(r.Deleted), NullZero(r.Source), string(r.Effective.Visibility)
		v[14], v[15] = NullMicros(r.Effective.Embargo), NullMicros(r.Effective.Lease)
	}}, "")
}

// UpdateResource writes every field of row except Key, Kind, Parent,
// Position, Created and Source, in one statement. A missing row is an
// ENOTFOUND error.
func (w *WriteTx) UpdateResource(ctx context.Context, r *shelfmark.ResourceRow) error {
	n, err := w.q.Exec(ctx, w.d.UpdateResource, r.Key, string(r.Visibility), NullMicros(r.Embargo), NullMicros(r.Lease),
		r.Version, r.Seq, r.Modified.UnixMicro(), NullMicros(r.Deleted),
		string(r.Effective.Visibility), NullMicros(r.Effective.Embargo), NullMicros(r.Effective.Lease))
	if err != nil {
		return fmt.Errorf("%supdate resource %d: %w", w.d.Prefix, r.Key, err)
	}
	if n == 0 {
		return shelfmark.Errorf(shelfmark.ENOTFOUND, "No resource has the key %d.", r.Key)
	}
	return nil
}

// SetEffectiveAccess writes the effective access and seq of rows in one
// statement whatever their number.
func (w *WriteTx) SetEffectiveAccess(ctx context.Context, rows []*shelfmark.ResourceRow) error {
	if len(rows) == 0 {
		return nil
	}
	_, err := w.execFrom(ctx, Rows{
		Cols: []Col{{"key", Int64}, {"vis", Text}, {"emb", NullInt64}, {"lease", NullInt64}, {"seq", Int64}},
		N:    len(rows),
		Row: func(i int, v []any) {
			r := rows[i]
			v[0], v[1], v[2], v[3], v[4] = r.Key, string(r.Effective.Visibility), NullMicros(r.Effective.Embargo), NullMicros(r.Effective.Lease), r.Seq
		},
	}, func(v string) string {
		return `UPDATE resources SET eff_visibility = v.vis, eff_embargo = v.emb, eff_lease = v.lease, seq = v.seq
FROM ` + v + ` WHERE resources.key = v.key`
	})
	if err != nil {
		return fmt.Errorf("%seffective access of %d resources: %w", w.d.Prefix, len(rows), err)
	}
	return nil
}

// SetOwnAccess writes the own and effective access, version, seq and
// modified time of rows in one statement whatever their number.
func (w *WriteTx) SetOwnAccess(ctx context.Context, rows []*shelfmark.ResourceRow) error {
	if len(rows) == 0 {
		return nil
	}
	_, err := w.execFrom(ctx, Rows{
		Cols: []Col{{"key", Int64}, {"own", Text}, {"oemb", NullInt64}, {"olease", NullInt64},
			{"vis", Text}, {"emb", NullInt64}, {"lease", NullInt64}, {"version", Int64}, {"seq", Int64}, {"modified", Int64}},
		N: len(rows),
		Row: func(i int, v []any) {
			r := rows[i]
			v[0], v[1], v[2], v[3] = r.Key, string(r.Visibility), NullMicros(r.Embargo), NullMicros(r.Lease)
			v[4], v[5], v[6] = string(r.Effective.Visibility), NullMicros(r.Effective.Embargo), NullMicros(r.Effective.Lease)
			v[7], v[8], v[9] = r.Version, r.Seq, r.Modified.UnixMicro()
		},
	}, func(v string) string {
		return `UPDATE resources SET visibility = v.own, embargo = v.oemb, lease = v.olease,
    eff_visibility = v.vis, eff_embargo = v.emb, eff_lease = v.lease, version = v.version, seq = v.seq, modified = v.modified
FROM ` + v + ` WHERE resources.key = v.key`
	})
	if err != nil {
		return fmt.Errorf("%saccess of %d resources: %w", w.d.Prefix, len(rows), err)
	}
	return nil
}

// SetVersions writes the version, seq and modified time of rows in one
// statement whatever their number.
func (w *WriteTx) SetVersions(ctx context.Context, rows []*shelfmark.ResourceRow) error {
	if len(rows) == 0 {
		return nil
	}
	_, err := w.execFrom(ctx, Rows{
		Cols: []Col{{"key", Int64}, {"version", Int64}, {"seq", Int64}, {"modified", Int64}},
		N:    len(rows),
		Row: func(i int, v []any) {
			r := rows[i]
			v[0], v[1], v[2], v[3] = r.Key, r.Version, r.Seq, r.Modified.UnixMicro()
		},
	}, func(v string) string {
		return `UPDATE resources SET version = v.version, seq = v.seq, modified = v.modified
FROM ` + v + ` WHERE resources.key = v.key`
	})
	if err != nil {
		return fmt.Errorf("%sversions of %d resources: %w", w.d.Prefix, len(rows), err)
	}
	return nil
}

// AccessDependents returns the live children of keys and the live files
// made from them, in one statement (resources_children, resources_source).
func (t *Tx) AccessDependents(ctx context.Context, keys []int64) ([]*shelfmark.ResourceRow, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	rows, err := Collect(ctx, t.q, t.d.AccessDependents, []any{t.d.Int64s(keys)}, t.d.ResourceScanner())
	if err != nil {
		return nil, fmt.Errorf("%swhat depends on the access of %d resources: %w", t.d.Prefix, len(keys), err)
	}
	return rows, nil
}

// membershipCols are the columns of memberships.
var membershipCols = []Col{{"collection", Int64}, {"member", Int64}}

// membershipRows are ms as rows of membershipCols.
func membershipRows(ms []shelfmark.Membership) Rows {
	return Rows{Cols: membershipCols, N: len(ms), Row: func(i int, v []any) { v[0], v[1] = ms[i].Collection, ms[i].Member }}
}

// InsertMemberships adds edges in one bulk write; existing edges (and
// repeats within ms) are left as they are.
func (w *WriteTx) InsertMemberships(ctx context.Context, ms []shelfmark.Membership) error {
	return w.insert(ctx, "insert %d memberships", "memberships", membershipRows(ms), "ON CONFLICT DO NOTHING")
}

// DeleteMemberships removes edges in one statement.
func (w *WriteTx) DeleteMemberships(ctx context.Context, ms []shelfmark.Membership) error {
	if len(ms) == 0 {
		return nil
	}
	if _, err := w.execFrom(ctx, membershipRows(ms), func(v string) string {
		return `DELETE FROM memberships WHERE (collection, member) IN (SELECT collection, member FROM ` + v + `)`
	}); err != nil {
		return fmt.Errorf("%sdelete %d memberships: %w", w.d.Prefix, len(ms), err)
	}
	return nil
}

// InsertSources records ingested source keys (sourceKeys[i] made keys[i])
// in one bulk write. A source key recorded already fails it.
func (w *WriteTx) InsertSources(ctx context.Context, sourceKeys []string, keys []int64) error {
	if len(keys) != len(sourceKeys) {
		return fmt.Errorf("%sinsert source keys: %d keys for %d source keys", w.d.Prefix, len(keys), len(sourceKeys))
	}
	return w.insert(ctx, "insert %d source keys", "sources", Rows{Cols: []Col{{"source_key", Text}, {"resource", Int64}}, N: len(keys),
		Row: func(i int, v []any) { v[0], v[1] = sourceKeys[i], keys[i] }}, "")
}

// SetGrants replaces the grants on resource (each grant's own Resource is
// ignored): one statement to clear them, one bulk write to add.
func (w *WriteTx) SetGrants(ctx context.Context, resource int64, grants []shelfmark.Grant) error {
	if _, err := w.q.Exec(ctx, w.d.DeleteGrants, resource); err != nil {
		return fmt.Errorf("%sclear grants on %d: %w", w.d.Prefix, resource, err)
	}
	return w.insert(ctx, "set %d grants", "grants", Rows{Cols: []Col{{"resource", Int64}, {"principal", Text}, {"role", Text}, {"expires", NullInt64}}, N: len(grants),
		Row: func(i int, v []any) {
			v[0], v[1], v[2], v[3] = resource, grants[i].Principal, string(grants[i].Role), NullMicros(grants[i].Expires)
		}}, "ON CONFLICT DO NOTHING")
}

// auditCols are the columns of audit that InsertAudit writes.
var auditCols = []Col{{"at", Int64}, {"actor", Text}, {"user_key", Int64}, {"token", Int64}, {"action", Text},
	{"resource", Int64}, {"predicates", Text}, {"outcome", Text}, {"detail", Text}, {"request", Text}}

// InsertAudit appends entries to the audit trail in one bulk write.
func (w *WriteTx) InsertAudit(ctx context.Context, entries []*shelfmark.AuditEntry) error {
	return w.insert(ctx, "append %d audit entries", "audit", Rows{Cols: auditCols, N: len(entries), Row: func(i int, v []any) {
		e := entries[i]
		v[0], v[1], v[2], v[3], v[4] = e.At.UnixMicro(), e.Actor, e.User, e.Token, e.Action
		v[5], v[6], v[7], v[8], v[9] = e.Resource, strings.Join(e.Predicates, "\n"), e.Outcome, e.Detail, e.Request
	}}, "")
}
