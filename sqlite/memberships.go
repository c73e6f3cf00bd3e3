package sqlite

import (
	"context"

	"github.com/shelfmark/shelfmark"
)

// InsertMemberships adds edges, leaving existing ones.
func (t *writeTx) InsertMemberships(ctx context.Context, ms []shelfmark.Membership) error {
	return chunked(len(ms), func(lo, hi int) error {
		args := make([]any, 0, (hi-lo)*2)
		for _, m := range ms[lo:hi] {
			args = append(args, m.Collection, m.Member)
		}
		_, err := t.exec(ctx, `INSERT INTO memberships (collection, member) VALUES `+placeholders(hi-lo, 2)+` ON CONFLICT DO NOTHING`, args...)
		return err
	})
}

// DeleteMemberships removes edges.
func (t *writeTx) DeleteMemberships(ctx context.Context, ms []shelfmark.Membership) error {
	for _, m := range ms {
		if _, err := t.exec(ctx, `DELETE FROM memberships WHERE collection = ? AND member = ?`, m.Collection, m.Member); err != nil {
			return err
		}
	}
	return nil
}
