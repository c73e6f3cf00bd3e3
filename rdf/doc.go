// Package rdf reads and writes the RDF metadata of Shelfmark resources:
// Turtle, N-Triples and JSON-LD documents, and the plain JSON object that is
// the API's default metadata body.
//
// The repository stores only IRIs and literals (docs/design.md, data model), so every reader
// rejects blank nodes, resolves relative IRIs against a base IRI, lower-cases
// language tags and stores xsd:string as the empty datatype. Syntax errors are
// *shelfmark.Error values with code EINVALID whose Details carry the "line"
// and "column" (1-based, counted in characters) of the fault whenever it is
// known.
//
// Turtle is read by a reader of this package (turtle.go, turtle_lex.go)
// rather than by github.com/knakk/rdf: that library lexes in a goroutine
// that leaks on every early syntax error and crashes the process on some
// inputs (".0"), which a server cannot contain. N-Triples lines are parsed
// by github.com/cayleygraph/quad; JSON-LD is expanded by
// github.com/piprate/json-gold, with remote contexts refused.
//
// Parse reads the whole body into memory, so callers bound its size (for
// example with http.MaxBytesReader); a failure of the reader comes back
// wrapped, so that a *http.MaxBytesError can be told from a syntax error.
// N-Triples must use absolute IRIs, but relative ones are resolved against
// the base like Turtle's rather than refused.
//
// Nothing in the package keeps mutable state: the prefix table is a set of
// constants exposed through functions.
package rdf
