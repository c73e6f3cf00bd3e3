package sqlstore

import (
	"context"
	"fmt"

	"github.com/shelfmark/shelfmark"
)

// Fields is a dialect's statements of the field and change reads of Tx.
// Their arguments are those named, in that order; a list is one argument
// bound by Dialect.Int64s or Strings.
type Fields struct {
	Fields       string // key: predicate, objects
	FieldsOnly   string // key, predicates: predicate, objects
	FieldsOf     string // keys: resource, predicate, objects
	MemberOfMany string // keys: member, collection
	Changes      string // after, limit; ResourceCols
}

// decodeField sets f's objects from their stored form; key names the
// resource in errors.
func decodeField(key int64, f *shelfmark.Field, raw []byte) error {
	objs, err := shelfmark.DecodeObjects(raw)
	if err != nil {
		return fmt.Errorf("resource %d field %s: %w", key, f.Predicate, err)
	}
	f.Objects = objs
	return nil
}

// Fields returns key's fields sorted by predicate, optionally only those
// with the given predicates: one range of the fields primary key.
func (t *Tx) Fields(ctx context.Context, key int64, predicates ...string) ([]shelfmark.Field, error) {
	query, args := t.d.Fields.Fields, []any{key}
	if len(predicates) > 0 {
		query, args = t.d.FieldsOnly, append(args, t.d.Strings(predicates))
	}
	out, err := Collect(ctx, t.q, query, args, func(r Scanner) (shelfmark.Field, error) {
		var f shelfmark.Field
		var raw []byte
		if err := r.Scan(&f.Predicate, &raw); err != nil {
			return f, err
		}
		return f, decodeField(key, &f, raw)
	})
	if err != nil {
		return nil, fmt.Errorf("%sread fields of %d: %w", t.d.Prefix, key, err)
	}
	return out, nil
}

// FieldsOf returns the fields of each of keys, sorted by predicate, in one
// statement over the fields primary key.
func (t *Tx) FieldsOf(ctx context.Context, keys []int64) (map[int64][]shelfmark.Field, error) {
	if len(keys) == 0 {
		return map[int64][]shelfmark.Field{}, nil
	}
	// the rows come by resource: the fields are read into one list and
	// each resource's are a slice of it (capped, so that appending to one
	// never writes into the next), rather than a list of their own each
	// and a map grown as they come: a book's 1,200 pages are read with
	// their titles in three allocations, not 2,400
	all := make([]shelfmark.Field, 0, len(keys))
	var starts []int // the index in all of each resource's first field
	var owners []int64
	var key int64
	var raw []byte
	err := t.q.EachRow(ctx, t.d.FieldsOf, []any{t.d.Int64s(keys)}, func(r Scanner) error {
		var f shelfmark.Field
		if err := r.Scan(&key, &f.Predicate, &raw); err != nil {
			return err
		}
		if err := decodeField(key, &f, raw); err != nil {
			return err
		}
		if n := len(owners); n == 0 || owners[n-1] != key {
			owners, starts = append(owners, key), append(starts, len(all))
		}
		all = append(all, f)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("%sfields of %d resources: %w", t.d.Prefix, len(keys), err)
	}
	out := make(map[int64][]shelfmark.Field, len(owners))
	for i, k := range owners {
		end := len(all)
		if i+1 < len(starts) {
			end = starts[i+1]
		}
		run := all[starts[i]:end:end]
		if prev, ok := out[k]; ok { // a resource's rows are one run; were they not, still all of them
			run = append(prev, run...)
		}
		out[k] = run
	}
	return out, nil
}

// MemberOfMany returns the live collections of each of keys, ascending,
// in one statement over memberships_member.
func (t *Tx) MemberOfMany(ctx context.Context, keys []int64) (map[int64][]int64, error) {
	out := map[int64][]int64{}
	if len(keys) == 0 {
		return out, nil
	}
	err := t.q.EachRow(ctx, t.d.MemberOfMany, []any{t.d.Int64s(keys)}, func(r Scanner) error {
		var m, c int64
		err := r.Scan(&m, &c)
		out[m] = append(out[m], c)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("%scollections of %d resources: %w", t.d.Prefix, len(keys), err)
	}
	return out, nil
}

// Changes returns up to limit resources, live or tombstoned, whose seq is
// above after, by seq (then key): one range of resources_seq, the same
// cost at any depth.
func (t *Tx) Changes(ctx context.Context, after int64, limit int) ([]*shelfmark.ResourceRow, error) {
	if limit <= 0 {
		return nil, nil
	}
	out, err := t.ResourceRows(ctx, t.d.Changes, after, int64(limit))
	if err != nil {
		return nil, fmt.Errorf("%schanges after %d: %w", t.d.Prefix, after, err)
	}
	return out, nil
}
