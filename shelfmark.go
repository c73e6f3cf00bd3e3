// Package shelfmark holds the domain of the Shelfmark digital repository: the
// resources it stores (collections, works, file sets, files), their RDF
// metadata, the service interfaces that adapters implement, and the
// repository engine that turns API operations into durable, group-committed
// database transactions.
//
// The package depends on nothing beyond the standard library. Each
// subpackage adapts one dependency: sqlite/ and postgres/ implement Storage,
// blob/ implements BlobStore, rdf/ reads and writes RDF formats, http/ serves
// the REST API, and cmd/shelfmark wires them together.
package shelfmark

// Version is the release of this build; cmd/shelfmark may override it with
// linker flags.
var Version = "0.1.0-dev"
