package marc

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

func seedFiles(f *testing.F, pats ...string) {
	dir := filepath.Join(pymarcDir(f), "test")
	n := 0
	for _, p := range pats {
		m, _ := filepath.Glob(filepath.Join(dir, p))
		for _, fn := range m {
			b, err := os.ReadFile(fn)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(b)
			n++
		}
	}
	if n == 0 {
		f.Fatalf("no seed files in %s (run scripts/testdeps.sh)", dir)
	}
}

// checkWritable checks that a record returned by a reader can be written
// as well-formed MARCXML (or is refused with an error, for tags the schema
// cannot express) and that the XML reads back as one record.
func checkWritable(t *testing.T, rec *Record) {
	if len(rec.Leader) != LeaderLen {
		t.Fatalf("leader %q", rec.Leader)
	}
	x, err := AppendXML(nil, rec)
	if err != nil {
		return
	}
	if !utf8.Valid(x) {
		t.Fatalf("invalid UTF-8 in XML output")
	}
	d := xml.NewDecoder(bytes.NewReader(x))
	for {
		_, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("output is not well-formed XML: %v\n%q", err, x)
		}
	}
	recs, errs, err := readXMLAll(t, x)
	if err != nil || len(recs) != 1 || errs[0] != nil {
		t.Fatalf("output does not read back: %v %v\n%q", err, errs, x)
	}
}

func FuzzReader(f *testing.F) {
	seedFiles(f, "*.dat", "*.mrc")
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, lenient := range []bool{false, true} {
			r := NewReader(bytes.NewReader(data))
			r.Lenient = lenient
			for i := 0; ; i++ {
				if i > len(data)+1 {
					t.Fatal("reader does not make progress")
				}
				rec, err := r.Next()
				if err == io.EOF {
					break
				}
				var re *RecordError
				if err != nil {
					if !errors.As(err, &re) {
						t.Fatalf("unexpected error type %T: %v", err, err)
					}
					if re.Position != i+1 {
						t.Fatalf("position %d, want %d", re.Position, i+1)
					}
					continue
				}
				if !utf8.ValidString(rec.Leader) {
					t.Fatal("invalid UTF-8 leader")
				}
				for _, f := range rec.Fields {
					for _, s := range f.Subfields {
						if !utf8.ValidString(s.Value) {
							t.Fatalf("invalid UTF-8 in %s", f.Tag)
						}
					}
					if !utf8.ValidString(f.Value) {
						t.Fatalf("invalid UTF-8 in %s", f.Tag)
					}
				}
				checkWritable(t, rec)
				if !lenient {
					b, err := Marshal(rec)
					if err == nil {
						back, err := Decode(b)
						if err != nil {
							t.Fatalf("Decode(Marshal(rec)): %v", err)
						}
						if len(back.Fields) != len(rec.Fields) {
							t.Fatal("ISO 2709 round trip lost fields")
						}
					}
				}
			}
		}
	})
}

func FuzzXMLReader(f *testing.F) {
	seedFiles(f, "*.xml")
	f.Add([]byte(`<record><leader>00000nam a2200000 a 4500</leader><datafield tag="245" ind1="1" ind2="0"><subfield code="a">x</subfield></datafield></record>`))
	f.Fuzz(func(t *testing.T, data []byte) {
		x := NewXMLReader(bytes.NewReader(data))
		for {
			rec, err := x.Next()
			if err == io.EOF {
				return
			}
			var re *RecordError
			if errors.As(err, &re) {
				continue
			}
			if err != nil {
				// Syntax and I/O errors end the stream for good.
				if _, err2 := x.Next(); err2 == nil || errors.As(err2, &re) {
					t.Fatalf("reader continued after %v", err)
				}
				return
			}
			checkWritable(t, rec)
		}
	})
}

func FuzzMARC8(f *testing.F) {
	for _, l := range bytes.Split(readTestFile(f, "test_marc8.txt"), []byte("\n"))[:200] {
		f.Add(l)
	}
	f.Add([]byte("CO\x1bb2\x1bs is a gas"))
	f.Add([]byte("\xe1\xf2a\x1b$1!!!\x1b(B"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := MARC8ToUTF8(data)
		if err != nil {
			if !errors.Is(err, errMARC8) {
				t.Fatalf("unexpected error %v", err)
			}
		} else if !utf8.ValidString(s) {
			t.Fatal("invalid UTF-8")
		}
		var d marc8Decoder
		d.reset()
		s, err = d.decode(data, true)
		if err != nil || !utf8.ValidString(s) {
			t.Fatalf("lenient decode: %q %v", s, err)
		}
		if n := normalizeNFC(s); normalizeNFC(n) != n {
			t.Fatalf("NFC not idempotent for %q", s)
		}
		if strings.ContainsRune(s, 0x1B) {
			t.Fatal("ESC in output")
		}
	})
}

func BenchmarkReadISO2709(b *testing.B) {
	data := bytes.Repeat(readTestFile(b, "test.dat"), 50)
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	n := 0
	for b.Loop() {
		r := NewReader(bytes.NewReader(data))
		for {
			_, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			n++
		}
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "records/s")
}

func BenchmarkReadMARCXML(b *testing.B) {
	recs, _ := readAll(b, readTestFile(b, "test.dat"), false)
	var doc bytes.Buffer
	doc.WriteString(`<collection xmlns="` + Namespace + `">`)
	for i := 0; i < 50; i++ {
		for _, r := range recs {
			x, err := AppendXML(nil, r)
			if err != nil {
				b.Fatal(err)
			}
			doc.Write(x)
		}
	}
	doc.WriteString(`</collection>`)
	data := doc.Bytes()
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	n := 0
	for b.Loop() {
		x := NewXMLReader(bytes.NewReader(data))
		for {
			_, err := x.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			n++
		}
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "records/s")
}
