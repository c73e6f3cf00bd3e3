// Package export writes a repository's works and collections as packages
// that need no Shelfmark to be read: BagIt bags (Bags) and a fresh OCFL
// storage root (OCFL).
//
// # Bags
//
// One bag per work or collection, in DIR/ID (package bagit: BagIt 1.0,
// manifests and tag manifests in SHA-512 and SHA-256, written atomically).
// Its payload:
//
//	data/object.json   the record of the object's resources (preserve.Record,
//	                   as the OCFL copy's object.json): kinds, order
//	                   (parent, position), memberships, access, times, and
//	                   each file's description with its digests
//	data/metadata.ttl  every resource's metadata as Turtle, each resource
//	                   as <urn:shelfmark:ID>
//	data/dc.xml        the work's or collection's own metadata as simple
//	                   Dublin Core (the oai_dc record, oai.DublinCore)
//	data/files/SET-ID/NAME   each original's bytes, at the path the record
//	                   names (a file's "path")
//
// bag-info.txt holds Source-Organization, Bagging-Date, External-Identifier
// (the id), Bag-Software-Agent ("Shelfmark " + shelfmark.Version),
// External-Description (the title), Shelfmark-Record (object.json) and
// Payload-Oxum. Each original's bytes are checked against both digests the
// repository recorded as they are copied: a damaged content store fails
// the export instead of writing a bag of damaged bytes. Derivatives are
// not exported (they are made again from the originals), as in the OCFL
// copy. A deleted work is not exported. Cost: one read transaction per
// bag (preserve.Build's reads and one of the metadata), and every
// original's bytes read once.
//
// PREMIS events are not in the bags yet: Options.Events is the hook that
// will add them (see its comment).
//
// # OCFL
//
// OCFL writes a new storage root holding the objects of the ids given,
// with every version they have in the repository's preservation copy:
// each object is copied file by file as its newest version's inventory
// names them (so a version the preserver is writing meanwhile is not
// copied half), each content file checked against its digest as it is
// copied. An object the preservation copy does not hold (preservation off,
// or not preserved yet) is written from the database's current state as a
// single version. The new root is made in a temporary directory, checked
// with ocfl.ValidateRoot, and renamed into place.
package export
