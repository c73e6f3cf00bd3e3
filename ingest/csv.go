package ingest

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/rdf"
)

// Kinds of CSV column.
const (
	colMetadata = iota
	colIgnored
	colKey
	colParent
	colFile
	colPosition
)

// csvColumn is a header cell's meaning.
type csvColumn struct {
	name string // as in the header, trimmed
	kind int
	pred string // for colMetadata
}

// csvRow is one record of the manifest.
type csvRow struct {
	n    int // row number, the header being 1
	rec  []string
	key  string
	auto bool // no source identifier: key is "csv:row-N" until the row is built
}

// csvSource reads a CSV manifest row by row.
type csvSource struct {
	path    string // the manifest's file, for Count; "" when read from a stream
	closer  io.Closer
	r       *csv.Reader
	root    string
	origin  string // stands for the manifest in the keys of rows without an identifier
	cols    []csvColumn
	keyCol  int
	row     int
	pending *csvRow
	seen    *keySet // explicit key -> first row, row key -> times seen; memory bounded
	err     error   // sticky: the stream has ended badly
	closed  bool
}

// OpenCSV reads a CSV manifest (see the package documentation). File paths
// in it are relative to the directory holding the CSV file, which is the
// input root. Rows without a source identifier are keyed with the
// manifest's absolute path as their origin.
func OpenCSV(path string) (Source, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("ingest: open CSV: %w", err)
	}
	root, err := resolveRoot(filepath.Dir(abs))
	if err != nil {
		return nil, fmt.Errorf("ingest: open CSV: %w", err)
	}
	f, err := os.Open(abs)
	if err != nil {
		return nil, fmt.Errorf("ingest: open CSV: %w", err)
	}
	s, err := newCSVSource(f, root, "file:"+filepath.ToSlash(filepath.Join(root, filepath.Base(abs))))
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("ingest: open CSV %s: %w", path, err)
	}
	s.path = abs
	return s, nil
}

// OpenCSVIn reads a CSV manifest as OpenCSV does, but with its file paths
// relative to root, which need not hold the manifest: a manifest uploaded
// apart from its files (the web interface's bulk ingest) names them inside
// a directory elsewhere. root is resolved (symbolic links included) and
// every file must stay inside it. origin stands for the manifest in the
// keys of rows without a source identifier, in place of its path: the same
// origin, row and files make the same key (see the package documentation),
// so an uploaded manifest staged at a new path each time is given an
// origin that does not depend on that path.
func OpenCSVIn(path, root, origin string) (Source, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("ingest: open CSV: %w", err)
	}
	real, err := resolveRoot(root)
	if err != nil {
		return nil, fmt.Errorf("ingest: open CSV: %w", err)
	}
	f, err := os.Open(abs)
	if err != nil {
		return nil, fmt.Errorf("ingest: open CSV: %w", err)
	}
	s, err := newCSVSource(f, real, origin)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("ingest: open CSV %s: %w", filepath.Base(path), err)
	}
	s.path = abs
	return s, nil
}

// newCSVSource reads the header of a manifest from rc; files are resolved
// against root, which must be resolved and absolute; origin stands for the
// manifest in the keys of rows without a source identifier.
func newCSVSource(rc io.ReadCloser, root, origin string) (*csvSource, error) {
	r := csv.NewReader(rc)
	r.FieldsPerRecord = -1
	header, err := r.Read()
	if err == io.EOF {
		return nil, errors.New("the manifest is empty; it needs a header row")
	}
	if err != nil {
		return nil, fmt.Errorf("header row: %w", err)
	}
	s := &csvSource{closer: rc, r: r, root: root, origin: origin, keyCol: -1, row: 1, seen: newKeySet()}
	names := make([]string, len(header))
	for i, h := range header {
		if i == 0 {
			h = strings.TrimPrefix(h, "\ufeff")
		}
		names[i] = strings.TrimSpace(h)
		if reason := checkText(names[i]); reason != "" {
			return nil, fmt.Errorf("header cell %d %s", i+1, reason)
		}
	}
	for _, k := range []string{"source_identifier", "id", "key"} {
		if i := slices.IndexFunc(names, func(n string) bool { return strings.EqualFold(n, k) }); i >= 0 {
			s.keyCol = i
			break
		}
	}
	taken := map[int]string{}
	for i, name := range names {
		c := csvColumn{name: name}
		lower := strings.ToLower(name)
		switch {
		case i == s.keyCol:
			c.kind = colKey
		case name == "":
			c.kind = colIgnored
		case lower == "parent":
			c.kind = colParent
		case lower == "file" || lower == "files":
			c.kind = colFile
		case lower == "position":
			c.kind = colPosition
		case lower == "title" || lower == "creator" || lower == "date" || lower == "subject" || lower == "description":
			c.pred = shelfmark.NSDC + lower
		default:
			c.pred = CSVColumnPredicate(name)
		}
		if c.kind == colParent || c.kind == colFile || c.kind == colPosition {
			if prev, dup := taken[c.kind]; dup {
				return nil, fmt.Errorf("the header has two %q columns (%q and %q)", lower, prev, name)
			}
			taken[c.kind] = name
		}
		s.cols = append(s.cols, c)
	}
	return s, nil
}

