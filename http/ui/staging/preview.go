package staging

// This file builds the preview of a bulk ingest: the staged manifest is
// read to its end, as the ingest would read it, without storing anything.
// Every bad row is reported with its row number and reason; the good ones
// are counted (works, file sets, files, bytes, collection memberships,
// works stored before and to be skipped), and the first of them shown;
// so are the first rows stored before, each with the work it was stored
// as, which the user may have stored anyway.

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync/atomic"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/ingest"
)

const (
	// sampleItems and sampleErrors bound what the preview shows;
	// its counts cover the whole manifest.
	sampleItems  = 50
	sampleErrors = 200
	// lookupChunk is how many source keys are looked up at once.
	lookupChunk = 256
	// maxCollections bounds the distinct collections checked.
	maxCollections = 1000
	// sampleFiles bounds the file names shown per work.
	sampleFiles = 5
	// sampleStored bounds the rows stored before that are shown.
	sampleStored = 50
)

// Preview is what a manifest would create (ReadPreview).
type Preview struct {
	// Works are the good items (a work each), Failed the bad ones.
	Works, Failed int64
	// FileSets and Files: a file set per file.
	FileSets, Files, Bytes int64
	// Memberships counts works that go into a collection; Collections the
	// distinct collections named (of the first maxCollections).
	Memberships int64
	Collections int
	// Stored counts works stored before (by an earlier ingest of the
	// same source keys), which the ingest skips.
	Stored int64
	// Items are the first good works, Errors the first bad rows.
	Items  []Item
	Errors []RowError
	// StoredItems are the first works stored before, with the works
	// they were stored as.
	StoredItems []Item
}

// MoreItems, MoreErrors and MoreStored report whether the preview shows
// only some.
func (p *Preview) MoreItems() bool  { return p.Works > int64(len(p.Items)) }
func (p *Preview) MoreErrors() bool { return p.Failed > int64(len(p.Errors)) }
func (p *Preview) MoreStored() bool { return p.Stored > int64(len(p.StoredItems)) }

// New is how many works the ingest would store.
func (p *Preview) New() int64 { return p.Works - p.Stored }

// Item is a good work of the manifest.
type Item struct {
	Row        int
	Key        string // the source identifier, without "csv:"
	Title      string
	Files      []string // the first names
	FileCount  int
	Bytes      int64
	Collection string
	// StoredAs is the work stored before from the same source key, or ""
	// when there is none or the caller may not see it; Stored is set in
	// either case.
	StoredAs string
	Stored   bool
}

// MoreFiles is how many files are not named.
func (it Item) MoreFiles() int { return it.FileCount - len(it.Files) }

// RowError is a bad row of the manifest.
type RowError struct {
	Row  int
	Key  string
	Path string
	// Message is the reason in the reader's words; MessageKey, when set,
	// a catalog message with Arg instead.
	Message    string
	MessageKey string
	Arg        string
}

