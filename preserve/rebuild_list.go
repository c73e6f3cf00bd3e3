package preserve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"sync"

	"github.com/shelfmark/shelfmark/ocfl"
)

// errNoObject is the error of an object root whose first version never
// committed (no inventory): not an object, as ocfl.Root.Objects has it.
var errNoObject = errors.New("no object")

// objectDirs calls fn with the root directory of every object in the
// storage root, in path order: the directories of the 0004 layout
// (ocfl.ObjectPath), three tuple directories of three characters and then
// the object's own of sixty-four, read by listings alone. The ids are
// read from the inventories afterwards, many at once (objectIDs), where
// ocfl.Root.Objects reads them one after the other: the listing is then
// no longer what a rebuild waits for. Cost: one listing per directory.
func objectDirs(ctx context.Context, fsys ocfl.FS, dir string, depth int, fn func(dir string) error) error {
	entries, err := fsys.ReadDir(ctx, dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("list %s: %w", dir, err)
	}
	for _, e := range entries {
		if !e.Dir || depth < 3 && len(e.Name) != 3 || depth == 3 && len(e.Name) != 64 {
			continue
		}
		p := path.Join(dir, e.Name)
		if depth < 3 {
			err = objectDirs(ctx, fsys, p, depth+1, fn)
		} else {
			err = fn(p)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// objectID reads the id of the object whose root is dir from its
// inventory (checked in full when the object is opened): errNoObject when
// it has none.
func objectID(ctx context.Context, fsys ocfl.FS, dir string) (string, error) {
	rc, err := fsys.Open(ctx, path.Join(dir, "inventory.json"))
	if errors.Is(err, fs.ErrNotExist) {
		return "", errNoObject
	}
	if err != nil {
		return "", fmt.Errorf("object root %s: %w", dir, err)
	}
	defer rc.Close()
	id, err := topLevelString(json.NewDecoder(io.LimitReader(rc, ocfl.MaxInventorySize)), "id")
	if err != nil || id == "" {
		return "", fmt.Errorf("object root %s: its inventory names no id (%v)", dir, err)
	}
	if ocfl.ObjectPath(id) != dir {
		return "", fmt.Errorf("object root %s: its inventory is of %q, whose root is %s", dir, id, ocfl.ObjectPath(id))
	}
	return id, nil
}

// topLevelString reads the JSON object of dec up to its member key, a
// string, and returns it: an inventory names its id first, so the rest
// (the manifest and the versions, the bulk of it) is not parsed.
func topLevelString(dec *json.Decoder, key string) (string, error) {
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return "", fmt.Errorf("not a JSON object (%v)", err)
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return "", err
		}
		if name, _ := t.(string); name == key {
			var v string
			err := dec.Decode(&v)
			return v, err
		}
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return "", err
		}
	}
	return "", fmt.Errorf("no member %q", key)
}

// parallel runs fn(i) for i in [0, n), at most workers at once.
func parallel(n, workers int, fn func(i int)) {
	var wg sync.WaitGroup
	next := make(chan int)
	for range min(workers, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				fn(i)
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
}
