package shelfmark

import (
	"errors"
	"fmt"
	"math"
	"time"
	"unicode"
	"unicode/utf8"
)

// The cost of a text search grows with what the query holds, not only
// with what it matches: each index looks up every word of a phrase and
// compares them at every place a document holds them (a phrase of 14,000
// words "the" took 36 CPU seconds over 3,000 works on SQLite; PostgreSQL
// overflowed its stack), and PostgreSQL's headlines (ts_headline) take
// time that grows steeply with the words and phrases of the query and the
// length of each hit. ParseSearchText, which every path that
// searches text goes through (the REST search, the search page, IIIF
// content search, and both storage backends' Search), therefore refuses
// a query past these limits with EINVALID, naming the limit:
//
//   - MaxSearchQueryBytes bytes of text,
//   - MaxSearchTerms words and phrases (terms),
//   - MaxSearchPhraseTokens tokens in one term,
//   - MaxSearchTokens tokens in all terms together,
//
// where a token is a word as the indexes split text (SearchTokens), not
// a run of text between spaces: the-the-the is one term of three tokens,
// counted as four since PostgreSQL indexes a hyphenated word whole as
// well (SearchTokenCount).
//
// What the limits cannot bound, the number of documents a query's words
// occur in, a deadline does: each backend stops a search statement that
// runs past its search timeout (DefaultSearchTimeout unless configured;
// SQLite interrupts the statement, PostgreSQL cancels it with
// statement_timeout) and answers SearchTimeoutError, 503 with
// Retry-After.

// Limit names, in the "limit_name" detail of the error of a query past
// one (beside "limit", its value).
const (
	LimitSearchQueryBytes   = "search_query_bytes"
	LimitSearchTerms        = "search_terms"
	LimitSearchPhraseTokens = "search_phrase_tokens"
	LimitSearchTokens       = "search_tokens"
	LimitSearchTimeout      = "search_timeout"
)

// searchLimitError is the EINVALID of a query past the limit named name.
func searchLimitError(name string, limit int, format string, args ...any) *Error {
	return &Error{Code: EINVALID, Message: fmt.Sprintf(format, args...),
		Details: map[string]any{"limit": limit, "limit_name": name}}
}

// checkSearchLimits refuses terms past MaxSearchTerms, MaxSearchPhraseTokens
// or MaxSearchTokens.
func checkSearchLimits(terms []SearchTerm) error {
	if len(terms) > MaxSearchTerms {
		return searchLimitError(LimitSearchTerms, MaxSearchTerms,
			"The search text has %d words and phrases; at most %d are allowed.", len(terms), MaxSearchTerms)
	}
	total := 0
	for _, t := range terms {
		n := SearchTokenCount(t.Text)
		if t.Field == SearchFieldFacet {
			n = 1 // one hidden token (SearchFacetToken)
		}
		if n > MaxSearchPhraseTokens {
			return searchLimitError(LimitSearchPhraseTokens, MaxSearchPhraseTokens,
				"The phrase %s has %d words as the index counts them (every run of letters or digits; a hyphenated word also counts whole); at most %d are allowed in one phrase or word.",
				quoteTerm(t.Text), n, MaxSearchPhraseTokens)
		}
		total += n
	}
	if total > MaxSearchTokens {
		return searchLimitError(LimitSearchTokens, MaxSearchTokens,
			"The search text has %d words as the index counts them (every run of letters or digits; a hyphenated word also counts whole); at most %d are allowed in one search.",
			total, MaxSearchTokens)
	}
	return nil
}

// quoteTerm quotes the beginning of a term for a message.
func quoteTerm(s string) string {
	const show = 40
	if len(s) <= show {
		return fmt.Sprintf("%q", s)
	}
	cut := show
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%q…", s[:cut])
}

// isTokenStart reports whether r begins a token: a letter, a digit or a
// private-use character (FTS5 unicode61's token characters, categories
// L*, N* and Co).
func isTokenStart(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.Is(unicode.Co, r)
}

