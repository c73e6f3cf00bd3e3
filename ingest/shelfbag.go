package ingest

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/preserve"
	"github.com/shelfmark/shelfmark/rdf"
)

// A Shelfmark bag is a bag that Shelfmark's export wrote (package export):
// its bag-info.txt names its record (ShelfmarkRecordLabel: object.json) and
// its payload holds the record, the metadata as Turtle, Dublin Core and
// the originals. It is ingested as the work or collection it was, not as
// a bag of files: see readShelfmarkBag.
const (
	ShelfmarkRecordLabel = "Shelfmark-Record"
	shelfmarkTurtle      = "data/metadata.ttl"
	// shelfmarkKeyPrefix begins the source key of a Shelfmark bag's item:
	// "shelfmark:" + the id it had in the repository it was exported from.
	shelfmarkKeyPrefix = "shelfmark:"
	// maxRecordSize bounds the record read into memory (a 10,000-page
	// book's record is a few MiB).
	maxRecordSize = 64 << 20
)

// shelfmarkTagFiles are the payload files of a Shelfmark bag other than
// the record and the originals.
var shelfmarkTagFiles = map[string]bool{shelfmarkTurtle: true, "data/dc.xml": true, "data/premis.xml": true}

// SetRef is a file set of an item that states its file sets (a Shelfmark
// bag): its metadata, access and files in order.
type SetRef struct {
	Metadata []shelfmark.Statement
	Access   Access
	Files    []FileRef
	// FileMetadata holds each file's own metadata, by index in Files.
	FileMetadata map[int][]shelfmark.Statement
}

// Access is the visibility, embargo and lease a source states for a
// resource; the zero value is public.
type Access struct {
	Visibility shelfmark.Visibility
	Embargo    *time.Time
	Lease      *time.Time
}

// shelfmarkRecordName returns the record's payload path when the bag-info
// fields name one (the bag is a Shelfmark bag), else "".
func shelfmarkRecordName(info []BagInfoField) string {
	for _, f := range info {
		if strings.EqualFold(f.Label, ShelfmarkRecordLabel) {
			return "data/" + strings.TrimSpace(f.Value)
		}
	}
	return ""
}

// readShelfmarkBag turns a verified Shelfmark bag into its item: the
// record's root is the work (or collection) with its metadata and access;
// each file set follows in the record's order with its metadata, access
// and originals (the bag's files at the paths the record names, checked
// against the record's size and SHA-256); derivatives and external files
// are not in a bag and are not made here (the background pipeline makes
// derivatives again from the originals). Memberships are kept as the
// source keys of the collections (Item.MemberKeys), found only when those
// collections were ingested from their own bags before. The key is
// "shelfmark:" + the id the work had, so the same bag ingested twice is
// stored once. Anything the record and the payload disagree on makes the
// bag an ItemError: nothing of it is stored.
func (b *bagReader) readShelfmarkBag(recordName string, payload map[string]checkedFile, names []string, sha *manifest) (*Item, error) {
	cf, ok := payload[recordName]
	if !ok {
		return nil, b.fail(recordName, nil, "bag-info.txt names the record %s, which is not in the payload", recordName)
	}
	rec, err := readRecord(cf.path)
	if err != nil {
		return nil, b.fail(recordName, err, "%s: %v", recordName, err)
	}
	if rec.Shelfmark < 1 || rec.Shelfmark > preserve.FormatVersion {
		return nil, b.fail(recordName, nil, "%s: record format %d is not supported (1 to %d)", recordName, rec.Shelfmark, preserve.FormatVersion)
	}
	if len(rec.Resources) == 0 || rec.Resources[0].ID != rec.ID {
		return nil, b.fail(recordName, nil, "%s: the record's first resource is not its object %q", recordName, rec.ID)
	}
	meta, err := b.shelfmarkMetadata(payload)
	if err != nil {
		return nil, err
	}
	root := rec.Resources[0]
	item := &Item{Key: shelfmarkKeyPrefix + rec.ID, Metadata: meta[preserve.SubjectIRI(shelfmark.ID(root.ID))], Structured: true}
	switch root.Kind {
	case string(shelfmark.KindWork):
		item.Kind = shelfmark.KindWork
	case string(shelfmark.KindCollection):
		item.Kind = shelfmark.KindCollection
	default:
		return nil, b.fail(recordName, nil, "%s: the object %s is a %q, not a work or a collection", recordName, rec.ID, root.Kind)
	}
	if root.Deleted != nil {
		return nil, b.fail(recordName, nil, "%s: the object %s is deleted", recordName, rec.ID)
	}
	if item.Access, err = recordAccess(root); err != nil {
		return nil, b.fail(recordName, nil, "%s: %v", recordName, err)
	}
	for _, c := range root.MemberOf {
		item.MemberKeys = append(item.MemberKeys, shelfmarkKeyPrefix+c)
	}
	used := map[string]bool{recordName: true}
	sets := map[string]int{} // file set id -> index in item.Sets
	for _, r := range rec.Resources[1:] {
		switch r.Kind {
		case string(shelfmark.KindFileSet):
			if r.Parent != rec.ID {
				return nil, b.fail(recordName, nil, "%s: file set %s is not a child of %s", recordName, r.ID, rec.ID)
			}
			acc, err := recordAccess(r)
			if err != nil {
				return nil, b.fail(recordName, nil, "%s: file set %s: %v", recordName, r.ID, err)
			}
			sets[r.ID] = len(item.Sets)
			item.Sets = append(item.Sets, SetRef{Metadata: meta[preserve.SubjectIRI(shelfmark.ID(r.ID))], Access: acc})
		case string(shelfmark.KindFile):
			if r.File == nil || r.File.Path == "" {
				continue // a derivative or an external file: not in the bag
			}
			i, ok := sets[r.Parent]
			if r.Parent == rec.ID {
				return nil, b.fail(recordName, nil, "%s: file %s hangs directly on %s, not on a file set: such bags are not ingested yet", recordName, r.ID, rec.ID)
			}
			if !ok {
				return nil, b.fail(recordName, nil, "%s: file %s is not in a file set the record lists before it", recordName, r.ID)
			}
			p := "data/" + r.File.Path
			f, ok := payload[p]
			if !ok {
				return nil, b.fail(p, nil, "the record names the original %s, which is not in the payload", p)
			}
			if used[p] {
				return nil, b.fail(p, nil, "the record names %s twice", p)
			}
			used[p] = true
			if f.size != r.File.Size {
				return nil, b.fail(p, nil, "%s has %d bytes, the record says %d", p, f.size, r.File.Size)
			}
			ref := FileRef{Path: f.path, Name: r.File.Name, Size: f.size, MediaType: r.File.MediaType, SHA256: strings.ToLower(r.File.SHA256), Use: r.File.Use}
			if sha != nil && ref.SHA256 != "" && sha.sums[p] != ref.SHA256 {
				return nil, b.fail(p, nil, "%s: manifest-sha256.txt says %s, the record says %s", p, sha.sums[p], ref.SHA256)
			}
			if ref.MediaType == "" {
				ref.MediaType = mediaType(ref.Name)
			}
			s := &item.Sets[i]
			if m := meta[preserve.SubjectIRI(shelfmark.ID(r.ID))]; len(m) > 0 {
				if s.FileMetadata == nil {
					s.FileMetadata = map[int][]shelfmark.Statement{}
				}
				s.FileMetadata[len(s.Files)] = m
			}
			s.Files = append(s.Files, ref)
		default:
			return nil, b.fail(recordName, nil, "%s: resource %s is a %q inside %s", recordName, r.ID, r.Kind, rec.ID)
		}
	}
	if item.Kind == shelfmark.KindCollection && len(item.Sets) > 0 {
		return nil, b.fail(recordName, nil, "%s: the collection %s holds file sets", recordName, rec.ID)
	}
	for _, p := range names {
		if !used[p] && !shelfmarkTagFiles[p] {
			return nil, b.fail(p, nil, "payload file %s is neither the record, its metadata nor an original the record names", p)
		}
	}
	return item, nil
}

