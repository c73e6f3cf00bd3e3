package bench

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark/ingest"
)

// drain reads every item of src with the bytes of each file.
func drain(t *testing.T, src ingest.Source) ([]*ingest.Item, [][][]byte) {
	t.Helper()
	defer src.Close()
	var items []*ingest.Item
	var data [][][]byte
	for {
		it, err := src.Next(context.Background())
		if errors.Is(err, io.EOF) {
			return items, data
		}
		if err != nil {
			t.Fatal(err)
		}
		var files [][]byte
		for _, f := range it.Files {
			r, err := f.Open()
			if err != nil {
				t.Fatal(err)
			}
			b, err := io.ReadAll(r)
			r.Close()
			if err != nil {
				t.Fatal(err)
			}
			if int64(len(b)) != f.Size {
				t.Fatalf("%s: size %d, read %d", f.Name, f.Size, len(b))
			}
			files = append(files, b)
		}
		items, data = append(items, it), append(data, files)
	}
}

// TestPatentSourceDeterministic: the same seed gives the same keys,
// metadata and bytes; another seed other bytes.
func TestPatentSourceDeterministic(t *testing.T) {
	a, ab := drain(t, PatentSource(7, 300))
	b, bb := drain(t, PatentSource(7, 300))
	if len(a) != 300 || len(b) != 300 {
		t.Fatalf("%d, %d items", len(a), len(b))
	}
	for i := range a {
		if a[i].Key != fmt.Sprintf("patent:EP%07d", i) || a[i].Key != b[i].Key ||
			!reflect.DeepEqual(a[i].Metadata, b[i].Metadata) || !reflect.DeepEqual(ab[i], bb[i]) {
			t.Fatalf("item %d differs between runs", i)
		}
		for j, f := range a[i].Files {
			if f.Name != b[i].Files[j].Name || f.MediaType != b[i].Files[j].MediaType {
				t.Fatalf("item %d file %d: %+v vs %+v", i, j, f, b[i].Files[j])
			}
		}
		if i > 0 && bytes.Equal(ab[i][0], ab[i-1][0]) {
			t.Fatalf("items %d and %d share their XML", i-1, i)
		}
	}
	// beyond the templates, a work's XML carries its own number and title
	x := ab[260][0]
	if !bytes.Contains(x, []byte(`doc-number="0000260"`)) || !bytes.Contains(x, []byte("<doc-number>0000260<")) ||
		!bytes.Contains(x, []byte(", variant 260<")) || bytes.Contains(x, []byte("0000004")) || bytes.Equal(x, ab[4][0]) {
		t.Fatalf("XML of item 260:\n%s", x)
	}
	for d := xml.NewDecoder(bytes.NewReader(x)); ; {
		if _, err := d.Token(); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("XML of item 260: %v", err)
		}
	}
	_, cb := drain(t, PatentSource(8, 1))
	if bytes.Equal(ab[0][0], cb[0][0]) {
		t.Fatal("seeds 7 and 8 give the same XML")
	}
}

// TestPatentSourceShape: 31–69 statements, mean about 54; about half the
// items have an XML, a PDF and an image, the rest the XML alone.
func TestPatentSourceShape(t *testing.T) {
	items, data := drain(t, PatentSource(1, 1000))
	total, three := 0, 0
	for i, it := range items {
		k := len(it.Metadata)
		if k < 31 || k > 69 {
			t.Fatalf("item %d: %d statements", i, k)
		}
		total += k
		switch len(it.Files) {
		case 3:
			three++
			if it.Files[1].MediaType != "application/pdf" || !bytes.HasPrefix(data[i][1], []byte("%PDF-")) ||
				it.Files[2].MediaType != "image/tiff" || !bytes.HasPrefix(data[i][2], []byte("II*\x00")) {
				t.Fatalf("item %d: files %+v", i, it.Files)
			}
		case 1:
		default:
			t.Fatalf("item %d: %d files", i, len(it.Files))
		}
		if f := it.Files[0]; f.MediaType != "application/xml" || f.Name != fmt.Sprintf("EP%07d.xml", i) ||
			f.Size < 3500 || f.Size > 5000 || !bytes.HasPrefix(data[i][0], []byte("<?xml")) {
			t.Fatalf("item %d: XML %+v", i, f)
		}
	}
	if m := float64(total) / 1000; m < 50 || m > 58 {
		t.Fatalf("mean statements %.1f", m)
	}
	if three < 420 || three > 580 {
		t.Fatalf("%d of 1000 items have 3 files", three)
	}
	t.Logf("mean statements %.1f, %d items with 3 files", float64(total)/1000, three)
}

// TestRunPatents: every work is stored and findable by its key; a re-run
// over the same store skips them all.
func TestRunPatents(t *testing.T) {
	ctx := context.Background()
	repo, blobs := labRepo(t)
	rep, err := RunPatents(ctx, repo, blobs, PatentsConfig{Works: 300, Workers: 2, Batch: 32, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	var sum int64
	for _, s := range rep.Steps {
		sum += s.Items
	}
	if rep.Scenario != "patents" || rep.Items != 300 || rep.Errors != 0 || sum != 300 || len(rep.Steps) != 20 || rep.RatePerS <= 0 {
		t.Fatalf("%+v", rep)
	}
	if files := rep.Params["files"].(int64); files < 300+2*120 || files > 300+2*180 {
		t.Fatalf("%d files", files)
	}
	keys := []string{"patent:EP0000000", "patent:EP0000150", "patent:EP0000299"}
	found, err := repo.FindSources(ctx, append(keys, "patent:EP0000300"))
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if found[k] == "" {
			t.Fatalf("%s not found: %v", k, found)
		}
	}
	if _, ok := found["patent:EP0000300"]; ok {
		t.Fatal("a work beyond the run was found")
	}
	again, err := RunPatents(ctx, repo, blobs, PatentsConfig{Works: 300, Workers: 2, Batch: 32, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	if again.Items != 0 || again.Params["skipped"].(int64) != 300 || again.Errors != 0 {
		t.Fatalf("re-run: %+v", again)
	}
}

// TestBucketSteps: items are counted in the wall-time bucket they were
// stored in, and flatness compares the last tenth with the first.
func TestBucketSteps(t *testing.T) {
	s := []progressSample{{0, 0}, {time.Second, 10}, {3 * time.Second, 20}, {4 * time.Second, 40}}
	steps := bucketSteps(s, 4*time.Second, 4)
	var got []int64
	for _, st := range steps {
		got = append(got, st.Items)
	}
	if !reflect.DeepEqual(got, []int64{10, 0, 10, 20}) || steps[3].RatePerS != 20 {
		t.Fatalf("%+v", steps)
	}
	if f := flatness(steps); f != 2 {
		t.Fatalf("flatness %v", f)
	}
}

// TestRawFileLimit: the raw file limit writes files and reports a rate.
func TestRawFileLimit(t *testing.T) {
	r, err := RawFileLimit(t.TempDir(), 1, 100*time.Millisecond)
	if err != nil || r <= 0 {
		t.Fatal(r, err)
	}
}

// TestRawCreateLimit: the raw create limit makes directories and files,
// reports a rate, and leaves nothing behind.
func TestRawCreateLimit(t *testing.T) {
	dir := t.TempDir()
	r, err := RawCreateLimit(dir, 2, 100*time.Millisecond)
	if err != nil || r <= 0 {
		t.Fatal(r, err)
	}
	if left, err := os.ReadDir(dir); err != nil || len(left) != 0 {
		t.Fatalf("left behind: %v, %v", left, err)
	}
}
