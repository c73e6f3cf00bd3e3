package ingest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/rdf"
)

// Sidecar metadata files of a directory tree.
const (
	sidecarJSON = "metadata.json"
	sidecarTTL  = "metadata.ttl"
	// itemBase is the base IRI of a metadata.ttl; <> resolves to it.
	itemBase = "urn:shelfmark:item"
	// maxSidecar bounds the size of a sidecar read into memory.
	maxSidecar = 16 << 20
)

// dirSource walks a directory tree depth first, one listing at a time.
type dirSource struct {
	root   string
	stack  []string // slash paths relative to root, next to visit last
	closed bool
}

// OpenDir reads a directory tree in which every folder holding files is a
// work (see the package documentation).
func OpenDir(root string) (Source, error) {
	real, err := resolveRoot(root)
	if err != nil {
		return nil, fmt.Errorf("ingest: open directory: %w", err)
	}
	return &dirSource{root: real, stack: []string{"."}}, nil
}

// Next implements Source.
func (s *dirSource) Next(ctx context.Context) (*Item, error) {
	for {
		if s.closed {
			return nil, errClosed
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if len(s.stack) == 0 {
			return nil, io.EOF
		}
		rel := s.stack[len(s.stack)-1]
		s.stack = s.stack[:len(s.stack)-1]
		item, err := s.visit(rel)
		if item != nil || err != nil {
			return item, err
		}
	}
}

// visit lists one folder, queues its subfolders and returns its work, or
// nil when it holds no files.
func (s *dirSource) visit(rel string) (*Item, error) {
	abs := filepath.Join(s.root, filepath.FromSlash(rel))
	key := "dir:" + filepath.ToSlash(abs) // of a bad folder; a work's key adds its fingerprint
	entries, err := os.ReadDir(abs)
	if err != nil {
		return nil, &ItemError{Key: key, Path: rel, Reason: fmt.Sprintf("cannot list folder %s: %v", rel, err), Err: err}
	}
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return NaturalCompare(a.Name(), b.Name()) })
	var subdirs []string
	var files []FileRef
	var sidecars []string
	var bad *ItemError
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") {
			continue
		}
		erel := path.Join(rel, name)
		if e.IsDir() {
			subdirs = append(subdirs, erel)
			continue
		}
		if bad != nil {
			continue // keep queueing subfolders only
		}
		p := filepath.Join(abs, name)
		var cf checkedFile
		if e.Type().IsRegular() {
			fi, err := e.Info()
			if err != nil {
				bad = &ItemError{Key: key, Path: erel, Reason: fmt.Sprintf("file %s cannot be read: %v", erel, err), Err: err}
				continue
			}
			cf = checkedFile{path: p, size: fi.Size()}
		} else {
			if e.Type()&fs.ModeSymlink != 0 {
				if real, err := filepath.EvalSymlinks(p); err == nil && within(s.root, real) {
					if fi, err := os.Stat(real); err == nil && fi.IsDir() {
						continue // links to folders inside the root are not followed
					}
				}
			}
			var reason string
			cf, reason, err = checkFile(s.root, p, erel)
			if reason != "" {
				bad = &ItemError{Key: key, Path: erel, Reason: reason, Err: err}
				continue
			}
		}
		if name == sidecarJSON || name == sidecarTTL {
			sidecars = append(sidecars, cf.path)
			continue
		}
		files = append(files, FileRef{Path: cf.path, Name: name, Size: cf.size, MediaType: mediaType(name)})
	}
	for i := len(subdirs) - 1; i >= 0; i-- {
		s.stack = append(s.stack, subdirs[i])
	}
	if bad != nil {
		return nil, bad
	}
	if len(files) == 0 && len(sidecars) == 0 {
		return nil, nil
	}
	item := &Item{Key: dirKey(abs, files), FormerKey: "dir:" + rel, Files: files}
	switch len(sidecars) {
	case 0:
		title := path.Base(rel)
		if rel == "." {
			title = filepath.Base(s.root)
		}
		item.Metadata = []shelfmark.Statement{{Predicate: dcTitle, Object: shelfmark.NewLiteral(title)}}
	case 1:
		md, reason, err := readSidecar(sidecars[0])
		if reason != "" {
			return nil, &ItemError{Key: key, Path: path.Join(rel, filepath.Base(sidecars[0])), Reason: reason, Err: err}
		}
		item.Metadata = md
	default:
		return nil, &ItemError{Key: key, Path: rel, Reason: fmt.Sprintf("folder %s has both %s and %s; keep one", rel, sidecarJSON, sidecarTTL)}
	}
	return item, nil
}

// dirKey is the source key of the folder at abs (absolute, symbolic links
// resolved) holding files: "dir:" + its path + "#" + a fingerprint of its
// files' names and sizes, in order. The path tells apart folders with the
// same name or the same place below different roots; the fingerprint tells
// apart what one path held at different times. Neither reads a file's
// bytes, so a re-run skips a stored folder at the cost of a listing. The
// sidecar is left out: mending its metadata does not make the folder new.
func dirKey(abs string, files []FileRef) string {
	fp := newFingerprint("dir")
	fp.num(int64(len(files)))
	for _, f := range files {
		fp.str(f.Name)
		fp.num(f.Size)
	}
	return "dir:" + filepath.ToSlash(abs) + "#" + fp.sum()
}

// readSidecar reads a metadata.json or metadata.ttl.
func readSidecar(p string) ([]shelfmark.Statement, string, error) {
	name := filepath.Base(p)
	f, err := os.Open(p)
	if err != nil {
		return nil, fmt.Sprintf("%s cannot be read: %v", name, err), err
	}
	defer f.Close()
	raw, err := io.ReadAll(io.LimitReader(f, maxSidecar+1))
	if err != nil {
		return nil, fmt.Sprintf("%s cannot be read: %v", name, err), err
	}
	if len(raw) > maxSidecar {
		return nil, fmt.Sprintf("%s is larger than %d bytes", name, maxSidecar), nil
	}
	if name == sidecarJSON {
		md, err := rdf.ParseJSONMetadata(raw)
		if err != nil {
			return nil, fmt.Sprintf("%s: %s", name, errorText(err)), err
		}
		return shelfmark.DedupeStatements(md), "", nil
	}
	triples, err := rdf.Parse(bytes.NewReader(raw), rdf.Turtle, itemBase, rdf.MaxTriples(rdf.DefaultMaxTriples))
	if err != nil {
		return nil, fmt.Sprintf("%s: %s", name, errorText(err)), err
	}
	subject := shelfmark.NewIRI(itemBase)
	var md []shelfmark.Statement
	for _, t := range triples {
		if t.Subject == subject {
			md = append(md, shelfmark.Statement{Predicate: t.Predicate, Object: t.Object})
		}
	}
	return shelfmark.DedupeStatements(md), "", nil
}

// Close implements Source.
func (s *dirSource) Close() error {
	s.closed = true
	s.stack = nil
	return nil
}
