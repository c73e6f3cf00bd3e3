package storagetest

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/ingest"
	"github.com/shelfmark/shelfmark/warc"
)

// testWebCaptureTarget: a capture is listed under its own WARC-Target-URI,
// even when another URL of the same key (SURT) was known first. A site
// that redirects http://host/visit to https://www.host/visit/ has both
// URLs under one key (scheme, "www." and the trailing slash are not part
// of it); the redirect's capture is listed at http://host/visit and the
// page's at https://www.host/visit/, whichever of them the index met
// first: as a link of an earlier page, in the same batch or in an
// earlier one.
func testWebCaptureTarget(t *testing.T, open Opener) {
	const (
		home   = "http://portelwyn-museum.example/"
		visit  = "http://portelwyn-museum.example/visit"
		target = "https://www.portelwyn-museum.example/visit/"
	)
	t0 := time.Date(2024, 5, 2, 9, 0, 0, 0, time.UTC)
	// linked: the home page links to the redirect's target, so the key's
	// first URL is the target's; redirect: the redirect comes first
	for _, first := range []string{"linked", "redirect"} {
		var buf bytes.Buffer
		w := warc.NewWriter(&buf, true, "1.1")
		var want []string
		write := func(at time.Time, url string, status int, write func() (int64, int64, error)) {
			if _, _, err := write(); err != nil {
				t.Fatal(err)
			}
			want = append(want, fmt.Sprintf("%s %s %d", at.Format(time.RFC3339), url, status))
		}
		if first == "linked" {
			write(t0, home, 200, func() (int64, int64, error) {
				return w.WriteResponse(home, t0, 200, "text/html", []byte(`<html><body><a href="`+target+`">Visit</a></body></html>`))
			})
		}
		for day := range 2 {
			at := t0.Add(time.Duration(day) * 24 * time.Hour)
			write(at.Add(time.Second), visit, 301, func() (int64, int64, error) { return w.WriteRedirect(visit, at.Add(time.Second), 301, target) })
			write(at.Add(2*time.Second), target, 200, func() (int64, int64, error) {
				return w.WriteResponse(target, at.Add(2*time.Second), 200, "text/html", []byte(`<html><body><a href="/">Home</a></body></html>`))
			})
		}
		path := filepath.Join(t.TempDir(), first+".warc.gz")
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, batch := range []int{1000, 1, 2} {
			t.Run(fmt.Sprintf("%s-batch-%d", first, batch), func(t *testing.T) {
				checkCaptureTargets(t, open, path, batch, want, home, visit, target)
			})
		}
	}
}

// checkCaptureTargets ingests the WARC file at path in batches of batch
// records and checks that the captures of home's domain are want ("time
// URL status"), and that a lookup of visit or of target finds all of
// theirs.
func checkCaptureTargets(t *testing.T, open Opener, path string, batch int, want []string, home, visit, target string) {
	e := newEnv(t, open, shelfmark.RepositoryOptions{})
	blobs := localBlobs(t)
	ctx := shelfmark.WithCaller(context.Background(), shelfmark.SystemCaller("test"))
	st, err := ingest.IngestWARC(ctx, e.repo, blobs, []string{path}, ingest.WARCOptions{Crawl: "portelwyn", Batch: batch, Merge: 1})
	if err != nil || st.Files != 1 || st.Errors != 0 {
		t.Fatalf("ingest: %+v, %v", st, err)
	}
	u, err := warc.Canonical(home)
	if err != nil {
		t.Fatal(err)
	}
	p, err := e.repo.WebCaptures(ctx, shelfmark.WebCaptureQuery{SURT: u.SURT, Match: shelfmark.MatchDomain})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range p.Captures {
		got = append(got, fmt.Sprintf("%s %s %d", c.Time.Format(time.RFC3339), c.URL, c.Status))
		one, err := e.repo.WebCapture(ctx, c.ID)
		if err != nil {
			t.Fatal(err)
		}
		if one.URL != c.URL {
			t.Errorf("capture %d: listed at %s, read alone at %s", c.ID, c.URL, one.URL)
		}
	}
	slices.Sort(got)
	want = slices.Sorted(slices.Values(want))
	if !slices.Equal(got, want) {
		t.Errorf("captures:\n%q\nwant (each at its WARC-Target-URI)\n%q", got, want)
	}
	// the lookup of either URL finds both: they share a key
	for _, at := range []string{visit, target} {
		u, err := warc.Canonical(at)
		if err != nil {
			t.Fatal(err)
		}
		p, err := e.repo.WebCaptures(ctx, shelfmark.WebCaptureQuery{SURT: u.SURT})
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Captures) != 4 {
			t.Errorf("lookup of %s: %d captures, want 4", at, len(p.Captures))
		}
	}
}
