// Package preserve turns what the database knows about a work or a
// collection into the content of its preservation object, the second,
// self-describing copy from which the repository can be rebuilt.
//
// An object holds one work (with its file sets and files) or one
// collection; a child work is an object of its own. Its logical files
// are:
//
//	object.json              the Record: every resource of the object, the
//	                         work or collection first, then each file set in
//	                         its order followed by its files: id, kind,
//	                         parent and position, memberships, visibility,
//	                         embargo and lease, effective access, version,
//	                         change sequence number, times, tombstone,
//	                         depositor, source keys, a collection's grants,
//	                         and for a file its name, media type, size,
//	                         digests, use and format
//	metadata.nt              the resources' metadata as N-Triples, each
//	                         resource named by SubjectIRI (urn:shelfmark:ID)
//	files/SET-ID/NAME        the bytes of each original, under its file
//	                         set's id and its original name (prefixed by the
//	                         file's own id when two share a name)
//
// Derivatives (thumbnails, access copies, tiles, extracted text, OCR) are
// described but not kept: the pipeline makes them again from the
// originals. External files are described by their URL. A deleted work's
// newest state is its tombstone alone; its earlier states keep the rest.
//
// Rebuild makes a new database and content store from a storage root
// alone (the repository object carries the id secret, so every resource
// keeps its id); see docs/preservation.md.
package preserve