// readRecord reads and parses a record.
func readRecord(p string) (*preserve.Record, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxRecordSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxRecordSize {
		return nil, fmt.Errorf("the record is larger than %d bytes", maxRecordSize)
	}
	var rec preserve.Record
	if err := json.Unmarshal(data, &rec); err != nil {
		return nil, fmt.Errorf("not a Shelfmark record: %v", err)
	}
	return &rec, nil
}

// shelfmarkMetadata reads data/metadata.ttl, by subject IRI.
func (b *bagReader) shelfmarkMetadata(payload map[string]checkedFile) (map[string][]shelfmark.Statement, error) {
	out := map[string][]shelfmark.Statement{}
	cf, ok := payload[shelfmarkTurtle]
	if !ok {
		return out, nil
	}
	f, err := os.Open(cf.path)
	if err != nil {
		return nil, b.fail(shelfmarkTurtle, err, "%s cannot be read: %v", shelfmarkTurtle, err)
	}
	defer f.Close()
	triples, err := rdf.Parse(io.LimitReader(f, maxRecordSize), "text/turtle", "", rdf.MaxTriples(10*shelfmark.MaxStatements))
	if err != nil {
		return nil, b.fail(shelfmarkTurtle, err, "%s: %s", shelfmarkTurtle, errorText(err))
	}
	for _, t := range triples {
		if t.Subject.Kind != shelfmark.IRI {
			continue
		}
		if reason := checkText(t.Object.Value); reason != "" {
			return nil, b.fail(shelfmarkTurtle, nil, "%s: a value of %s %s", shelfmarkTurtle, t.Predicate, reason)
		}
		out[t.Subject.Value] = append(out[t.Subject.Value], shelfmark.Statement{Predicate: t.Predicate, Object: t.Object})
	}
	return out, nil
}

// recordAccess reads a record's access fields.
func recordAccess(r preserve.Resource) (Access, error) {
	v, err := shelfmark.ParseVisibility(r.Visibility)
	if err != nil {
		return Access{}, fmt.Errorf("visibility %q: %v", r.Visibility, err)
	}
	return Access{Visibility: v, Embargo: r.Embargo, Lease: r.Lease}, nil
}
