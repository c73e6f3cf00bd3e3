package shelfmark

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestParseSearchTextLimits: a query past any limit of its text is
// EINVALID naming the limit (in the message and in the details), whatever
// shape hides its tokens (a phrase, one hyphenated word, punctuation
// without spaces), and a query at every limit is accepted.
func TestParseSearchTextLimits(t *testing.T) {
	the := func(n int, sep string) string { return strings.TrimSuffix(strings.Repeat("the"+sep, n), sep) }
	words := func(n int) string {
		var w []string
		for i := range n {
			w = append(w, "w"+string(rune('a'+i%26))+string(rune('a'+i/26)))
		}
		return strings.Join(w, " ")
	}
	refused := []struct {
		name, text, limit string
		value             int
	}{
		{"the attacker's phrase", `"` + the(14000, " ") + `"`, LimitSearchQueryBytes, MaxSearchQueryBytes},
		{"bytes", strings.Repeat("a", MaxSearchQueryBytes+1), LimitSearchQueryBytes, MaxSearchQueryBytes},
		{"terms", words(MaxSearchTerms + 1), LimitSearchTerms, MaxSearchTerms},
		{"phrase", `"` + the(MaxSearchPhraseTokens+1, " ") + `"`, LimitSearchPhraseTokens, MaxSearchPhraseTokens},
		{"unclosed phrase", `"` + the(MaxSearchPhraseTokens+1, " "), LimitSearchPhraseTokens, MaxSearchPhraseTokens},
		{"prefix phrase", `"` + the(MaxSearchPhraseTokens+1, " ") + `"*`, LimitSearchPhraseTokens, MaxSearchPhraseTokens},
		{"dotted word", the(MaxSearchPhraseTokens+1, "."), LimitSearchPhraseTokens, MaxSearchPhraseTokens},
		{"slashed word", the(MaxSearchPhraseTokens+1, "/"), LimitSearchPhraseTokens, MaxSearchPhraseTokens},
		// PostgreSQL indexes a hyphenated word whole as well: 32 parts are
		// 33 tokens
		{"hyphenated word", the(MaxSearchPhraseTokens, "-"), LimitSearchPhraseTokens, MaxSearchPhraseTokens},
		{"tokens", `"` + the(MaxSearchPhraseTokens, " ") + `" "` + the(MaxSearchPhraseTokens, " ") + `" the`, LimitSearchTokens, MaxSearchTokens},
	}
	for _, c := range refused {
		_, err := ParseSearchText(c.text)
		var e *Error
		if err == nil || ErrorCode(err) != EINVALID {
			t.Errorf("%s: %v, want %s", c.name, err, EINVALID)
			continue
		}
		e = err.(*Error)
		if e.Details["limit_name"] != c.limit || e.Details["limit"] != c.value {
			t.Errorf("%s: details %v, want limit_name %s and limit %d", c.name, e.Details, c.limit, c.value)
		}
		if !strings.Contains(e.Message, "at most "+strconv.Itoa(c.value)) || len(e.Message) > 400 {
			t.Errorf("%s: message %q does not name the limit %d (or is long)", c.name, e.Message, c.value)
		}
	}
	accepted := []string{
		strings.Repeat("a", MaxSearchQueryBytes-3) + "  b",
		words(MaxSearchTerms),
		`"` + the(MaxSearchPhraseTokens, " ") + `"`,
		the(MaxSearchPhraseTokens, "."),
		the(MaxSearchPhraseTokens-1, "-"),
		`"` + the(MaxSearchPhraseTokens, " ") + `" "` + the(MaxSearchPhraseTokens, " ") + `"`,
		`"` + the(MaxSearchPhraseTokens, " ") + `" ` + the(MaxSearchTerms-1, " "),
	}
	for _, text := range accepted {
		if _, err := ParseSearchText(text); err != nil {
			t.Errorf("%.60q…: %v", text, err)
		}
	}
}

// TestSearchTokens: text splits into runs of letters, digits and
// private-use characters, marks staying inside the word they follow, as
// FTS5's unicode61 tokenizer splits it (the sqlite package checks the same
// cases against FTS5 itself); the count adds one per hyphenated word, as
// PostgreSQL's parser indexes it whole too.
func TestSearchTokens(t *testing.T) {
	cases := []struct {
		text   string
		tokens []string
		count  int
	}{
		{"", nil, 0},
		{"   ", nil, 0},
		{"whales", []string{"whales"}, 1},
		{"Whales of the north", []string{"Whales", "of", "the", "north"}, 4},
		{"foo-bar", []string{"foo", "bar"}, 3},
		{"foo-bar-baz qux-1", []string{"foo", "bar", "baz", "qux", "1"}, 7},
		{"foo--bar", []string{"foo", "bar"}, 2},
		{"-foo- -bar-", []string{"foo", "bar"}, 2},
		{"1.5 a.b.c", []string{"1", "5", "a", "b", "c"}, 5},
		{"x@example.org", []string{"x", "example", "org"}, 3},
		{"http://example.org/a/b?c=d", []string{"http", "example", "org", "a", "b", "c", "d"}, 7},
		{"café naïve", []string{"café", "naïve"}, 2},
		{"cafe\u0301 e\u0301", []string{"cafe\u0301", "e\u0301"}, 2}, // decomposed accents stay in their word
		{"\u0301abc", []string{"abc"}, 1},                            // a mark begins no word
		{"日本語のテキスト", []string{"日本語のテキスト"}, 1},                        // no spaces, one run
		{"Ünïcödé déjà-vu", []string{"Ünïcödé", "déjà", "vu"}, 4},
		{"עִבְרִית مُشَكَّلة", []string{"ע", "ב", "ר", "ית", "م", "ش", "ك", "لة"}, 8}, // other marks end a word, as in FTS5
		{"snake_case", []string{"snake", "case"}, 2},
		{"x²+y\u00b3", []string{"x²", "y\u00b3"}, 2},
		{"\ue000\ue001 a", []string{"\ue000\ue001", "a"}, 2}, // private use
		{"tab\tand\nnewline", []string{"tab", "and", "newline"}, 3},
		{"AND OR NOT NEAR", []string{"AND", "OR", "NOT", "NEAR"}, 4},
		{"\xff\xfeabc\xff", []string{"abc"}, 1},
	}
	for _, c := range cases {
		if got := SearchTokens(c.text); !slices.Equal(got, c.tokens) {
			t.Errorf("SearchTokens(%q) = %q, want %q", c.text, got, c.tokens)
		}
		if got := SearchTokenCount(c.text); got != c.count {
			t.Errorf("SearchTokenCount(%q) = %d, want %d", c.text, got, c.count)
		}
	}
}