// CSVColumnPredicate returns the predicate of a CSV column that is not one
// of the recognised ones: a prefixed name with a known prefix is expanded, a
// full IRI (http:, https: or urn:) is kept, and any other name becomes
// "urn:shelfmark:csv:" + the name with characters IRIs may not hold
// percent-encoded.
func CSVColumnPredicate(name string) string {
	if iri, ok := rdf.ExpandPrefixed(name); ok && !hasBadIRIChar(iri) && !strings.HasSuffix(iri, ":") {
		return iri
	}
	lower := strings.ToLower(name)
	if (strings.HasPrefix(lower, "http://") || strings.HasPrefix(lower, "https://") || strings.HasPrefix(lower, "urn:")) &&
		!hasBadIRIChar(name) && len(name) > len("urn:") {
		return name
	}
	return csvPrefix + escapeIRIPart(name)
}

// hasBadIRIChar reports whether s holds a character IRIs may not contain.
func hasBadIRIChar(s string) bool {
	return escapeIRIPart(strings.ReplaceAll(s, "%", "")) != strings.ReplaceAll(s, "%", "")
}

// Next implements Source.
func (s *csvSource) Next(ctx context.Context) (*Item, error) {
	if s.closed {
		return nil, errClosed
	}
	if s.err != nil {
		return nil, s.err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	first := s.pending
	s.pending = nil
	if first == nil {
		var err error
		if first, err = s.read(); err != nil {
			return nil, err
		}
	}
	group := []*csvRow{first}
	for !first.auto {
		row, err := s.read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if row.key != first.key {
			s.pending = row
			break
		}
		group = append(group, row)
	}
	if !first.auto {
		prev, dup, err := s.seen.get(first.key)
		if err != nil {
			s.err = err
			return nil, err
		}
		if dup {
			return nil, &ItemError{Key: first.key, Row: first.n,
				Reason: fmt.Sprintf("source identifier %q was already used at row %d; the rows of one work must be consecutive", strings.TrimPrefix(first.key, "csv:"), prev)}
		}
		if err := s.seen.add(first.key, first.n); err != nil {
			s.err = err
			return nil, err
		}
	}
	return s.build(group)
}

// read returns the next row that is not blank, io.EOF, or a fatal error.
func (s *csvSource) read() (*csvRow, error) {
	for {
		rec, err := s.r.Read()
		if err == io.EOF {
			return nil, io.EOF
		}
		if err != nil {
			s.err = fmt.Errorf("ingest: CSV manifest: %w", err)
			return nil, s.err
		}
		s.row++
		if blankRecord(rec) {
			continue
		}
		row := &csvRow{n: s.row, rec: rec}
		if s.keyCol >= 0 && s.keyCol < len(rec) {
			row.key = strings.TrimSpace(rec[s.keyCol])
		}
		if row.key == "" {
			row.key, row.auto = "csv:row-"+strconv.Itoa(s.row), true
		} else {
			row.key = "csv:" + row.key
		}
		return row, nil
	}
}

// build makes the item of a group of rows with one key.
func (s *csvSource) build(group []*csvRow) (*Item, error) {
	key := group[0].key
	item := &Item{Key: key, Row: group[0].n}
	type placed struct {
		ref FileRef
		pos int
	}
	var files []placed
	for _, row := range group {
		fail := func(p string, err error, format string, args ...any) error {
			return &ItemError{Key: key, Row: row.n, Path: p, Reason: fmt.Sprintf(format, args...), Err: err}
		}
		if len(row.rec) > len(s.cols) && slices.ContainsFunc(row.rec[len(s.cols):], func(c string) bool { return strings.TrimSpace(c) != "" }) {
			return nil, fail("", nil, "the row has %d cells but the header only %d", len(row.rec), len(s.cols))
		}
		pos := math.MaxInt
		var paths []string
		for i, c := range s.cols {
			if i >= len(row.rec) {
				break
			}
			cell := strings.TrimSpace(row.rec[i])
			if cell == "" {
				continue
			}
			if reason := checkText(cell); reason != "" {
				return nil, fail("", nil, "column %q %s", c.name, reason)
			}
			switch c.kind {
			case colParent:
				if strings.Contains(cell, "|") {
					return nil, fail("", nil, "column %q names several parents (%s); a work has at most one", c.name, cell)
				}
				if item.Collection != "" && item.Collection != cell {
					return nil, fail("", nil, "column %q gives the parent %q, but an earlier row of the work gave %q", c.name, cell, item.Collection)
				}
				item.Collection = cell
			case colPosition:
				n, err := strconv.Atoi(cell)
				if err != nil {
					return nil, fail("", err, "column %q: %q is not a whole number", c.name, cell)
				}
				pos = n
			case colFile:
				paths = splitCell(cell)
			case colMetadata:
				for _, v := range splitCell(cell) {
					item.Metadata = append(item.Metadata, shelfmark.Statement{Predicate: c.pred, Object: shelfmark.NewLiteral(v)})
				}
			}
		}
		for _, p := range paths {
			abs, reason := joinInside(s.root, p)
			if reason != "" {
				return nil, fail(p, nil, "%s", reason)
			}
			cf, reason, err := checkFile(s.root, abs, p)
			if reason != "" {
				return nil, fail(p, err, "%s", reason)
			}
			name := filepath.Base(abs)
			files = append(files, placed{FileRef{Path: cf.path, Name: name, Size: cf.size, MediaType: mediaType(name)}, pos})
		}
	}
	slices.SortStableFunc(files, func(a, b placed) int { return cmpInt(a.pos, b.pos) })
	for _, f := range files {
		item.Files = append(item.Files, f.ref)
	}
	item.Metadata = shelfmark.DedupeStatements(item.Metadata)
	if group[0].auto {
		sizes := make([]int64, len(files))
		for i, f := range files {
			sizes[i] = f.ref.Size
		}
		k, err := s.rowKey(group[0], sizes)
		if err != nil {
			s.err = err
			return nil, err
		}
		item.Key, item.FormerKey = k, key
	}
	return item, nil
}

// rowKey is the source key of a good row without a source identifier:
// "csv-row:" + a fingerprint of the manifest's origin, the row's non-empty
// cells (by column name, so adding an empty column or reordering columns
// changes nothing) and the sizes of the files it names, in order; the
// second row of one manifest with the same fingerprint gets "~2" added,
// the third "~3", and so on. The row number is left out: deleting or
// adding other rows leaves the key as it is.
func (s *csvSource) rowKey(row *csvRow, sizes []int64) (string, error) {
	type cell struct{ name, value string }
	var cells []cell
	for i, c := range s.cols {
		if i < len(row.rec) && c.kind != colIgnored {
			if v := strings.TrimSpace(row.rec[i]); v != "" {
				cells = append(cells, cell{strings.ToLower(c.name), v})
			}
		}
	}
	slices.SortStableFunc(cells, func(a, b cell) int { return strings.Compare(a.name, b.name) })
	fp := newFingerprint("csv-row")
	fp.str(s.origin)
	fp.num(int64(len(cells)))
	for _, c := range cells {
		fp.str(c.name)
		fp.str(c.value)
	}
	fp.num(int64(len(sizes)))
	for _, n := range sizes {
		fp.num(n)
	}
	key := "csv-row:" + fp.sum()
	n, _, err := s.seen.get(key)
	if err != nil {
		return "", err
	}
	if err := s.seen.add(key, n+1); err != nil {
		return "", err
	}
	if n > 0 {
		key += "~" + strconv.Itoa(n+1)
	}
	return key, nil
}

// splitCell splits a multi-valued cell on "|", trimming values and dropping
// empty ones.
func splitCell(cell string) []string {
	var out []string
	for _, v := range strings.Split(cell, "|") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}

// Close implements Source.
func (s *csvSource) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	return errors.Join(s.closer.Close(), s.seen.close())
}

// blankRecord reports whether every cell of a CSV record is blank; such
// rows are skipped.
func blankRecord(rec []string) bool {
	return !slices.ContainsFunc(rec, func(c string) bool { return strings.TrimSpace(c) != "" })
}
