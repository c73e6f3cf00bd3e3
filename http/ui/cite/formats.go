package cite

import (
	"strings"

	"github.com/shelfmark/shelfmark"
)

// BibTeX writes a citation as one BibTeX entry whose key is the work's id.
func BibTeX(id shelfmark.ID, c *Citation) string {
	typ := "misc"
	switch c.Type {
	case "book":
		typ = "book"
	case "article":
		typ = "article"
	case "thesis":
		typ = "phdthesis"
	}
	var b strings.Builder
	b.WriteString("@" + typ + "{" + bibKey(id) + ",\n")
	raw := func(name, v string) {
		if v != "" {
			b.WriteString("  " + name + " = {" + v + "},\n")
		}
	}
	field := func(name, v string) { raw(name, bibEscape(v)) }
	field("title", c.Title)
	raw("author", strings.Join(bibNames(c.Authors), " and "))
	raw("editor", strings.Join(bibNames(c.Editors), " and "))
	field("year", Year(c.Date))
	if c.Date != "" && c.Date != Year(c.Date) {
		field("date", c.Date)
	}
	switch c.Type {
	case "article":
		field("journal", c.Container)
	case "thesis":
		field("school", c.Publisher)
	default:
		field("publisher", c.Publisher)
	}
	field("edition", c.Edition)
	field("volume", c.Volume)
	field("number", c.Issue)
	pages := c.Pages
	if pages == "" && c.FirstPage != "" {
		pages = c.FirstPage
		if c.LastPage != "" {
			pages += "--" + c.LastPage
		}
	}
	field("pages", pages)
	field("isbn", c.ISBN)
	field("issn", c.ISSN)
	field("doi", c.DOI)
	field("language", strings.Join(c.Languages, ", "))
	field("keywords", strings.Join(c.Keywords, ", "))
	field("abstract", c.Abstract)
	field("url", c.URL)
	b.WriteString("}\n")
	return b.String()
}

// bibKey is a citation key of letters and digits only.
func bibKey(id shelfmark.ID) string {
	var b strings.Builder
	b.WriteString("shelfmark")
	for _, r := range string(id) {
		if ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z') || ('0' <= r && r <= '9') {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// bibNames escapes names for an author or editor field, brace-protecting
// those that are not "Last, First" so that BibTeX takes an organisation's
// name whole, and any name's own "and" as text.
func bibNames(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		n = bibEscape(n)
		if strings.Contains(n, ",") && !strings.Contains(strings.ToLower(n), " and ") {
			out[i] = n
		} else {
			out[i] = "{" + n + "}"
		}
	}
	return out
}

// bibReplacer escapes the characters (La)TeX reads as commands, and
// unbalanced braces, which would end a field early.
var bibReplacer = strings.NewReplacer(
	`\`, `\textbackslash{}`, `{`, `\{`, `}`, `\}`, `&`, `\&`, `%`, `\%`, `$`, `\$`, `#`, `\#`, `_`, `\_`,
	`^`, `\textasciicircum{}`, `~`, `\textasciitilde{}`, "\r\n", " ", "\n", " ", "\r", " ", "\t", " ")

// bibEscape escapes a value for a braced BibTeX field.
func bibEscape(v string) string { return bibReplacer.Replace(v) }

// RIS writes a citation in RIS: one "TAG  - value" line per value, CRLF
// line ends, ended by ER.
func RIS(c *Citation) string {
	typ := "GEN"
	switch c.Type {
	case "book":
		typ = "BOOK"
	case "article":
		typ = "JOUR"
	case "thesis":
		typ = "THES"
	}
	var b strings.Builder
	line := func(tag string, vs ...string) {
		for _, v := range vs {
			if v = risValue(v); v != "" {
				b.WriteString(tag + "  - " + v + "\r\n")
			}
		}
	}
	line("TY", typ)
	line("TI", c.Title)
	line("AU", c.Authors...)
	line("ED", c.Editors...)
	line("PY", Year(c.Date))
	if c.Date != "" {
		line("DA", ScholarDate(c.Date))
	}
	line("PB", c.Publisher)
	if c.Type == "article" {
		line("JO", c.Container)
	} else {
		line("T2", c.Container)
	}
	line("ET", c.Edition)
	line("VL", c.Volume)
	line("IS", c.Issue)
	line("SP", c.FirstPage)
	line("EP", c.LastPage)
	line("SN", c.ISBN, c.ISSN)
	line("DO", c.DOI)
	line("LA", c.Languages...)
	line("KW", c.Keywords...)
	line("AB", c.Abstract)
	line("UR", c.URL)
	b.WriteString("ER  - \r\n")
	return b.String()
}

// risValue puts a value on one line (RIS has no continuation lines).
func risValue(v string) string {
	return strings.TrimSpace(strings.Join(strings.FieldsFunc(v, func(r rune) bool {
		return r == '\n' || r == '\r' || r == '\u2028' || r == '\u2029'
	}), " "))
}