// FuzzParseSearchText: whatever the text, the parser returns either terms
// within every limit, each with a token, or EINVALID with a message; it
// never panics, and the token count is never below the number of tokens.
func FuzzParseSearchText(f *testing.F) {
	for _, s := range []string{"whales", `"the north" sea*`, `"unclosed`, "a-b-c", "***", `""`, "\x00\x02\x03",
		strings.Repeat("the ", 40), strings.Repeat("the-", 40), "日本語 テキスト*", "e\u0301\u0301",
		"a -b", `-"a b" c OR d*`, "OR -a OR", "a OR OR -b -c", `creator:a date:1850..1860 -title:"x y" subject: z*`, "date:..12 OR date:7-3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		terms, err := ParseSearchText(s)
		if err != nil {
			if ErrorCode(err) != EINVALID || ErrorMessage(err) == "" {
				t.Fatalf("%q: %v", s, err)
			}
			return
		}
		if len(s) > MaxSearchQueryBytes || len(terms) == 0 || len(terms) > MaxSearchTerms {
			t.Fatalf("%q: %d bytes, %d terms accepted", s, len(s), len(terms))
		}
		groups, _ := SearchGroups(terms)
		if len(groups) == 0 {
			t.Fatalf("%q: accepted with nothing to find: %+v", s, terms)
		}
		total := 0
		for i, term := range terms {
			if term.Alt && (i == 0 || term.Not || terms[i-1].Not) {
				t.Fatalf("%q: term %d joins nothing by OR: %+v", s, i, terms)
			}
			n := SearchTokenCount(term.Text)
			if n > MaxSearchPhraseTokens || n < len(SearchTokens(term.Text)) || n == 0 {
				t.Fatalf("%q: term %q counts %d tokens (%q)", s, term.Text, n, SearchTokens(term.Text))
			}
			if lo, hi := term.Years(); term.Field == SearchFieldDate && (lo < MinSearchYear || hi < lo || hi > MaxSearchYear) {
				t.Fatalf("%q: date term %q", s, term.Text)
			}
			if !utf8.ValidString(term.Text) || strings.ContainsAny(term.Text, SnippetStart+SnippetEnd+"\x00") {
				t.Fatalf("%q: term %q is not clean text", s, term.Text)
			}
			total += n
		}
		if total > MaxSearchTokens {
			t.Fatalf("%q: %d tokens accepted", s, total)
		}
	})
}

// TestParseSearchTextOperators: a leading - leaves a word or phrase out,
// OR in capitals joins the terms either side, and each is text where it
// cannot act (a dash inside a word, an OR with nothing to join, a lower
// case or); a text that only leaves words out is refused.
func TestParseSearchTextOperators(t *testing.T) {
	for q, want := range map[string]string{
		"whales -ships":            "whales -ships",
		`whales -"of the north"`:   "whales -of the north",
		"whales OR dolphins north": "whales |dolphins north",
		`"a b" OR c* OR d -e`:      "a b |c* |d -e",
		"self-evident":             "self-evident",
		"a - b":                    "a b",
		"--a b":                    "--a b",
		"a or b":                   "a or b",
		"OR a":                     "OR a",
		"a OR":                     "a OR",
		"a OR -b":                  "a OR -b",
		"-b OR a":                  "-b OR a",
		"a OR *":                   "a OR",
		"-a* b":                    "-a* b",
	} {
		terms, err := ParseSearchText(q)
		if err != nil {
			t.Errorf("%q: %v", q, err)
			continue
		}
		if got := termsString(terms); got != want {
			t.Errorf("%q: %q, want %q", q, got, want)
		}
	}
	for _, q := range []string{"-whales", `-"a b"`, "-a -b", "-1"} {
		if _, err := ParseSearchText(q); ErrorCode(err) != EINVALID || !strings.Contains(ErrorMessage(err), "leaves words out") {
			t.Errorf("%q: %v, want EINVALID saying it only leaves words out", q, err)
		}
	}
	groups, not := SearchGroups([]SearchTerm{{Text: "a"}, {Text: "b", Alt: true}, {Text: "c", Not: true}, {Text: "d"}})
	if len(groups) != 2 || len(groups[0]) != 2 || len(groups[1]) != 1 || len(not) != 1 {
		t.Errorf("SearchGroups: %+v, %+v", groups, not)
	}
}

// termsString writes parsed terms as the tests expect them: each term's
// text after its field and a colon, a * after a prefix, a - before a term
// left out and a | before an alternative, separated by spaces.
func termsString(ts []SearchTerm) string {
	var parts []string
	for _, t := range ts {
		p := t.Text
		if t.Field != "" {
			p = t.Field + ":" + p
		}
		if t.Prefix {
			p += "*"
		}
		if t.Not {
			p = "-" + p
		}
		if t.Alt {
			p = "|" + p
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, " ")
}
