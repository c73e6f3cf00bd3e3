package ocfl

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
)

// Objects calls fn for every object in the storage root, in path order
// (which is the order of the sha256 of the ids, not of the ids): with the
// object's id, or with an error for an object root whose inventory cannot
// be read (then id is ""); fn decides whether to go on (return nil) or stop
// (its error is returned). Objects being written at the same time may or
// may not be seen. A rebuild walks the root with it and opens each object.
// Cost: one listing per tuple directory and one read of each root
// inventory.
func (r *Root) Objects(ctx context.Context, fn func(id string, err error) error) error {
	return r.walkTuples(ctx, ".", 0, fn)
}

func (r *Root) walkTuples(ctx context.Context, dir string, depth int, fn func(string, error) error) error {
	entries, err := r.fsys.ReadDir(ctx, dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, e := range entries {
		if !e.Dir || depth == 0 && (e.Name == "extensions" || len(e.Name) != 3) {
			continue
		}
		p := path.Join(dir, e.Name)
		if depth < 3 {
			if err := r.walkTuples(ctx, p, depth+1, fn); err != nil {
				return err
			}
			continue
		}
		data, err := readFile(ctx, r.fsys, path.Join(p, "inventory.json"), MaxInventorySize)
		if errors.Is(err, fs.ErrNotExist) {
			continue // an object whose first version was never committed
		}
		var id string
		if err == nil {
			rep := &Report{}
			inv := checkInventory(data, path.Join(p, "inventory.json"), rep)
			if err = rep.Err(); err == nil {
				id = inv.ID
			}
		}
		if err != nil {
			err = fmt.Errorf("ocfl: object root %s: %w", p, err)
		}
		if err := fn(id, err); err != nil {
			return err
		}
	}
	return nil
}
