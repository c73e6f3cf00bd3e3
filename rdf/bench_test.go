package rdf

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/shelfmark/shelfmark"
)

// patentTurtle returns a Turtle document of a patent record with 54
// statements, the mean of the patents scenario.
func patentTurtle() string {
	var b strings.Builder
	b.WriteString(`@prefix dcterms: <http://purl.org/dc/terms/> .
@prefix dc: <http://purl.org/dc/elements/1.1/> .
@prefix bibo: <http://purl.org/ontology/bibo/> .
@prefix schema: <http://schema.org/> .
@prefix pcdm: <http://pcdm.org/models#> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .

<> a pcdm:Object, bibo:Patent ;
    dcterms:identifier "EP1234567B1", "WO2001012345A1" ;
    dcterms:title "Verfahren zur Herstellung eines Verbundwerkstoffs"@de, "Method for producing a composite material"@en, "Procédé de fabrication d'un matériau composite"@fr ;
    dcterms:abstract """A composite material is produced by laminating fibre layers
and curing them under pressure; the \"process\" reduces voids."""@en ;
    dcterms:issued "2003-05-14"^^xsd:date ;
    dcterms:dateSubmitted "2001-02-09"^^xsd:date ;
    dcterms:language "de" ;
    schema:numberOfPages 24 ;
    dcterms:isPartOf <http://example.org/collections/patents> ;
`)
	for i := 0; i < 10; i++ {
		fmt.Fprintf(&b, "    dc:creator \"Inventor %d, Given\" ;\n", i)
	}
	for i := 0; i < 15; i++ {
		fmt.Fprintf(&b, "    dcterms:subject \"B32B %d/%02d\", <http://example.org/ipc/B32B-%d> ;\n", i, i*3, i)
	}
	b.WriteString("    dcterms:rights <http://rightsstatements.org/vocab/InC/1.0/> .\n")
	return b.String()
}

// patentStatements returns the statements of patentTurtle.
func patentStatements(tb testing.TB) []shelfmark.Statement {
	ts, err := Parse(strings.NewReader(patentTurtle()), Turtle, testBase)
	if err != nil {
		tb.Fatal(err)
	}
	if len(ts) != 54 {
		tb.Fatalf("the patent has %d triples, want 54", len(ts))
	}
	return statements(ts)
}

func BenchmarkParseTurtle54(b *testing.B) {
	doc := []byte(patentTurtle())
	patentStatements(b)
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(bytes.NewReader(doc), Turtle, testBase); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkWriteTurtle54(b *testing.B) {
	stmts := patentStatements(b)
	b.ReportAllocs()
	for b.Loop() {
		if err := Write(io.Discard, Turtle, testBase, stmts); err != nil {
			b.Fatal(err)
		}
	}
}

// benchParse measures Parse on the patent written in mediaType.
func benchParse(b *testing.B, mediaType string) {
	var buf bytes.Buffer
	if err := Write(&buf, mediaType, testBase, patentStatements(b)); err != nil {
		b.Fatal(err)
	}
	doc := buf.Bytes()
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(bytes.NewReader(doc), mediaType, testBase); err != nil {
			b.Fatal(err)
		}
	}
}

// benchWrite measures Write of the patent in mediaType.
func benchWrite(b *testing.B, mediaType string) {
	stmts := patentStatements(b)
	b.ReportAllocs()
	for b.Loop() {
		if err := Write(io.Discard, mediaType, testBase, stmts); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseNTriples54(b *testing.B) { benchParse(b, NTriples) }
func BenchmarkWriteNTriples54(b *testing.B) { benchWrite(b, NTriples) }
func BenchmarkParseJSONLD54(b *testing.B)   { benchParse(b, JSONLD) }
func BenchmarkWriteJSONLD54(b *testing.B)   { benchWrite(b, JSONLD) }
func BenchmarkWriteJSON54(b *testing.B)     { benchWrite(b, JSON) }

func BenchmarkParseJSONMetadata54(b *testing.B) {
	raw := JSONMetadata(patentStatements(b))
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseJSONMetadata(raw); err != nil {
			b.Fatal(err)
		}
	}
}
