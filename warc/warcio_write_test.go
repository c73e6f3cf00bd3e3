package warc

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// warcioWriter writes a WARC with warcio's own WARCWriter: the records a
// crawler using it makes (response with HTTP headers, request, revisit,
// resource, metadata, warcinfo), in WARC 1.0 and 1.1, gzipped or not.
const warcioWriter = `
import sys, io
from warcio.warcwriter import WARCWriter
from warcio.statusandheaders import StatusAndHeaders
path, gz, version = sys.argv[1], sys.argv[2] == "1", sys.argv[3]
with open(path, "wb") as f:
    w = WARCWriter(f, gzip=gz, warc_version=version)
    w.write_record(w.create_warcinfo_record("x.warc", {"software": "warcio"}))
    for i in range(5):
        url = "http://www.example.com/p/%d" % i
        body = ('<html><a href="/p/%d">next</a><a href="http://other.example/">o</a></html>' % (i + 1)).encode()
        h = StatusAndHeaders("200 OK", [("Content-Type", "text/html; charset=utf-8"), ("Content-Length", str(len(body)))], protocol="HTTP/1.1")
        w.write_record(w.create_warc_record(url, "response", payload=io.BytesIO(body), http_headers=h))
        rq = StatusAndHeaders("GET /p/%d HTTP/1.1" % i, [("Host", "www.example.com")], is_http_request=True)
        w.write_record(w.create_warc_record(url, "request", payload=io.BytesIO(b""), http_headers=rq))
        w.write_record(w.create_revisit_record(url, "sha1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "http://www.example.com/p/0", "2024-05-01T12:00:00Z"))
        w.write_record(w.create_warc_record(url + ".txt", "resource", payload=io.BytesIO(b"text " * i), warc_content_type="text/plain"))
        w.write_record(w.create_warc_record(url, "metadata", payload=io.BytesIO(b"via: x\r\n"), warc_content_type="application/warc-fields"))
`

// TestReadsWarcioFiles reads WARCs warcio wrote and checks the records,
// offsets and lengths against warcio's index of them.
func TestReadsWarcioFiles(t *testing.T) {
	py := venvPython(t, "warcio")
	for _, gz := range []string{"0", "1"} {
		for _, v := range []string{"WARC/1.0", "WARC/1.1"} {
			t.Run(fmt.Sprintf("gzip=%s/%s", gz, v), func(t *testing.T) {
				path := filepath.Join(t.TempDir(), "w.warc")
				if out, err := exec.Command(py, "-c", warcioWriter, path, gz, v).CombinedOutput(); err != nil {
					t.Fatalf("warcio writer: %v\n%s", err, out)
				}
				out, err := exec.Command(py, "-c", `import sys; from warcio.cli import main; main(sys.argv[1:])`, "index", "-f", "offset,length,warc-type", path).Output()
				if err != nil {
					t.Fatalf("warcio index: %v", err)
				}
				var want []string
				for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
					var e map[string]any
					if err := json.Unmarshal([]byte(line), &e); err != nil {
						t.Fatal(err)
					}
					want = append(want, fmt.Sprintf("%v+%v %v", e["offset"], e["length"], e["warc-type"]))
				}
				data, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				recs, errs := readAll(t, data, 0)
				if len(errs) != 0 {
					t.Fatalf("errors %v", errs)
				}
				var got []string
				for _, r := range recs {
					got = append(got, fmt.Sprintf("%d+%d %s", r.Offset, r.Length, r.Type))
				}
				if strings.Join(got, "\n") != strings.Join(want, "\n") {
					t.Fatalf("records:\n%s\nwarcio:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
				}
				p := recs[1]
				if p.Type != "response" || p.Status != 200 || p.MIME != "text/html" || len(p.Links) != 2 || p.Links[0].URL != "http://www.example.com/p/1" || p.Digest == "" || p.RecordID == "" {
					t.Errorf("response %+v", p)
				}
				if r := recs[3]; r.Type != "revisit" || r.Digest != "sha1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA" || r.Target.URL != "http://www.example.com/p/0" {
					t.Errorf("revisit %+v", r)
				}
			})
		}
	}
}
