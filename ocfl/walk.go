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
	return r.walkTuples(ctx, ".", 0, func(p string) error {
		data, err := ReadFile(ctx, r.fsys, path.Join(p, "inventory.json"), MaxInventorySize)
		if errors.Is(err, fs.ErrNotExist) {
			return nil // an object whose first version was never committed
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
		return fn(id, err)
	})
}

// RecoverAll applies to every object root in the storage root the recovery
// Open does to one (see the package documentation), under each object's
// lock: it removes what crashed writers left, including the roots of new
// objects whose first version never committed, which no later Open of
// their id may come to clean. fn is told of each object root it could not
// recover, and decides whether to go on (return nil) or stop. Run it at
// start-up, before validating a whole storage root. Cost: one listing per
// tuple directory and, per object, a listing of its root and one read of
// its root inventory.
func (r *Root) RecoverAll(ctx context.Context, fn func(dir string, err error) error) error {
	return r.walkTuples(ctx, ".", 0, func(p string) error {
		unlock, err := r.lock(ctx, p)
		if err != nil {
			return err
		}
		_, err = r.recover(ctx, p)
		unlock()
		if err != nil {
			return fn(p, err)
		}
		return nil
	})
}

// walkTuples calls fn with every directory at the object depth of the 0004
// layout (three tuple directories down), in path order.
func (r *Root) walkTuples(ctx context.Context, dir string, depth int, fn func(objectRoot string) error) error {
	entries, err := r.fsys.ReadDir(ctx, dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, e := range entries {
		if !e.Dir || depth < 3 && len(e.Name) != 3 || depth == 3 && len(e.Name) != 64 {
			continue
		}
		p := path.Join(dir, e.Name)
		if depth < 3 {
			if err := r.walkTuples(ctx, p, depth+1, fn); err != nil {
				return err
			}
			continue
		}
		if err := fn(p); err != nil {
			return err
		}
	}
	return nil
}
