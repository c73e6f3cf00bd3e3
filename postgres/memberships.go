package postgres

import (
	"context"
	"fmt"

	"github.com/shelfmark/shelfmark"
)

func membershipArrays(ms []shelfmark.Membership) (collections, members []int64) {
	collections, members = make([]int64, len(ms)), make([]int64, len(ms))
	for i, m := range ms {
		collections[i], members[i] = m.Collection, m.Member
	}
	return collections, members
}

// membershipColumns are the columns of memberships, for COPY.
var membershipColumns = []string{"collection", "member"}

// InsertMemberships adds edges in one statement; existing edges (and
// repeats within ms) are left as they are. Many edges are first tried
// with COPY inside a savepoint; if one of them exists already (or repeats),
// the COPY is undone and the INSERT … ON CONFLICT DO NOTHING runs.
func (t *writeTx) InsertMemberships(ctx context.Context, ms []shelfmark.Membership) error {
	if len(ms) == 0 {
		return nil
	}
	if t.copyInSavepoint(len(ms)) {
		conflict, err := t.r.copyNew(ctx, "memberships", membershipColumns, len(ms), func(i int) []any {
			return []any{ms[i].Collection, ms[i].Member}
		})
		if err != nil {
			return fmt.Errorf("postgres: insert %d memberships: %w", len(ms), err)
		}
		if !conflict {
			return nil
		}
	}
	cs, mems := membershipArrays(ms)
	if _, err := t.r.exec(ctx, `INSERT INTO memberships (collection, member)
SELECT * FROM unnest($1::bigint[], $2::bigint[]) ON CONFLICT DO NOTHING`, cs, mems); err != nil {
		return fmt.Errorf("postgres: insert %d memberships: %w", len(ms), err)
	}
	return nil
}

// DeleteMemberships removes edges in one statement.
func (t *writeTx) DeleteMemberships(ctx context.Context, ms []shelfmark.Membership) error {
	if len(ms) == 0 {
		return nil
	}
	cs, mems := membershipArrays(ms)
	if _, err := t.r.exec(ctx, `DELETE FROM memberships m USING unnest($1::bigint[], $2::bigint[]) AS d(collection, member)
WHERE m.collection = d.collection AND m.member = d.member`, cs, mems); err != nil {
		return fmt.Errorf("postgres: delete %d memberships: %w", len(ms), err)
	}
	return nil
}
