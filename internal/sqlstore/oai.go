package sqlstore

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/shelfmark/shelfmark"
)

// The OAI-PMH view (oai.go in the root package, migration 0003_oai.sql):
// its columns, row scanner and the encoding of its sets column.

// OAICols are the columns ScanOAIRecord reads; OAIColsPayload adds the
// payload.
const (
	OAICols        = `seq, prefix, key, datestamp, deleted, sets`
	OAIColsPayload = OAICols + `, payload`
)

// OAIColumns returns OAIColsPayload when payload is set, else OAICols.
func OAIColumns(payload bool) string {
	if payload {
		return OAIColsPayload
	}
	return OAICols
}

// ScanOAIRecord reads a row of OAIColumns(payload).
func ScanOAIRecord(r Scanner, payload bool) (*shelfmark.OAIRecord, error) {
	var (
		rec       shelfmark.OAIRecord
		datestamp int64
		sets      string
	)
	dest := []any{&rec.Seq, &rec.Prefix, &rec.Key, &datestamp, &rec.Deleted, &sets}
	if payload {
		dest = append(dest, &rec.Payload)
	}
	if err := r.Scan(dest...); err != nil {
		return nil, err
	}
	rec.Datestamp = time.Unix(datestamp, 0).UTC()
	var err error
	if rec.Sets, err = ParseSets(sets); err != nil {
		return nil, fmt.Errorf("row %d: %w", rec.Seq, err)
	}
	return &rec, nil
}

// SortedSets returns keys ascending, without repeats (sorting keys in
// place).
func SortedSets(keys []int64) []int64 {
	return slices.Compact(slices.Sorted(slices.Values(keys)))
}

// FormatSets encodes set keys as stored in oai_records.sets: ascending,
// without repeats, comma-separated; "" for none.
func FormatSets(sets []int64) string {
	s := SortedSets(sets)
	b := make([]byte, 0, 12*len(s))
	for i, k := range s {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, k, 10)
	}
	return string(b)
}

// ParseSets decodes oai_records.sets.
func ParseSets(s string) ([]int64, error) {
	if s == "" {
		return nil, nil
	}
	parts := strings.Split(s, ",")
	out := make([]int64, len(parts))
	for i, p := range parts {
		k, err := strconv.ParseInt(p, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("sets %q: %w", s, err)
		}
		out[i] = k
	}
	return out, nil
}

// CeilUnix rounds a time up to whole seconds.
func CeilUnix(t time.Time) int64 {
	s := t.Unix()
	if t.Nanosecond() > 0 {
		s++
	}
	return s
}

// LatestRecords drops every record that a later one of the same (Key,
// Prefix) replaces, keeping the order of the rest; recs itself when none
// repeats.
func LatestRecords(recs []*shelfmark.OAIRecord) []*shelfmark.OAIRecord {
	type id struct {
		key    int64
		prefix string
	}
	last := make(map[id]int, len(recs))
	for i, r := range recs {
		last[id{r.Key, r.Prefix}] = i
	}
	if len(last) == len(recs) {
		return recs
	}
	out := make([]*shelfmark.OAIRecord, 0, len(last))
	for i, r := range recs {
		if last[id{r.Key, r.Prefix}] == i {
			out = append(out, r)
		}
	}
	return out
}

// LatestSets returns the sets to write, of which a later one of the same
// key wins, in order, and their keys.
func LatestSets(sets []shelfmark.OAISet) (keys []int64, kept []shelfmark.OAISet) {
	last := make(map[int64]int, len(sets))
	for i, s := range sets {
		last[s.Key] = i
	}
	keys = make([]int64, 0, len(last))
	kept = make([]shelfmark.OAISet, 0, len(last))
	for i, s := range sets {
		if last[s.Key] == i {
			keys, kept = append(keys, s.Key), append(kept, s)
		}
	}
	return keys, kept
}

// ScanOAISet reads a row of key, spec, name.
func ScanOAISet(r Scanner) (shelfmark.OAISet, error) {
	var s shelfmark.OAISet
	err := r.Scan(&s.Key, &s.Spec, &s.Name)
	return s, err
}
