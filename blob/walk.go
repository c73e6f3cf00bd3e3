package blob

import (
	"context"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
)

// Walk calls fn with the SHA-256 (lower-case hex) of every stored blob, the
// files first, then the small blobs of the pack database (committed ones:
// not the deferred puts of an open batch). It stops at the first error fn
// returns and returns it. Blobs stored meanwhile may or may not be visited.
func (s *LocalStore) Walk(ctx context.Context, fn func(sha256 string) error) error {
	err := filepath.WalkDir(s.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if d.IsDir() {
			if p == s.tmp {
				return filepath.SkipDir
			}
			return nil
		}
		if name := d.Name(); validSHA256(name) && p == s.path(name) {
			return fn(name)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("blob: walk: %w", err)
	}
	rows, err := s.small.r.QueryContext(ctx, `SELECT hex(sha256) FROM blobs ORDER BY sha256`)
	if err != nil {
		return fmt.Errorf("blob: walk the pack database: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var h string
		if err := rows.Scan(&h); err != nil {
			return fmt.Errorf("blob: walk the pack database: %w", err)
		}
		if err := fn(strings.ToLower(h)); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("blob: walk the pack database: %w", err)
	}
	return nil
}
