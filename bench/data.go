package bench

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/shelfmark/shelfmark"
)

// patentStatements returns the metadata of a generated patent-like work
// (docs/design.md: 31–69 triples, mean 54, with the 15 Dublin Core elements
// among them), deterministic for a seed and index.
func patentStatements(seed uint64, i int, n int) []shelfmark.Statement {
	r := rand.New(rand.NewPCG(seed, uint64(i)))
	dc := shelfmark.NSDC
	out := []shelfmark.Statement{
		{Predicate: dc + "title", Object: shelfmark.NewLangLiteral(fmt.Sprintf("Apparatus for the storage of shelfmarks, variant %d", i), "en")},
		{Predicate: dc + "creator", Object: shelfmark.NewLiteral(fmt.Sprintf("Inventor %d", r.IntN(100000)))},
		{Predicate: dc + "subject", Object: shelfmark.NewIRI(fmt.Sprintf("http://www.example.org/ipc/G06F%d", r.IntN(100)))},
		{Predicate: dc + "description", Object: shelfmark.NewLangLiteral(strings.Repeat("A device comprising a shelf and a mark. ", 4), "en")},
		{Predicate: dc + "publisher", Object: shelfmark.NewLiteral("European Patent Office")},
		{Predicate: dc + "contributor", Object: shelfmark.NewLiteral(fmt.Sprintf("Agent %d", r.IntN(5000)))},
		{Predicate: dc + "date", Object: shelfmark.NewTypedLiteral(fmt.Sprintf("%d-%02d-%02d", 1980+r.IntN(45), 1+r.IntN(12), 1+r.IntN(28)), "http://www.w3.org/2001/XMLSchema#date")},
		{Predicate: dc + "type", Object: shelfmark.NewLiteral("Patent")},
		{Predicate: dc + "format", Object: shelfmark.NewLiteral("text/xml")},
		{Predicate: dc + "identifier", Object: shelfmark.NewLiteral(fmt.Sprintf("EP%07d", i))},
		{Predicate: dc + "source", Object: shelfmark.NewIRI(fmt.Sprintf("http://www.example.org/source/%d", i))},
		{Predicate: dc + "language", Object: shelfmark.NewLiteral("en")},
		{Predicate: dc + "relation", Object: shelfmark.NewIRI(fmt.Sprintf("http://www.example.org/family/%d", r.IntN(1000000)))},
		{Predicate: dc + "coverage", Object: shelfmark.NewLiteral("EP")},
		{Predicate: dc + "rights", Object: shelfmark.NewLiteral("Public domain")},
	}
	for j := len(out); j < n; j++ {
		out = append(out, shelfmark.Statement{Predicate: shelfmark.NSDCTerms + "references",
			Object: shelfmark.NewIRI(fmt.Sprintf("http://www.example.org/patent/EP%07d", r.IntN(10000000)))})
	}
	return out[:n]
}

// turtleOf writes statements about <> as Turtle.
func turtleOf(stmts []shelfmark.Statement) string {
	var b strings.Builder
	b.WriteString("<>")
	for i, s := range stmts {
		if i > 0 {
			b.WriteString(" ;\n  ")
		} else {
			b.WriteString("\n  ")
		}
		b.WriteString("<" + s.Predicate + "> ")
		switch {
		case s.Object.Kind == shelfmark.IRI:
			b.WriteString("<" + s.Object.Value + ">")
		default:
			fmt.Fprintf(&b, "%q", s.Object.Value)
			if s.Object.Lang != "" {
				b.WriteString("@" + s.Object.Lang)
			} else if s.Object.Datatype != "" {
				b.WriteString("^^<" + s.Object.Datatype + ">")
			}
		}
	}
	b.WriteString(" .\n")
	return b.String()
}
