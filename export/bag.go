package export

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"path"
	"path/filepath"
	"strings"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/bagit"
	"github.com/shelfmark/shelfmark/oai"
	"github.com/shelfmark/shelfmark/preserve"
	"github.com/shelfmark/shelfmark/rdf"
)

// Payload paths of a bag, below data/. Originals keep the paths the
// record gives them (preserve.FilesDir/SET-ID/NAME).
const (
	RecordPath   = preserve.RecordPath // the JSON record
	TurtlePath   = "metadata.ttl"
	DCPath       = "dc.xml"
	EventsPath   = "premis.xml"
	RecordLabel  = "Shelfmark-Record" // bag-info.txt: names the record's payload path
	SoftwareName = "Shelfmark"
)

// snapshot is what one bag is made of, read in one transaction.
type snapshot struct {
	state  *preserve.State
	row    *shelfmark.ResourceRow
	fields map[int64][]shelfmark.Field
	keys   []int64 // of state.Record.Resources, in order
}

// read reads the object of id in one read transaction.
func (e *Exporter) read(ctx context.Context, id shelfmark.ID) (*snapshot, error) {
	key, err := e.ids.Key(id)
	if err != nil {
		return nil, fmt.Errorf("export %s: %w", id, err)
	}
	s := &snapshot{}
	err = e.store.View(ctx, func(tx shelfmark.ReadTx) error {
		row, err := tx.Resource(ctx, key)
		if err != nil {
			return err
		}
		if row.Kind != shelfmark.KindWork && row.Kind != shelfmark.KindCollection {
			return shelfmark.Errorf(shelfmark.EINVALID, "%s is a %s: only works and collections are exported (a file set is exported with its work).", id, row.Kind)
		}
		if row.Deleted != nil {
			return shelfmark.Errorf(shelfmark.ENOTFOUND, "%s is deleted: there is nothing to export.", id)
		}
		s.row = row
		if s.state, err = preserve.Build(ctx, tx, e.ids, key); err != nil {
			return err
		}
		for _, r := range s.state.Record.Resources {
			k, err := e.ids.Key(shelfmark.ID(r.ID))
			if err != nil {
				return err
			}
			s.keys = append(s.keys, k)
		}
		s.fields, err = tx.FieldsOf(ctx, s.keys)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("export %s: %w", id, err)
	}
	return s, nil
}

// BagResult describes one bag written.
type BagResult struct {
	ID  shelfmark.ID
	Dir string
	// Files counts the payload files, Octets their bytes.
	Files  int
	Octets int64
}

// Bag writes the work or collection id as a bag at dir/ID (see the
// package documentation); dir/ID must not exist.
func (e *Exporter) Bag(ctx context.Context, id shelfmark.ID, dir string) (*BagResult, error) {
	s, err := e.read(ctx, id)
	if err != nil {
		return nil, err
	}
	bagPaths(s.state.Record)
	contents, err := s.state.Contents()
	if err != nil {
		return nil, fmt.Errorf("export %s: %w", id, err)
	}
	var payload []bagit.File
	for _, c := range contents {
		switch {
		case c.Path == preserve.MetadataPath:
			continue // the metadata goes as Turtle instead
		case c.File != nil:
			sha256 := c.File.SHA256
			payload = append(payload, bagit.File{Path: c.Path, Want: map[string]string{"sha256": sha256, "sha512": c.SHA512},
				Open: func(ctx context.Context) (io.ReadCloser, error) { return e.blobs.Open(ctx, sha256) }})
		default:
			payload = append(payload, bytesFile(c.Path, c.Bytes))
		}
	}
	payload = append(payload, bytesFile(TurtlePath, s.turtle()))
	dc, err := s.dublinCore(ctx)
	if err != nil {
		return nil, fmt.Errorf("export %s: %w", id, err)
	}
	payload = append(payload, bytesFile(DCPath, dc))
	if e.opts.Events != nil {
		ev, err := e.opts.Events(ctx, s.state)
		if err != nil {
			return nil, fmt.Errorf("export %s: events: %w", id, err)
		}
		if len(ev) > 0 {
			payload = append(payload, bytesFile(EventsPath, ev))
		}
	}
	info := []bagit.Field{
		{Label: "Source-Organization", Value: oneLine(e.opts.Organization)},
		{Label: "Bagging-Date", Value: bagit.BaggingDate(e.opts.Now())},
		{Label: "External-Identifier", Value: string(id)},
		{Label: "Bag-Software-Agent", Value: SoftwareName + " " + shelfmark.Version},
	}
	if t := title(shelfmark.StatementsOf(s.fields[s.row.Key])); t != "" {
		info = append(info, bagit.Field{Label: "External-Description", Value: t})
	}
	info = append(info, bagit.Field{Label: RecordLabel, Value: RecordPath})
	res, err := bagit.Write(ctx, filepath.Join(dir, string(id)), bagit.Bag{Info: info, Payload: payload})
	if err != nil {
		return nil, fmt.Errorf("export %s: %w", id, err)
	}
	return &BagResult{ID: id, Dir: res.Dir, Files: res.Files, Octets: res.Octets}, nil
}

// bytesFile is a payload file of bytes in memory.
func bytesFile(p string, data []byte) bagit.File {
	return bagit.File{Path: p, Open: func(context.Context) (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }}
}

// turtle is every resource's metadata as Turtle, in the record's order,
// each resource as its URN. Each resource's block names the prefixes it
// uses (Turtle allows a prefix to be declared again).
func (s *snapshot) turtle() []byte {
	var out []byte
	for i, r := range s.state.Record.Resources {
		stmts := shelfmark.StatementsOf(s.fields[s.keys[i]])
		if len(stmts) == 0 {
			continue
		}
		if len(out) > 0 {
			out = append(out, '\n')
		}
		out = rdf.AppendTurtle(out, preserve.SubjectIRI(shelfmark.ID(r.ID)), stmts)
	}
	return out
}

// dublinCore is the object's own metadata as an oai_dc XML document.
func (s *snapshot) dublinCore(ctx context.Context) ([]byte, error) {
	id := shelfmark.ID(s.state.Record.ID)
	body, _, err := oai.DublinCore{}.Render(ctx, &oai.Work{ID: id, Row: s.row, Fields: s.fields[s.row.Key]})
	if err != nil {
		return nil, fmt.Errorf("dublin core: %w", err)
	}
	return append(append([]byte(`<?xml version="1.0" encoding="UTF-8"?>`+"\n"), body...), '\n'), nil
}

// title is the first dc:title or dcterms:title, on one line.
func title(stmts []shelfmark.Statement) string {
	for _, st := range stmts {
		if st.Predicate == shelfmark.NSDC+"title" || st.Predicate == shelfmark.NSDCTerms+"title" {
			return oneLine(st.Object.Value)
		}
	}
	return ""
}

// oneLine is s with line breaks as spaces (a bag-info value is one line).
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// bagPaths makes the record's paths of originals safe for every BagIt
// reader: RFC 8493 asks for %, CR and LF in manifest paths to be
// percent-encoded, which bagit-python 1.9.0 and most other tools do not
// decode for %, so a bag holding such a name would be refused by them.
// Such characters become "_" in the bag's path (and in the bag's record,
// whose "path" names where the bytes are; "name" keeps the original
// name); a path so made that another original has already gets the
// file's id before its name.
func bagPaths(rec *preserve.Record) {
	taken := map[string]bool{}
	for _, r := range rec.Resources {
		if r.File != nil && r.File.Path != "" && !strings.ContainsAny(r.File.Path, "%\r\n") {
			taken[r.File.Path] = true
		}
	}
	for _, r := range rec.Resources {
		f := r.File
		if f == nil || f.Path == "" || !strings.ContainsAny(f.Path, "%\r\n") {
			continue
		}
		dir, name := path.Split(f.Path)
		name = strings.NewReplacer("%", "_", "\r", "_", "\n", "_").Replace(name)
		p := dir + name
		if taken[p] {
			p = dir + r.ID + "-" + name
		}
		taken[p] = true
		f.Path = p
	}
}