// ReadPreview reads the manifest at manifest, with its files below
// root and origin standing for it in the keys of rows without an
// identifier (ingest.OpenCSVIn), as the caller on ctx would ingest it
// into res (every work also into collection, when it is not ""), counting
// the works read in read. A manifest that cannot be read as CSV is EINVALID.
func ReadPreview(ctx context.Context, res shelfmark.ResourceService, manifest, root, origin, collection string, read *atomic.Int64) (*Preview, error) {
	src, err := ingest.OpenCSVIn(manifest, root, origin)
	if err != nil {
		return nil, shelfmark.Errorf(shelfmark.EINVALID, "The manifest is not a CSV manifest: %v", trimIngest(err))
	}
	defer src.Close()
	p := &Preview{Items: make([]Item, 0, sampleItems)} // shown items are pointed at: no regrowth
	colls := map[string]string{}                       // id -> "" when good, else the message key
	// items whose keys are not yet looked up: the shown item, or nil, and
	// the item as the list of rows stored before would show it
	type pending struct {
		shown *Item
		item  Item
	}
	var chunk []pending
	if collection != "" {
		colls[collection] = "" // checked by the upload
	}
	var chunkKeys []string
	lookup := func() error {
		if len(chunkKeys) == 0 {
			return nil
		}
		found, err := res.FindSources(ctx, chunkKeys)
		if err != nil {
			return err
		}
		for i, k := range chunkKeys {
			if id, ok := found[k]; ok {
				p.Stored++
				if c := chunk[i]; c.shown != nil {
					c.shown.Stored, c.shown.StoredAs = true, string(id)
				}
				if len(p.StoredItems) < sampleStored {
					it := chunk[i].item
					it.Stored, it.StoredAs = true, string(id)
					p.StoredItems = append(p.StoredItems, it)
				}
			}
		}
		chunk, chunkKeys = chunk[:0], chunkKeys[:0]
		return nil
	}
	for {
		it, err := src.Next(ctx)
		if err == nil || !errors.Is(err, io.EOF) {
			read.Add(1)
		}
		var ie *ingest.ItemError
		switch {
		case errors.Is(err, io.EOF):
			if err := lookup(); err != nil {
				return nil, err
			}
			for _, why := range colls {
				if why == "" {
					p.Collections++
				}
			}
			return p, nil
		case errors.As(err, &ie):
			p.Failed++
			if len(p.Errors) < sampleErrors {
				p.Errors = append(p.Errors, RowError{Row: ie.Row, Key: SourceID(ie.Key), Path: ie.Path, Message: ie.Reason})
			}
			continue
		case err != nil:
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, shelfmark.Errorf(shelfmark.EINVALID, "The manifest is not valid CSV: %v. Nothing was stored.", trimIngest(err))
		}
		if it.Collection != "" {
			why, checked := colls[it.Collection]
			if !checked && len(colls) < maxCollections {
				why = CheckCollection(ctx, res, it.Collection)
				colls[it.Collection] = why
			}
			if why != "" {
				p.Failed++
				if len(p.Errors) < sampleErrors {
					p.Errors = append(p.Errors, RowError{Row: it.Row, Key: SourceID(it.Key), MessageKey: why, Arg: it.Collection})
				}
				continue
			}
		}
		if it.Collection != "" || collection != "" {
			p.Memberships++
		}
		p.Works++
		p.FileSets += int64(len(it.Files))
		p.Files += int64(len(it.Files))
		var size int64
		for _, f := range it.Files {
			size += f.Size
		}
		p.Bytes += size
		bi := Item{Row: it.Row, Key: SourceID(it.Key), Title: title(it.Metadata), FileCount: len(it.Files), Bytes: size, Collection: it.Collection}
		var shown *Item
		if len(p.Items) < sampleItems {
			for _, f := range it.Files[:min(len(it.Files), sampleFiles)] {
				bi.Files = append(bi.Files, f.Name)
			}
			p.Items = append(p.Items, bi)
			shown = &p.Items[len(p.Items)-1]
		}
		chunk, chunkKeys = append(chunk, pending{shown, bi}), append(chunkKeys, it.Key)
		if len(chunkKeys) == lookupChunk {
			if err := lookup(); err != nil {
				return nil, err
			}
		}
	}
}

// CheckCollection returns "" when id is a collection the caller on ctx
// may see in res, else the catalog key of why not.
func CheckCollection(ctx context.Context, res shelfmark.ResourceService, id string) string {
	r, err := res.FindResource(ctx, shelfmark.ID(id))
	switch {
	case err != nil:
		return "bulk.error.collection"
	case r.Kind != shelfmark.KindCollection:
		return "bulk.error.notcollection"
	}
	return ""
}

// SourceID is the source identifier of an item key ("csv:b1" -> "b1");
// a good row without one ("csv-row:…", keyed by its content) shows none (a
// bad one is "csv:row-N", shown as "row-N").
func SourceID(key string) string {
	switch {
	case strings.HasPrefix(key, "csv-row:"):
		return ""
	case strings.HasPrefix(key, "csv:"):
		return key[4:]
	}
	return key
}

// title is the first title among stmts, or "".
func title(stmts []shelfmark.Statement) string {
	for _, st := range stmts {
		if st.Predicate == shelfmark.NSDC+"title" || st.Predicate == shelfmark.NSDCTerms+"title" {
			return st.Object.Value
		}
	}
	return ""
}

// trimIngest drops the package prefix of a reader's error.
func trimIngest(err error) string {
	msg := err.Error()
	for _, p := range []string{"ingest: open CSV manifest.csv: ", "ingest: open CSV: ", "ingest: CSV manifest: ", "ingest: "} {
		if len(msg) > len(p) && msg[:len(p)] == p {
			return msg[len(p):]
		}
	}
	return msg
}
