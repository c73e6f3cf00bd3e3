package ingest

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/bagit"
	"github.com/shelfmark/shelfmark/preserve"
)

// shelfBag writes a bag that says it is a Shelfmark bag, holding rec as
// data/object.json, ttl as data/metadata.ttl and files, with manifests
// that match: only the record and the payload can disagree.
func shelfBag(t *testing.T, rec *preserve.Record, ttl string, files map[string]string) string {
	t.Helper()
	js, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	body := func(p, s string) bagit.File {
		return bagit.File{Path: p, Open: func(context.Context) (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(s)), nil }}
	}
	payload := []bagit.File{body("object.json", string(js)), body("metadata.ttl", ttl)}
	for p, s := range files {
		payload = append(payload, body(p, s))
	}
	dir := filepath.Join(t.TempDir(), rec.ID)
	if _, err := bagit.Write(context.Background(), dir, bagit.Bag{Info: []bagit.Field{{Label: ShelfmarkRecordLabel, Value: "object.json"}}, Payload: payload}); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestShelfmarkBag: a Shelfmark bag is read as the work it describes
// (kind, access, file sets in order with their metadata, originals,
// memberships as source keys), keyed by its old id; a bag whose record
// and payload disagree (a named original missing, a payload file the
// record does not name, another size, a newer record format, a record
// that is not one) is a bad item, although its manifests are right.
func TestShelfmarkBag(t *testing.T) {
	rec := func() *preserve.Record {
		return &preserve.Record{Shelfmark: 1, ID: "w1", Resources: []preserve.Resource{
			{ID: "w1", Kind: "work", Visibility: "authenticated", MemberOf: []string{"c1"}},
			{ID: "s2", Kind: "fileset", Parent: "w1", Position: 1, Visibility: "public"},
			{ID: "f2", Kind: "file", Parent: "s2", Visibility: "public", File: &preserve.File{Name: "two.txt", MediaType: "text/plain", Size: 3, SHA256: sha("two"), Use: "original", Path: "files/s2/two.txt"}},
			{ID: "d2", Kind: "file", Parent: "s2", Visibility: "public", File: &preserve.File{Name: "thumb.jpg", Size: 9, Use: "thumbnail"}},
			{ID: "s1", Kind: "fileset", Parent: "w1", Position: 2, Visibility: "private"},
			{ID: "f1", Kind: "file", Parent: "s1", Visibility: "public", File: &preserve.File{Name: "one.txt", Size: 3, SHA256: sha("one"), Use: "original", Path: "files/s1/one.txt"}},
		}}
	}
	ttl := `<urn:shelfmark:w1> <http://purl.org/dc/elements/1.1/title> "Work"@en .
<urn:shelfmark:s1> <http://purl.org/dc/elements/1.1/title> "p. 2" .
<urn:shelfmark:s2> <http://purl.org/dc/elements/1.1/title> "p. 1" .
`
	files := map[string]string{"files/s2/two.txt": "two", "files/s1/one.txt": "one"}
	read := func(dir string) (*Item, error) {
		src, err := OpenBag(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer src.Close()
		return src.Next(context.Background())
	}
	it, err := read(shelfBag(t, rec(), ttl, files))
	if err != nil {
		t.Fatal(err)
	}
	if it.Key != "shelfmark:w1" || !it.Structured || it.Kind != shelfmark.KindWork || it.Access.Visibility != shelfmark.Authenticated ||
		len(it.MemberKeys) != 1 || it.MemberKeys[0] != "shelfmark:c1" || len(it.Metadata) != 1 || it.Metadata[0].Object.Lang != "en" {
		t.Fatalf("item %+v", it)
	}
	if len(it.Sets) != 2 || it.Sets[0].Metadata[0].Object.Value != "p. 1" || it.Sets[1].Access.Visibility != shelfmark.Private ||
		len(it.Sets[0].Files) != 1 || it.Sets[0].Files[0].Name != "two.txt" || it.Sets[0].Files[0].SHA256 != sha("two") ||
		!strings.HasPrefix(it.Sets[1].Files[0].MediaType, "text/plain") {
		t.Fatalf("sets %+v", it.Sets)
	}

	bad := map[string]func() (*preserve.Record, map[string]string){
		"a named original missing": func() (*preserve.Record, map[string]string) {
			return rec(), map[string]string{"files/s2/two.txt": "two"}
		},
		"a payload file the record does not name": func() (*preserve.Record, map[string]string) {
			return rec(), map[string]string{"files/s2/two.txt": "two", "files/s1/one.txt": "one", "files/s1/extra.txt": "x"}
		},
		"another size": func() (*preserve.Record, map[string]string) {
			r := rec()
			r.Resources[2].File.Size = 4
			return r, files
		},
		"another sha-256": func() (*preserve.Record, map[string]string) {
			r := rec()
			r.Resources[2].File.SHA256 = sha("owt")
			return r, files
		},
		"a newer record format": func() (*preserve.Record, map[string]string) {
			r := rec()
			r.Shelfmark = preserve.FormatVersion + 1
			return r, files
		},
		"a file on the work itself": func() (*preserve.Record, map[string]string) {
			r := rec()
			r.Resources[2].Parent = "w1"
			return r, files
		},
		"a file outside a file set": func() (*preserve.Record, map[string]string) {
			r := rec()
			r.Resources[2].Parent = "nowhere"
			return r, files
		},
	}
	for what, f := range bad {
		r, fs := f()
		_, err := read(shelfBag(t, r, ttl, fs))
		var ie *ItemError
		if !errors.As(err, &ie) {
			t.Fatalf("a bag with %s: %v", what, err)
		}
		t.Logf("%s: %s", what, ie.Reason)
	}
}
