package gen

import (
	"bytes"
	"encoding/xml"
	"fmt"
)

// patentXMLSize is the size PatentXML aims at (docs/design.md: one 4 KB XML file
// per work); documents come out between it and about 150 bytes more.
const patentXMLSize = 4000

// PatentXML returns a well-formed full-text patent document of about 4 KB
// (bibliographic data, abstract, description paragraphs and claims), with
// the same title and EP number as the bench package's patent metadata for
// the same index.
func PatentXML(seed uint64, i int) []byte {
	r := rng(seed, i, saltXML)
	var head, tail bytes.Buffer
	esc := func(b *bytes.Buffer, s string) { _ = xml.EscapeText(b, []byte(s)) }
	date := fmt.Sprintf("%04d%02d%02d", 1980+r.IntN(45), 1+r.IntN(12), 1+r.IntN(28))
	fmt.Fprintf(&head, `<?xml version="1.0" encoding="UTF-8"?>
<patent-document lang="en" country="EP" doc-number="%07d" kind="A1" date-publ="%s">
  <bibliographic-data>
    <publication-reference><document-id><country>EP</country><doc-number>%07d</doc-number><kind>A1</kind><date>%s</date></document-id></publication-reference>
    <classification-ipc>G06F %d/%02d</classification-ipc>
    <invention-title lang="en">`, i, date, i, date, r.IntN(100), r.IntN(100))
	esc(&head, fmt.Sprintf("Apparatus for the storage of shelfmarks, variant %d", i))
	fmt.Fprintf(&head, `</invention-title>
    <parties>
      <applicant><name>Shelfmark Works %d</name><country>DE</country></applicant>
      <inventor><name>Inventor %d</name></inventor>
    </parties>
  </bibliographic-data>
  <abstract lang="en"><p>`, r.IntN(1000), r.IntN(100000))
	for range 3 {
		head.WriteString(sentence(r, 8+r.IntN(8)) + " ")
	}
	head.WriteString("</p></abstract>\n  <description lang=\"en\">\n    <heading>Technical field</heading>\n")

	tail.WriteString("  </description>\n  <claims lang=\"en\">\n")
	for c := 1; c <= 3; c++ {
		fmt.Fprintf(&tail, "    <claim num=\"%d\"><claim-text>%s</claim-text></claim>\n", c, sentence(r, 10+r.IntN(10)))
	}
	tail.WriteString("  </claims>\n</patent-document>\n")

	var body bytes.Buffer
	for p := 1; head.Len()+body.Len()+tail.Len() < patentXMLSize; p++ {
		fmt.Fprintf(&body, "    <p num=\"%04d\">", p)
		for s := 0; s < 4 && head.Len()+body.Len()+tail.Len() < patentXMLSize; s++ {
			body.WriteString(sentence(r, 6+r.IntN(10)) + " ")
		}
		body.WriteString("</p>\n")
	}
	out := append(head.Bytes(), body.Bytes()...)
	return append(out, tail.Bytes()...)
}
