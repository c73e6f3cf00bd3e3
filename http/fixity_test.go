package http

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/fixity"
	"github.com/shelfmark/shelfmark/ocfl"
	"github.com/shelfmark/shelfmark/preserve"
)

// laterVersions is the server's PreservedVersions, given its preserver
// once the stack is built.
type laterVersions struct{ p *preserve.Preserver }

func (l *laterVersions) ObjectVersions(ctx context.Context, id shelfmark.ID) ([]shelfmark.ObjectVersion, error) {
	return l.p.ObjectVersions(ctx, id)
}

// TestFixityOverHTTP: a file whose bytes a fixity pass found damaged in
// both the content store and the preservation copy fails its download
// with a JSON error before any byte (never a 200 that looks whole), while
// a whole file of the same work downloads; its events show the failed
// checks and recoveries as PREMIS 3 XML that validates, and the work's
// events list its ingestion and the versions of its object; an anonymous
// caller gets 404 for the events of a private work, as for the work.
func TestFixityOverHTTP(t *testing.T) {
	onBackends(t, func(t *testing.T, backend string) {
		lv := &laterVersions{}
		e := newPolicyEnv(t, backend, Options{Versions: lv})
		ctx := context.Background()
		fsys, err := ocfl.NewDirFS(filepath.Join(t.TempDir(), "ocfl"))
		if err != nil {
			t.Fatal(err)
		}
		root, err := ocfl.InitRoot(ctx, fsys)
		if err != nil {
			t.Fatal(err)
		}
		later := func() time.Time { return time.Now().Add(time.Hour) } // every change is past its window
		lv.p = preserve.New(e.store, e.blobs, root, e.repo.IDs(), preserve.Options{Now: later})
		good, bad := make([]byte, 100<<10), make([]byte, 120<<10)
		for i := range good {
			good[i] = byte(i * 3)
		}
		for i := range bad {
			bad[i] = byte(i * 5)
		}
		ws := e.createAll(ctx, []*shelfmark.NewResource{{Kind: shelfmark.KindWork, Visibility: shelfmark.Public},
			{Kind: shelfmark.KindWork, Visibility: shelfmark.Private}})
		w, private := ws[0], ws[1]
		sets := e.createAll(ctx, []*shelfmark.NewResource{{Kind: shelfmark.KindFileSet, Parent: w.ID}, {Kind: shelfmark.KindFileSet, Parent: w.ID}})
		gf, bf := e.putBytes("good.bin", "application/octet-stream", good), e.putBytes("bad.bin", "application/octet-stream", bad)
		files := e.createAll(ctx, []*shelfmark.NewResource{{Kind: shelfmark.KindFile, Parent: sets[0].ID, File: gf},
			{Kind: shelfmark.KindFile, Parent: sets[1].ID, File: bf}})
		if _, _, err := lv.p.CatchUp(ctx); err != nil {
			t.Fatal(err)
		}

		// before any damage: the work's events
		var log struct {
			ID     string `json:"id"`
			Events []struct {
				Type, Outcome, Copy string
			} `json:"events"`
		}
		e.do("GET", resPath(w.ID, "/events"), nil, as("")...).want(t, 200).json(t, &log)
		// (a version's date is kept to the second: it may sort first)
		if len(log.Events) != 2 || log.Events[0].Type == log.Events[1].Type ||
			(log.Events[0].Type != shelfmark.EventIngestion && log.Events[0].Type != shelfmark.EventReplication) ||
			(log.Events[1].Type != shelfmark.EventIngestion && log.Events[1].Type != shelfmark.EventReplication) {
			t.Fatalf("the work's events: %+v", log)
		}
		e.do("GET", resPath(private.ID, "/events"), nil, as("")...).wantError(t, 404, shelfmark.ENOTFOUND)
		e.do("GET", resPath(w.ID, "/events"), nil, as("", "Accept", "text/csv")...).wantError(t, 406, shelfmark.ENOTACCEPTABLE)

		// both copies of bad.bin damaged
		blobFile := filepath.Join(e.blobDir, bf.SHA256[0:2], bf.SHA256[2:4], bf.SHA256)
		damage(t, blobFile)
		obj, err := root.Open(ctx, preserve.ObjectID(w.ID))
		if err != nil {
			t.Fatal(err)
		}
		for _, cf := range obj.ContentFiles() {
			if strings.HasSuffix(cf.Path, "/bad.bin") {
				damage(t, filepath.Join(fsys.Dir(), filepath.FromSlash(cf.Path)))
			}
		}
		c, err := fixity.New(e.store, e.blobs, root, e.repo.IDs(), fixity.Options{Rate: -1, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		sum, err := c.Pass(ctx)
		if err != nil || sum.Damaged != 2 {
			t.Fatalf("the pass: %+v, %v", sum, err)
		}

		r := e.do("GET", resPath(files[1].ID, "/content"), nil, as("")...)
		apiErr := r.wantError(t, 500, shelfmark.EINTERNAL)
		if !strings.Contains(apiErr.Message, "damaged") || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
			t.Errorf("the damaged file's download: %s %q", r.Header.Get("Content-Type"), apiErr.Message)
		}
		if bytes.Contains(r.Body, bad[:64]) {
			t.Error("the damaged file's download carries its bytes")
		}
		e.do("GET", resPath(files[1].ID, "/content"), nil, as("", "Range", "bytes=0-9")...).wantError(t, 500, shelfmark.EINTERNAL)
		if got := e.do("GET", resPath(files[0].ID, "/content"), nil, as("")...).want(t, 200).Body; !bytes.Equal(got, good) {
			t.Errorf("the whole file's download: %d bytes", len(got))
		}

		// the damaged file's events, as PREMIS XML
		r = e.do("GET", resPath(files[1].ID, "/events"), nil, as("", "Accept", "application/xml")...).want(t, 200)
		if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/xml") {
			t.Errorf("content type %q", ct)
		}
		for _, want := range []string{"<eventType", ">fixity check<", ">recovery<", ">failure<", "urn:shelfmark:" + string(files[1].ID), "SHA-256"} {
			if !bytes.Contains(r.Body, []byte(want)) {
				t.Errorf("the events lack %s:\n%s", want, r.Body)
			}
		}
		validateXSD(t, r.Body)
		var flog struct {
			Events []struct{ Type, Outcome, Copy string } `json:"events"`
		}
		e.do("GET", resPath(files[1].ID, "/events"), nil, as("")...).want(t, 200).json(t, &flog)
		failed := map[string]bool{}
		for _, ev := range flog.Events {
			if ev.Type == shelfmark.EventFixityCheck && ev.Outcome == shelfmark.OutcomeFailure {
				failed[ev.Copy] = true
			}
		}
		if !failed[shelfmark.CopyStore] || !failed[shelfmark.CopyOCFL] {
			t.Errorf("the failed checks of both copies: %+v", flog.Events)
		}
	})
}

// damage flips one byte in the middle of the file at path.
func damage(t *testing.T, path string) {
	t.Helper()
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 1
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// validateXSD validates a PREMIS document with xmllint against the
// schema kept in api/testdata.
func validateXSD(t *testing.T, doc []byte) {
	t.Helper()
	bin, err := exec.LookPath("xmllint")
	if err != nil {
		if os.Getenv("SHELFMARK_REQUIRE_TOOLS") == "1" {
			t.Fatal("xmllint is not installed")
		}
		t.Skip("xmllint is not installed")
	}
	cmd := exec.Command(bin, "--noout", "--nonet", "--schema", filepath.Join("api", "testdata", "premis-v3-0.xsd"), "-")
	cmd.Stdin = bytes.NewReader(doc)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("xmllint: %v\n%s", err, out)
	}
}
