package ui

// This file holds the controlled vocabularies the cataloguing forms pick
// values from, and which fields take them: a language by its ISO 639
// code (named from golang.org/x/text, as a work page names it; see
// labels.LanguageChoices), a licence from Creative Commons, a rights
// statement from RightsStatements.org or Creative Commons, a type from
// the DCMI Type vocabulary. A term's name is a message of the catalogs
// (locales/*/catalog.json), so that it reads in the page's language.

import (
	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/http/labels"
)

// vocabulary names a controlled vocabulary of the forms' values; it is
// also the id of its list in a page (vocab-NAME).
type vocabulary string

// The vocabularies.
const (
	vocabLanguage vocabulary = "language"
	vocabLicence  vocabulary = "licence"
	vocabRights   vocabulary = "rights"
	vocabType     vocabulary = "type"
)

// vocabularies are the vocabularies in the order a page lists them.
var vocabularies = []vocabulary{vocabLanguage, vocabLicence, vocabRights, vocabType}

// fieldVocabularies are the fields whose values are picked, with their
// vocabulary: the predicates the work page labels as language, licence,
// rights and type (http/labels/fields.go), but rdf:type and schema:genre
// (a class and a genre, not a DCMI type) and dcterms:accessRights (a note
// on access, in words).
var fieldVocabularies = map[string]vocabulary{
	shelfmark.NSDC + "language":      vocabLanguage,
	shelfmark.NSDCTerms + "language": vocabLanguage,
	shelfmark.NSDCTerms + "license":  vocabLicence,
	labels.NSSchema + "license":      vocabLicence,
	labels.NSSchemaS + "license":     vocabLicence,
	shelfmark.NSDC + "rights":        vocabRights,
	shelfmark.NSDCTerms + "rights":   vocabRights,
	shelfmark.NSDC + "type":          vocabType,
	shelfmark.NSDCTerms + "type":     vocabType,
}

// vocabOf is the vocabulary of a field's values, "" for a field of free
// values.
func vocabOf(field string) vocabulary { return fieldVocabularies[field] }

// vocabTerm is a term of a vocabulary of IRIs: its IRI, its short name
// (what a cataloguer may type instead: "InC", "StillImage") and the
// catalog key of its name.
type vocabTerm struct {
	iri, code, key string
}

// ccLicences are the Creative Commons licences of version 4.0, CC0 and
// the Public Domain Mark.
var ccLicences = []vocabTerm{
	{"https://creativecommons.org/publicdomain/zero/1.0/", "CC0", "catalog.cc.zero"},
	{"https://creativecommons.org/publicdomain/mark/1.0/", "PDM", "catalog.cc.mark"},
	{"https://creativecommons.org/licenses/by/4.0/", "CC BY", "catalog.cc.by"},
	{"https://creativecommons.org/licenses/by-sa/4.0/", "CC BY-SA", "catalog.cc.by-sa"},
	{"https://creativecommons.org/licenses/by-nc/4.0/", "CC BY-NC", "catalog.cc.by-nc"},
	{"https://creativecommons.org/licenses/by-nc-sa/4.0/", "CC BY-NC-SA", "catalog.cc.by-nc-sa"},
	{"https://creativecommons.org/licenses/by-nd/4.0/", "CC BY-ND", "catalog.cc.by-nd"},
	{"https://creativecommons.org/licenses/by-nc-nd/4.0/", "CC BY-NC-ND", "catalog.cc.by-nc-nd"},
}

// rightsStatements are the twelve statements of RightsStatements.org.
var rightsStatements = []vocabTerm{
	{"http://rightsstatements.org/vocab/InC/1.0/", "InC", "catalog.rs.InC"},
	{"http://rightsstatements.org/vocab/InC-OW-EU/1.0/", "InC-OW-EU", "catalog.rs.InC-OW-EU"},
	{"http://rightsstatements.org/vocab/InC-EDU/1.0/", "InC-EDU", "catalog.rs.InC-EDU"},
	{"http://rightsstatements.org/vocab/InC-NC/1.0/", "InC-NC", "catalog.rs.InC-NC"},
	{"http://rightsstatements.org/vocab/InC-RUU/1.0/", "InC-RUU", "catalog.rs.InC-RUU"},
	{"http://rightsstatements.org/vocab/NoC-CR/1.0/", "NoC-CR", "catalog.rs.NoC-CR"},
	{"http://rightsstatements.org/vocab/NoC-NC/1.0/", "NoC-NC", "catalog.rs.NoC-NC"},
	{"http://rightsstatements.org/vocab/NoC-OKLR/1.0/", "NoC-OKLR", "catalog.rs.NoC-OKLR"},
	{"http://rightsstatements.org/vocab/NoC-US/1.0/", "NoC-US", "catalog.rs.NoC-US"},
	{"http://rightsstatements.org/vocab/CNE/1.0/", "CNE", "catalog.rs.CNE"},
	{"http://rightsstatements.org/vocab/UND/1.0/", "UND", "catalog.rs.UND"},
	{"http://rightsstatements.org/vocab/NKC/1.0/", "NKC", "catalog.rs.NKC"},
}

// dcmiTypes are the DCMI Type vocabulary.
var dcmiTypes = []vocabTerm{
	{"http://purl.org/dc/dcmitype/Collection", "Collection", "catalog.type.Collection"},
	{"http://purl.org/dc/dcmitype/Dataset", "Dataset", "catalog.type.Dataset"},
	{"http://purl.org/dc/dcmitype/Event", "Event", "catalog.type.Event"},
	{"http://purl.org/dc/dcmitype/Image", "Image", "catalog.type.Image"},
	{"http://purl.org/dc/dcmitype/InteractiveResource", "InteractiveResource", "catalog.type.InteractiveResource"},
	{"http://purl.org/dc/dcmitype/MovingImage", "MovingImage", "catalog.type.MovingImage"},
	{"http://purl.org/dc/dcmitype/PhysicalObject", "PhysicalObject", "catalog.type.PhysicalObject"},
	{"http://purl.org/dc/dcmitype/Service", "Service", "catalog.type.Service"},
	{"http://purl.org/dc/dcmitype/Software", "Software", "catalog.type.Software"},
	{"http://purl.org/dc/dcmitype/Sound", "Sound", "catalog.type.Sound"},
	{"http://purl.org/dc/dcmitype/StillImage", "StillImage", "catalog.type.StillImage"},
	{"http://purl.org/dc/dcmitype/Text", "Text", "catalog.type.Text"},
}

// termsOf are the IRI terms a vocabulary offers (none for languages):
// a rights field offers the statements, then the licences.
func termsOf(v vocabulary) [][]vocabTerm {
	switch v {
	case vocabLicence:
		return [][]vocabTerm{ccLicences}
	case vocabRights:
		return [][]vocabTerm{rightsStatements, ccLicences}
	case vocabType:
		return [][]vocabTerm{dcmiTypes}
	}
	return nil
}

// badValueKeys are the catalog keys of the message that refuses a value
// of a vocabulary.
var badValueKeys = map[vocabulary]string{
	vocabLanguage: "catalog.bad.language",
	vocabLicence:  "catalog.bad.licence",
	vocabRights:   "catalog.bad.rights",
	vocabType:     "catalog.bad.type",
}
