package ingest

import (
	"bytes"
	"context"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"
)

func FuzzBagInfo(f *testing.F) {
	f.Add([]byte("Source-Organization: Example\nExternal-Description: a\n  b\n"))
	f.Add([]byte("\ufeffA: 1\r\nB:\r  c\rD"))
	f.Add([]byte(" x\n"))
	f.Add([]byte("Payload-Oxum: 1.2\n\n\n:\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		fields, err := ParseBagInfo(bytes.NewReader(data))
		if err != nil {
			return
		}
		for _, fl := range fields {
			if fl.Label == "" || strings.ContainsAny(fl.Label, ":\r\n") || strings.ContainsAny(fl.Value, "\r\n") {
				t.Fatalf("bad field %q", fl)
			}
			if p := BagInfoPredicate(fl.Label); hasBadIRIChar(p) {
				t.Fatalf("predicate %q of label %q is not an IRI", p, fl.Label)
			}
		}
	})
}

func FuzzCSVManifest(f *testing.F) {
	root := f.TempDir()
	writeFile(f, filepath.Join(root, "a.tif"), "a")
	writeFile(f, filepath.Join(root, "s", "b.tif"), "b")
	real, err := resolveRoot(root)
	if err != nil {
		f.Fatal(err)
	}
	f.Add([]byte("id,title,file,position,parent,dcterms:extent\na,A,a.tif|s/b.tif,2,p,1\na,,a.tif,1,p,\nb,\"x,\ny\",../etc,,,\n"))
	f.Add([]byte("source_identifier,file\nx,/etc/passwd\ny,a.tif\nx,a.tif\n"))
	f.Add([]byte("\"unterminated\n"))
	f.Add([]byte("title\n,\n\n\"\"\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := newCSVSource(io.NopCloser(bytes.NewReader(data)), real, "fuzz")
		if err != nil {
			return
		}
		defer s.Close()
		for range 10000 {
			item, err := s.Next(context.Background())
			if err == io.EOF {
				return
			}
			var ie *ItemError
			if errors.As(err, &ie) {
				continue
			}
			if err != nil {
				return // a syntax error ends the stream
			}
			for _, fr := range item.Files {
				if !within(real, fr.Path) {
					t.Fatalf("file %s outside the root", fr.Path)
				}
			}
			for _, st := range item.Metadata {
				if hasBadIRIChar(st.Predicate) || checkText(st.Object.Value) != "" {
					t.Fatalf("bad statement %+v", st)
				}
			}
		}
		t.Fatal("the source does not end")
	})
}
