package cite

import (
	"strings"
	"testing"

	"github.com/shelfmark/shelfmark"
)

// TestScholarDate: ISO dates become Google Scholar's slashes; others stay.
func TestScholarDate(t *testing.T) {
	for in, want := range map[string]string{"2024-03-05": "2024/03/05", "2024-03": "2024/03", "2024": "2024", "circa 1900": "circa 1900", "2024-03-05T10:00:00Z": "2024/03/05"} {
		if got := ScholarDate(in); got != want {
			t.Errorf("ScholarDate(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestFormats: a work's creator, title and year reach both formats.
func TestFormats(t *testing.T) {
	lit := func(p, v string) shelfmark.Statement {
		return shelfmark.Statement{Predicate: p, Object: shelfmark.Term{Kind: shelfmark.Literal, Value: v}}
	}
	c := Of([]shelfmark.Statement{lit(shelfmark.NSDC+"creator", "Lovelace, Ada"), lit(shelfmark.NSDCTerms+"issued", "1843-09")}, "Notes", "https://repo.example.org/works/w1")
	bib, ris := BibTeX("w1", c), RIS(c)
	for _, want := range []string{"Lovelace, Ada", "Notes", "1843"} {
		if !strings.Contains(bib, want) || !strings.Contains(ris, want) {
			t.Errorf("%q missing:\n%s\n%s", want, bib, ris)
		}
	}
}
