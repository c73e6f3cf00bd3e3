// Package labels holds what the web interface and IIIF both show people:
// the message catalogs of every language the interface ships, and the
// human labels of metadata (the catalog key of each known predicate, a
// work's title). Nothing here is changed after loading, so every request
// shares it.
package labels
