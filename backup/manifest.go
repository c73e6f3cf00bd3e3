package backup

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/shelfmark/shelfmark/ocfl"
)

// Format names the layout of a backup; Restore refuses another.
const Format = "shelfmark-backup/1"

// ManifestName is the manifest's file name in a backup's directory.
const ManifestName = "backup.json"

// maxManifest bounds the size of a manifest Restore reads.
const maxManifest = 1 << 20

// Manifest describes one whole backup. Its presence is the proof that
// everything it names was written and synced first.
type Manifest struct {
	Format   string    `json:"format"`
	Version  string    `json:"shelfmark_version"`
	Started  time.Time `json:"started"`
	Finished time.Time `json:"finished"`
	// Database is the snapshot of a SQLite database; for PostgreSQL it
	// is only the backend's name (the database is backed up with its own
	// base backup and WAL archive: see docs/backup.md).
	Database Database `json:"database"`
	// Blobs lists the content store's blobs in the backup.
	Blobs Listing `json:"blobs"`
	// OCFL lists the files of the preservation copy (Files 0 and no List
	// when the repository keeps none).
	OCFL Listing `json:"ocfl"`
	// Copied counts what this run wrote to the pool; the rest was there.
	Copied Copied `json:"copied"`
}

// Database is the database part of a manifest.
type Database struct {
	Backend string `json:"backend"`
	File    string `json:"file,omitempty"`
	Size    int64  `json:"size,omitempty"`
	SHA256  string `json:"sha256,omitempty"`
}

// Listing names a listing file of a backup with its SHA-256 and the
// number of lines (files) it holds.
type Listing struct {
	List   string `json:"list,omitempty"`
	SHA256 string `json:"sha256,omitempty"`
	Files  int64  `json:"files"`
}

// Copied counts the files one backup run wrote to the pool.
type Copied struct {
	Blobs     int64 `json:"blobs"`
	OCFLFiles int64 `json:"ocfl_files"`
	Bytes     int64 `json:"bytes"`
}

// ErrNotWhole is returned by ReadManifest (and so Restore) for a backup
// that was interrupted: it has no manifest, or one that does not parse.
var ErrNotWhole = errors.New("not a whole backup")

// backupsDir is the directory of the backups in a destination.
const backupsDir = "backups"

// ReadManifest reads the manifest of the backup directory dir of fsys.
func ReadManifest(ctx context.Context, fsys ocfl.FS, dir string) (*Manifest, error) {
	data, err := ocfl.ReadFile(ctx, fsys, path.Join(dir, ManifestName), maxManifest)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("backup %s: %w: it has no %s (the run that wrote it was interrupted)", dir, ErrNotWhole, ManifestName)
	}
	if err != nil {
		return nil, fmt.Errorf("backup %s: %w", dir, err)
	}
	var m Manifest
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("backup %s: %w: %s does not parse: %v", dir, ErrNotWhole, ManifestName, err)
	}
	if m.Format != Format {
		return nil, fmt.Errorf("backup %s: format %q, this shelfmark reads %q", dir, m.Format, Format)
	}
	if m.Finished.IsZero() || m.Database.Backend == "" {
		return nil, fmt.Errorf("backup %s: %w: the manifest is incomplete", dir, ErrNotWhole)
	}
	return &m, nil
}

// writeManifest writes m as dir/backup.json in one atomic write.
func writeManifest(ctx context.Context, fsys ocfl.FS, dir string, m *Manifest) error {
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("encode the manifest: %w", err)
	}
	if err := fsys.Write(ctx, path.Join(dir, ManifestName), bytes.NewReader(append(data, '\n')), true); err != nil {
		return fmt.Errorf("write the manifest: %w", err)
	}
	return nil
}

// Backups lists the backup directories of the destination fsys, oldest
// first (their names are their start times), whole or not.
func Backups(ctx context.Context, fsys ocfl.FS) ([]string, error) {
	entries, err := fsys.ReadDir(ctx, backupsDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list the backups: %w", err)
	}
	var out []string
	for _, e := range entries {
		if e.Dir && !strings.HasPrefix(e.Name, ".") {
			out = append(out, path.Join(backupsDir, e.Name))
		}
	}
	sort.Strings(out)
	return out, nil
}

// Latest returns the newest whole backup of the destination fsys and its
// manifest, passing over interrupted ones; no whole backup is an error
// wrapping ErrNotWhole.
func Latest(ctx context.Context, fsys ocfl.FS) (string, *Manifest, error) {
	dirs, err := Backups(ctx, fsys)
	if err != nil {
		return "", nil, err
	}
	for i := len(dirs) - 1; i >= 0; i-- {
		m, err := ReadManifest(ctx, fsys, dirs[i])
		if errors.Is(err, ErrNotWhole) {
			continue
		}
		if err != nil {
			return "", nil, err
		}
		return dirs[i], m, nil
	}
	if len(dirs) == 0 {
		return "", nil, fmt.Errorf("%w: no backup here", ErrNotWhole)
	}
	return "", nil, fmt.Errorf("%w: none of the %d backups here has a manifest (every run was interrupted)", ErrNotWhole, len(dirs))
}