// isTokenRune reports whether r continues a token: a token character or
// one of the combining diacritics unicode61 keeps inside the word they
// follow (any other mark ends a word there).
func isTokenRune(r rune) bool { return isTokenStart(r) || isDiacritic(r) }

// isDiacritic reports whether r is one of the combining diacritics
// (U+0300 to U+0331) that FTS5's unicode61 tokenizer keeps inside a word
// (its sqlite3Fts5UnicodeIsdiacritic, whose bit masks these are).
func isDiacritic(r rune) bool {
	const mask0, mask1 = 0x08029FDF, 0x000361F8
	switch {
	case r < 0x300 || r > 0x331:
		return false
	case r < 0x320:
		return mask0&(1<<(r-0x300)) != 0
	}
	return mask1&(1<<(r-0x320)) != 0
}

// SearchTokens returns the tokens of text as the indexes split it, in
// order: each a maximal run of letters, digits and private-use
// characters (and the combining diacritics inside it), which is how FTS5's
// unicode61 tokenizer splits text and, but for the few shapes it reads
// whole (a hyphenated word also whole, a number with a decimal point, an
// address), PostgreSQL's parser too. The tokens are as typed: neither
// backend's case folding nor removal of diacritics is applied.
func SearchTokens(text string) []string {
	var out []string
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		if !isTokenStart(r) {
			i += size
			continue
		}
		end := tokenEnd(text, i+size)
		out = append(out, text[i:end])
		i = end
	}
	return out
}

// tokenEnd returns where the token continuing at i ends.
func tokenEnd(text string, i int) int {
	for i < len(text) {
		r, size := utf8.DecodeRuneInString(text[i:])
		if !isTokenRune(r) {
			break
		}
		i += size
	}
	return i
}

// SearchTokenCount returns how many tokens the indexes may make of text,
// at most (the count the limits of a query use): its SearchTokens, and one more for each hyphenated word
// (tokens joined by single hyphens: foo-bar, foo-bar-baz), which
// PostgreSQL's parser indexes whole as well as in parts. Every other
// shape PostgreSQL reads whole (1.5, an e-mail address, a URL) gives it
// fewer tokens than runs. Linear in the text; allocates nothing.
func SearchTokenCount(text string) int {
	n := 0
	prevEnd := -1     // where the last token ended
	compound := false // the last token was joined to the one before it by a hyphen
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		if !isTokenStart(r) {
			i += size
			continue
		}
		joined := prevEnd >= 0 && i == prevEnd+1 && text[prevEnd] == '-'
		if joined && !compound {
			n++ // the hyphenated word, whole
		}
		compound = joined
		n++
		prevEnd = tokenEnd(text, i+size)
		i = prevEnd
	}
	return n
}

// errSearchTimeout marks the error of a search stopped at its deadline.
var errSearchTimeout = errors.New("search timeout")

// SearchTimeoutError is the error of a search statement a backend stopped
// at its search timeout: EUNAVAILABLE (503) with a Retry-After of the
// timeout (at least a second), whose message advises fewer or rarer
// words. IsSearchTimeout recognises it, however wrapped.
func SearchTimeoutError(timeout time.Duration) error {
	secs := int64(math.Ceil(timeout.Seconds()))
	e := &Error{Code: EUNAVAILABLE,
		Message: fmt.Sprintf("The search took longer than %s and was stopped. Try fewer or rarer words, or try again in a moment.", roundTimeout(timeout)),
		Details: map[string]any{"retry_after": max(secs, 1), "timeout_ms": timeout.Milliseconds(), "limit_name": LimitSearchTimeout}}
	return fmt.Errorf("%w: %w", e, errSearchTimeout)
}

// roundTimeout shows a timeout briefly: 5s, 250ms.
func roundTimeout(d time.Duration) string {
	if d >= time.Second {
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Millisecond).String()
}

// IsSearchTimeout reports whether err is (or wraps) a SearchTimeoutError.
func IsSearchTimeout(err error) bool { return errors.Is(err, errSearchTimeout) }
