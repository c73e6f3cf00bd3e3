package ingest

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// Counter is implemented by sources that can count their items ahead of
// reading them, so that progress can show a total and an estimated end. A
// count only scans names and keys (no file is read or verified), so it is an
// estimate: it may differ from what Next returns, for instance when the
// input changes meanwhile or a folder cannot be listed.
type Counter interface {
	Count(ctx context.Context) (int64, error)
}

var (
	_ Counter = (*dirSource)(nil)
	_ Counter = (*bagSource)(nil)
	_ Counter = (*csvSource)(nil)
)

// errNoCount is returned by a source that cannot count.
var errNoCount = errors.New("ingest: this source cannot be counted ahead")

// Count implements Counter: the folders below the root that hold at least
// one entry other than a folder (names starting with "." skipped), as Next
// would visit them, one listing at a time.
func (s *dirSource) Count(ctx context.Context) (int64, error) {
	var n int64
	stack := []string{"."}
	for len(stack) > 0 {
		if err := ctx.Err(); err != nil {
			return n, err
		}
		rel := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		entries, err := os.ReadDir(filepath.Join(s.root, filepath.FromSlash(rel)))
		if err != nil {
			n++ // Next reports it as a bad item
			continue
		}
		item := false
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), ".") {
				continue
			}
			if e.IsDir() {
				stack = append(stack, path.Join(rel, e.Name()))
			} else {
				item = true
			}
		}
		if item {
			n++
		}
	}
	return n, nil
}

// Count implements Counter: the bag directories still to read.
func (s *bagSource) Count(ctx context.Context) (int64, error) {
	return int64(len(s.dirs)), nil
}

// Count implements Counter by reading the manifest once more, apart from
// Next: consecutive rows with the same source identifier are one item, a
// row without one is an item of its own.
func (s *csvSource) Count(ctx context.Context) (int64, error) {
	if s.path == "" {
		return 0, errNoCount
	}
	f, err := os.Open(s.path)
	if err != nil {
		return 0, fmt.Errorf("ingest: count CSV: %w", err)
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.FieldsPerRecord = -1
	r.ReuseRecord = true
	if _, err := r.Read(); err != nil { // the header
		return 0, fmt.Errorf("ingest: count CSV: %w", err)
	}
	var n int64
	prev, first := "", true
	for i := 0; ; i++ {
		if i%4096 == 0 && ctx.Err() != nil {
			return n, ctx.Err()
		}
		rec, err := r.Read()
		if err == io.EOF {
			return n, nil
		} else if err != nil {
			return n, nil // Next ends the stream here too
		}
		if blankRecord(rec) {
			continue
		}
		key := ""
		if s.keyCol >= 0 && s.keyCol < len(rec) {
			key = strings.TrimSpace(rec[s.keyCol])
		}
		if key == "" || first || key != prev {
			n++
		}
		prev, first = key, false
	}
}
