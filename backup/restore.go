package backup

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/blob"
	"github.com/shelfmark/shelfmark/internal/iox"
	"github.com/shelfmark/shelfmark/ocfl"
)

// RestoreOptions configure Restore.
type RestoreOptions struct {
	// Dir is the backup to restore (backups/<time>); empty: the newest
	// whole one.
	Dir string
	// Force restores into a data directory that is not empty.
	Force bool
	// Progress, when set, is told of each phase's progress.
	Progress func(Progress)
}

// Restore writes the backup of the destination from into the data
// directory data, laid out as shelfmark serve --data expects it: the
// database as data/shelfmark.db (SQLite backups), the blobs in a local
// content store data/blobs, the preservation copy as data/ocfl. Every
// file is verified against its digest as it is copied; the database is
// written last, so a restore that stops part way leaves no repository
// that looks whole. A backup without a whole manifest is refused
// (ErrNotWhole), and so is a data directory that is not empty unless
// opts.Force. It returns the manifest of the backup restored. Cost: one
// read of every file of the backup.
func Restore(ctx context.Context, from ocfl.FS, data string, opts RestoreOptions) (string, *Manifest, error) {
	if opts.Progress == nil {
		opts.Progress = func(Progress) {}
	}
	dir, m := opts.Dir, (*Manifest)(nil)
	var err error
	if dir == "" {
		dir, m, err = Latest(ctx, from)
	} else {
		m, err = ReadManifest(ctx, from, dir)
	}
	if err != nil {
		return dir, nil, err
	}
	if err := checkEmpty(data, opts.Force); err != nil {
		return dir, m, err
	}
	shas, err := readListing(ctx, from, dir, m.Blobs)
	if err != nil {
		return dir, m, err
	}
	ocflLines, err := readListing(ctx, from, dir, m.OCFL)
	if err != nil {
		return dir, m, err
	}
	p := newPool(from)
	if err := restoreBlobs(ctx, p, filepath.Join(data, "blobs"), shas, opts); err != nil {
		return dir, m, err
	}
	if len(ocflLines) > 0 {
		if err := restoreOCFL(ctx, p, filepath.Join(data, "ocfl"), ocflLines, opts); err != nil {
			return dir, m, err
		}
	}
	if m.Database.File != "" {
		if err := restoreDB(ctx, from, path.Join(dir, m.Database.File), m.Database, filepath.Join(data, "shelfmark.db")); err != nil {
			return dir, m, err
		}
	}
	return dir, m, nil
}

// checkEmpty refuses a data directory with anything in it, unless force.
func checkEmpty(data string, force bool) error {
	entries, err := os.ReadDir(data)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("restore into %s: %w", data, err)
	}
	if len(entries) > 0 && !force {
		return fmt.Errorf("restore into %s: the directory is not empty (give --force to restore over what is there)", data)
	}
	return nil
}

// restoreBlobs puts every blob of shas into the local content store dir,
// each verified against its SHA-256 by the store, and syncs them once.
func restoreBlobs(ctx context.Context, p *pool, dir string, shas []string, opts RestoreOptions) error {
	store, err := blob.NewLocal(dir)
	if err != nil {
		return fmt.Errorf("restore the content store: %w", err)
	}
	defer store.Close()
	for i, sha := range shas {
		if !validDigest(algSHA256, sha) {
			return fmt.Errorf("restore: the blob list names %.80q, not a SHA-256", sha)
		}
		want, _ := hex.DecodeString(sha)
		v, c, err := p.open(ctx, algSHA256, sha)
		if err != nil {
			return fmt.Errorf("restore: %w", err)
		}
		_, err = store.Put(ctx, v, shelfmark.PutOptions{Expect: []shelfmark.Digest{{Algorithm: shelfmark.SHA256, Value: want}}, Deferred: true})
		c.Close()
		if err != nil {
			return fmt.Errorf("restore blob %s: %w", sha, err)
		}
		if (i+1)%256 == 0 || i+1 == len(shas) {
			opts.Progress(Progress{Phase: "blobs", Done: int64(i + 1), Total: int64(len(shas)), Copied: int64(i + 1)})
		}
	}
	if err := store.Sync(ctx); err != nil {
		return fmt.Errorf("restore: sync the content store: %w", err)
	}
	return nil
}

// restoreOCFL writes every file of the listing into the storage root dir.
func restoreOCFL(ctx context.Context, p *pool, dir string, lines []string, opts RestoreOptions) error {
	fsys, err := ocfl.NewDirFS(dir)
	if err != nil {
		return fmt.Errorf("restore the preservation copy: %w", err)
	}
	for i, l := range lines {
		d, name, ok := strings.Cut(l, " ")
		if !ok || !validDigest(algSHA512, d) || !fs.ValidPath(name) {
			return fmt.Errorf("restore: the preservation copy's listing has a bad line %.200q", l)
		}
		v, c, err := p.open(ctx, algSHA512, d)
		if err != nil {
			return fmt.Errorf("restore %s: %w", name, err)
		}
		err = fsys.Write(ctx, name, v, false)
		c.Close()
		if err == nil && !v.checked {
			err = errors.New("not read to its end")
		}
		if err != nil {
			return fmt.Errorf("restore %s: %w", name, err)
		}
		if (i+1)%256 == 0 || i+1 == len(lines) {
			opts.Progress(Progress{Phase: "ocfl", Done: int64(i + 1), Total: int64(len(lines)), Copied: int64(i + 1)})
		}
	}
	return nil
}

// restoreDB copies the database snapshot name to the file dst, verified
// against its SHA-256 and synced before it is renamed into place.
func restoreDB(ctx context.Context, from ocfl.FS, name string, db Database, dst string) error {
	if !validDigest(algSHA256, db.SHA256) {
		return fmt.Errorf("restore: the manifest gives the database no SHA-256")
	}
	rc, err := from.Open(ctx, name)
	if err != nil {
		return fmt.Errorf("restore the database: %w", err)
	}
	defer rc.Close()
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return fmt.Errorf("restore the database: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(dst), ".restore-*.db")
	if err != nil {
		return fmt.Errorf("restore the database: %w", err)
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	v := newVerifier(rc, algSHA256, db.SHA256)
	if _, err := iox.Copy(ctx, tmp, v); err != nil {
		return fmt.Errorf("restore the database: %w", err)
	}
	if v.n != db.Size {
		return fmt.Errorf("restore the database: %d bytes, the manifest says %d", v.n, db.Size)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("restore the database: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("restore the database: %w", err)
	}
	for _, side := range []string{"-wal", "-shm", "-journal"} {
		if err := os.Remove(dst + side); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("restore the database: %w", err)
		}
	}
	if err := os.Rename(tmp.Name(), dst); err != nil {
		return fmt.Errorf("restore the database: %w", err)
	}
	d, err := os.Open(filepath.Dir(dst))
	if err != nil {
		return fmt.Errorf("restore the database: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("restore the database: %w", err)
	}
	return nil
}
