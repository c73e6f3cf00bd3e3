// Package ingest reads what a repository manager has — a directory tree, a
// BagIt bag or a directory of bags, a CSV manifest — as a stream of Items,
// one per work, without touching any database. The pipeline that stores the
// items is elsewhere; a Source only lists, verifies and describes.
//
// Every Source is used the same way: call Next until it returns io.EOF. A
// *ItemError means that one item is bad (its key and the reason are in the
// error) and that nothing of it should be stored; the caller records it and
// calls Next again. Any other error ends the stream (a cancelled context, a
// CSV syntax error, a closed source).
//
// # Keys
//
// Item.Key is stable across runs over the same input, so that an ingest can
// be resumed and repeated without duplicates, and different inputs never
// share a key, so that nothing is skipped as "stored before" that was not.
// A key is either an identifier the input states, or where the item is
// plus a fingerprint (128 bits of SHA-256) of what it holds:
//
//   - "dir:" + the folder's absolute path (symbolic links resolved) + "#" +
//     a fingerprint of its files' names and sizes ("dir:/scans/b1#3fa2…"):
//     two roots never share keys, the same folder ingested as a root or
//     below its parent has the same key, and a folder refilled with other
//     files is new;
//   - "bag:" + the bag directory's name + "#" + a fingerprint of its
//     payload manifests and bag-info.txt: the same bag from anywhere is the
//     same item, two bags of one name are not;
//   - "csv:" + the source identifier of the row(s), as stated;
//   - "csv-row:" + a fingerprint of the manifest's origin (OpenCSV: its
//     absolute path), the row's non-empty cells and the sizes of its files,
//     for a row without an identifier: "~2", "~3", … is added to the second,
//     third, … row of one manifest with the same fingerprint. The row
//     number is not part of it, so rows may be added or deleted between
//     runs;
//   - "marc:" + 003 + ":" + 001, as stated, or "marc:record:" + a
//     fingerprint of the record for a record without a 001.
//
// A bad item (an ItemError) has no stored key; its Key locates it instead:
// "dir:" + the folder's path, "bag:" + the bag's name, "csv:row-N" for a
// row without an identifier, "marc:" + the file's name + "#" + position.
//
// Keys of earlier versions ("dir:" + the path relative to the root, "bag:"
// + the name, "csv:row-N", "marc:file.mrc#N") are given as Item.FormerKey:
// they could name different inputs, so a work stored under one counts as
// this item only when the engine finds it holds the same files and
// metadata (shelfmark.NewGroup.FormerKey); such a work is then recorded
// under the new key too.
//
// # Security
//
// Every file path is resolved (symbolic links included) and must stay inside
// the input root: the directory given to OpenDir, the bag directory, or the
// CSV file's directory. A path that escapes it (.., an absolute path, a
// symbolic link that resolves outside) makes its item an ItemError naming
// the path; the file is never opened. FileRef.Path is the resolved, absolute
// path that was checked. Special files (devices, pipes, sockets) are
// refused the same way. Files that vanish between listing and opening are
// the pipeline's concern.
//
// # Directory trees (OpenDir)
//
// Every folder that holds files is one work; folders nest, and each is
// visited in natural order, depth first, one directory listing at a time.
// The folder's regular files (and symbolic links to files inside the root)
// become its files in natural order (NaturalCompare: "page_2" before
// "page_10", case-insensitive otherwise). Names starting with "." are
// skipped, files and folders alike. Symbolic links to directories are not
// followed. A "metadata.json" (the API's plain JSON metadata, see
// rdf.ParseJSONMetadata) or "metadata.ttl" (Turtle about <>, read with the
// base IRI "urn:shelfmark:item"; statements about other subjects are
// dropped) beside the files is the work's metadata and is not one of its
// files; having both is an ItemError. A folder with a sidecar but no files is
// a work without files. Without a sidecar the metadata is dc:title = the
// folder name.
//
// # BagIt (OpenBag, OpenBags)
//
// A bag (RFC 8493; versions 1.x and 0.97, UTF-8 tag files) is one work. It
// is verified completely before Next returns it: bagit.txt, bag-info.txt,
// every manifest-<alg>.txt for sha256, sha512 and md5 (manifests of other
// algorithms are ignored, but at least one supported manifest must exist),
// every file a manifest lists exists under data/ and every payload file is
// listed in every supported manifest, Payload-Oxum (octets and file count),
// every payload checksum, and the files and checksums of tagmanifest-<alg>.txt
// files of the supported algorithms. A bag with fetch.txt is refused. Paths
// in manifests have %0A, %0D and %25 decoded.
//
// The bag-info.txt fields become metadata, in order, as plain literals:
// External-Description → dcterms:description, Source-Organization →
// dcterms:publisher, Bagging-Date → dcterms:created (typed xsd:date when it is
// YYYY-MM-DD), External-Identifier → dcterms:identifier, Bag-Group-Identifier
// → dcterms:isPartOf; every other label (Contact-Name, Contact-Email,
// Organization-Address, Bag-Count, ...) becomes the predicate
// "urn:shelfmark:bag-info:" + the label, with characters that IRIs may not
// hold percent-encoded ("Contact Name" → urn:shelfmark:bag-info:Contact%20Name).
// Payload-Oxum is verified and not kept. When no dc:title or dcterms:title
// results, dc:title is the bag's directory name. Files are the payload files
// in natural order of their path below data/, which is also their Name;
// FileRef.SHA256 is set from manifest-sha256.txt when the bag has one.
//
// A Shelfmark bag (one written by package export; its bag-info.txt has
// "Shelfmark-Record: object.json") is verified the same way and then read
// as the work or collection it was (Item.Structured): its record gives
// the kind, access and file sets in order, data/metadata.ttl each
// resource's metadata, and the originals are the payload files the record
// names, checked against its sizes and SHA-256s; any other payload file,
// or a disagreement between the record and the payload, is an ItemError.
// Its key is "shelfmark:" + the id it had; memberships are kept as the
// source keys of its collections (Item.MemberKeys).
//
// OpenBags reads a directory of bags: each subdirectory holding bagit.txt is
// one item, in natural order; other entries are skipped.
//
// # CSV manifests (OpenCSV)
//
// In the spirit of Bulkrax: a header row, then one row per work, or several
// consecutive rows with the same source identifier, each adding files.
// Header names are matched case-insensitively after trimming spaces:
//
//   - source_identifier (or id, or key): the item key;
//   - title, creator, date, subject, description: dc:title, dc:creator,
//     dc:date, dc:subject, dc:description (plain literals);
//   - parent: Item.Collection (a collection's source key or id);
//   - file (or files): paths relative to the CSV file's directory;
//   - position: an integer that orders the files of a work's rows.
//
// Any other column maps to metadata by this rule: a name that is a prefixed
// name with a known prefix ("dcterms:extent", see rdf.Prefixes) becomes that
// predicate; a full IRI ("http://…", "https://…", "urn:…") is taken as it is;
// any other name becomes "urn:shelfmark:csv:" + the name, with characters
// IRIs may not hold percent-encoded. Columns with an empty header are
// ignored.
//
// Every cell except position and parent may hold several values separated
// by "|"; values are trimmed and empty ones dropped. Rows shorter than the
// header have empty trailing cells; a row longer than the header is an
// ItemError. Rows of one work merge their metadata (repeats dropped) and their
// files, ordered by position (rows without one come last, in row order). A
// source identifier that appears again after another work's rows is an
// ItemError, as is a missing file, two different parents, or an invalid
// position. Keys seen so far are remembered to detect repeats: the first
// 65,536 in memory, the rest in a temporary database on disk, so memory stays
// bounded however long the manifest. A CSV syntax error (a
// stray quote) ends the stream: the rows after it cannot be trusted.
package ingest
