package ui

// This file makes the pickers of the cataloguing forms (deposit, edit,
// new collection): per language, the choices of each vocabulary
// (vocabularies.go), which a page lists once (a datalist a row's value
// input names, so that without script the browser offers them as one
// types), and the check of a picked field's value when a form is sent.
//
// What a form takes in a picked field:
//   - a language: an ISO 639 code (or BCP 47 tag) that has a name, as
//     typed ("de", "ger", "de-CH"), or a language's name in the page's
//     language or in English ("Deutsch", "German"), stored as its code;
//     both are stored as a plain literal, as the API stores them;
//   - a licence, rights statement or type: a term of the list, by its
//     address, its name or its short name ("InC", "Text"), or any other
//     http(s) address; all are stored as IRIs.
//
// Anything else is refused, with the row and what the field takes; a
// value the work already holds is kept as it is stored (a licence in
// words, a language named in full), so an old record is never changed
// nor refused by being edited.

import (
	"net/url"
	"strings"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/http/labels"
)

// pickChoice is one choice of a picker: the value stored and its name.
type pickChoice struct {
	Value, Label string
}

// picker is a vocabulary's choices in one language.
type picker struct {
	// Name is the vocabulary (and the id of its list: vocab-Name).
	Name    vocabulary
	Choices []pickChoice
	// names are the choices' values by value, by name (in the language
	// and in English) and by short name, each lower-cased
	names map[string]string
	// labels are the choices' names by value
	labels map[string]string
}

// pickers are the pickers of one language.
type pickers struct {
	lang string
	// List is every picker, in the order of vocabularies.
	List []*picker
	by   map[vocabulary]*picker
}

// newPickers makes the pickers of lang, naming terms from the catalogs
// and languages as labels.LanguageChoices does; English names (of the
// catalogs, and enLangs, the languages named in English) are the second
// names a person may type.
func newPickers(cats *labels.Catalogs, lang string, enLangs []labels.LanguageChoice) *pickers {
	msgs, en := cats.Messages(lang), cats.Messages("en")
	ps := &pickers{lang: lang, by: map[vocabulary]*picker{}}
	for _, v := range vocabularies {
		pk := &picker{Name: v, names: map[string]string{}, labels: map[string]string{}}
		if v == vocabLanguage {
			for _, c := range labels.LanguageChoices(lang) {
				pk.add(c.Code, c.Name)
			}
			for _, c := range enLangs {
				pk.also(c.Name, c.Code)
			}
		}
		for _, terms := range termsOf(v) {
			for _, t := range terms {
				pk.add(t.iri, labels.Translate(msgs, t.key))
				pk.also(labels.Translate(en, t.key), t.iri)
				pk.also(t.code, t.iri)
				if alt, ok := strings.CutPrefix(t.iri, "https://"); ok { // Creative Commons is also written with http
					pk.labels["http://"+alt] = pk.labels[t.iri]
				}
			}
		}
		ps.List = append(ps.List, pk)
		ps.by[v] = pk
	}
	return ps
}

// add adds a choice.
func (pk *picker) add(value, label string) {
	pk.Choices = append(pk.Choices, pickChoice{Value: value, Label: label})
	pk.labels[value] = label
	pk.also(value, value)
	pk.also(label, value)
}

// also lets a person type name for value (the first value of a name
// stays).
func (pk *picker) also(name, value string) {
	k := strings.ToLower(strings.TrimSpace(name))
	if _, ok := pk.names[k]; !ok && k != "" {
		pk.names[k] = value
	}
}

// label names a stored value of vocabulary v in the pickers' language: a
// term's name, a language's name; "" when it has none.
func (ps *pickers) label(v vocabulary, value string) string {
	pk := ps.by[v]
	if pk == nil {
		return ""
	}
	if l, ok := pk.labels[value]; ok {
		return l
	}
	if v == vocabLanguage {
		return labels.LanguageName(ps.lang, value)
	}
	return ""
}

// settle checks the value of each picked row the work does not already
// hold (stored) and writes it as it is stored: a language's code as a
// plain literal, a term's IRI as an IRI. A value it does not take marks
// its row and is refused (EINVALID, with the message in the page's
// language).
func (ps *pickers) settle(p *uiPage, rows []metaRow, stored []shelfmark.Statement) error {
	held := make(map[shelfmark.Statement]bool, len(stored))
	for _, st := range stored {
		held[heldKey(st)] = true
	}
	for i := range rows {
		r := &rows[i]
		v := vocabOf(r.Field)
		value := strings.TrimSpace(r.Value)
		if v == "" || value == "" {
			continue
		}
		if t, err := termOf(*r, value); err == nil && held[heldKey(shelfmark.Statement{Predicate: r.Field, Object: t})] {
			continue // kept as the work holds it
		}
		got, ok := ps.pick(v, value)
		if !ok {
			r.Invalid = true
			return shelfmark.Errorf(shelfmark.EINVALID, "%s", p.T(badValueKeys[v], i+1, clip(value, 80)))
		}
		r.Value, r.Kind = got, ""
		if v != vocabLanguage {
			r.Kind = "iri"
		}
	}
	return nil
}

// heldKey is a statement as settle compares it: a plain literal is
// written without its datatype.
func heldKey(st shelfmark.Statement) shelfmark.Statement {
	if st.Object.Datatype == shelfmark.XSDString {
		st.Object.Datatype = ""
	}
	return st
}

// pick is the value stored for what a person gave in a field of
// vocabulary v (ok false when the field does not take it).
func (ps *pickers) pick(v vocabulary, given string) (string, bool) {
	if v == vocabLanguage {
		if labels.LanguageName(ps.lang, given) != "" || labels.LanguageName("en", given) != "" {
			return given, true // a code that has a name, as typed
		}
	}
	if got, ok := ps.by[v].names[strings.ToLower(given)]; ok {
		return got, true
	}
	if v != vocabLanguage && httpIRI(given) {
		return given, true
	}
	return "", false
}

// httpIRI reports whether s is an absolute http(s) IRI with a host and
// nothing an IRI may not hold (spaces, <, >, quotes and the like).
func httpIRI(s string) bool {
	if strings.ContainsAny(s, " \t\r\n<>\"{}|\\^`") {
		return false
	}
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// clip shortens s to at most n characters (an ellipsis marks the cut).
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}
