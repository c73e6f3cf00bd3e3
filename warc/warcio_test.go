package warc

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestWarcioAgrees writes generated crawls and checks that warcio (the
// Webrecorder library pywb reads WARCs with) finds the same records at
// the same offsets and lengths as Reader, and that their digests verify.
func TestWarcioAgrees(t *testing.T) {
	py := venvPython(t, "warcio")
	for _, gz := range []bool{false, true} {
		for _, v := range []string{"1.0", "1.1"} {
			t.Run(fmt.Sprintf("gzip=%v/%s", gz, v), func(t *testing.T) {
				var buf bytes.Buffer
				w := NewWriter(&buf, gz, v)
				if v == "1.0" {
					w.SetLevel(gzip.NoCompression) // stored members
				}
				w.WriteWarcinfoAt(t0, "gen.warc", [][2]string{{"software", "shelfmark"}})
				for i := range 40 {
					target := fmt.Sprintf("http://www.example.com/p/%d?x=%d", i, i%3)
					at := t0.Add(time.Duration(i) * time.Minute)
					switch i % 5 {
					case 0, 1:
						w.WriteResponse(target, at, 200, "text/html", []byte(fmt.Sprintf(`<a href="/p/%d">n</a>`, i+1)))
					case 2:
						w.WriteResponse(target, at, 404, "image/png", bytes.Repeat([]byte{0x89, 'P'}, i*50))
					case 3:
						w.WriteMetadataWAT(target, at, []string{"/a", "http://other.example/"})
					case 4:
						w.WriteRecord("request", [][2]string{{"WARC-Target-URI", target}, {"WARC-Date", at.Format(time.RFC3339)}, {"Content-Type", "application/http;msgtype=request"}},
							[]byte("GET / HTTP/1.1\r\nHost: www.example.com\r\n\r\n"))
						w.WriteRecord("resource", [][2]string{{"WARC-Target-URI", target + "&r"}, {"WARC-Date", at.Format(time.RFC3339)}, {"Content-Type", "text/plain"}}, []byte("plain text"))
					}
				}
				name := "gen.warc"
				if gz {
					name += ".gz"
				}
				path := filepath.Join(t.TempDir(), name)
				if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				cli := `import sys; from warcio.cli import main; main(sys.argv[1:])`
				out, err := exec.Command(py, "-c", cli, "index", "-f", "offset,length,warc-target-uri,warc-type", path).Output()
				if err != nil {
					t.Fatalf("warcio index: %v", err)
				}
				type entry struct {
					Offset, Length string
					Target         string `json:"warc-target-uri"`
					Type           string `json:"warc-type"`
				}
				var theirs []entry
				for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
					var e entry
					var raw map[string]any
					if err := json.Unmarshal([]byte(line), &raw); err != nil {
						t.Fatalf("warcio line %q: %v", line, err)
					}
					e.Offset, e.Length = fmt.Sprint(raw["offset"]), fmt.Sprint(raw["length"])
					e.Target, _ = raw["warc-target-uri"].(string)
					e.Type, _ = raw["warc-type"].(string)
					theirs = append(theirs, e)
				}
				ours, errs := readAll(t, buf.Bytes(), 0)
				if len(errs) != 0 {
					t.Fatal(errs)
				}
				if len(ours) != len(theirs) {
					t.Fatalf("%d records, warcio finds %d", len(ours), len(theirs))
				}
				for i, o := range ours {
					e := theirs[i]
					if strconv.FormatInt(o.Offset, 10) != e.Offset || strconv.FormatInt(o.Length, 10) != e.Length || o.Type != e.Type {
						t.Errorf("record %d: offset %d length %d %s; warcio: %s %s %s", i, o.Offset, o.Length, o.Type, e.Offset, e.Length, e.Type)
					}
					if e.Target != "" {
						c, err := Canonical(e.Target)
						if err != nil || c != o.Target {
							t.Errorf("record %d: target %+v; warcio: %s", i, o.Target, e.Target)
						}
					}
				}
				if out, err := exec.Command(py, "-c", cli, "check", "-v", path).CombinedOutput(); err != nil {
					t.Errorf("warcio check: %v\n%s", err, out)
				}
			})
		}
	}
}
