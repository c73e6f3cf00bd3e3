// Package bagit writes BagIt 1.0 bags (RFC 8493): a payload under data/,
// its manifests, bagit.txt, bag-info.txt and the tag manifests, each
// manifest in both SHA-512 and SHA-256. It is a format adapter and imports
// only the standard library; reading and verifying bags is the ingest
// package's (ingest.OpenBag).
//
// # Atomicity
//
// Write builds the bag in a temporary directory beside its destination
// (".NAME.tmp-…"), syncs every file and directory, and renames it into
// place last: a bag is at its path whole or not at all. A failed Write
// removes its temporary directory; a crash leaves it (a hidden
// ".NAME.tmp-…" beside the destination, safe to remove once no export
// runs: Write does not, since another process may be writing it). An
// existing destination is never replaced.
//
// # Cost
//
// Every payload byte is read once and written once, hashed with both
// algorithms as it is copied; the manifests are held in memory (one line
// per payload file).
package bagit
