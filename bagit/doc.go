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
// place last: a bag is at its path whole or not at all, and a crash
// leaves only a temporary directory, which the next Write to the same
// parent removes. An existing destination is never replaced.
//
// # Cost
//
// Every payload byte is read once and written once, hashed with both
// algorithms as it is copied; the manifests are held in memory (one line
// per payload file).
package bagit
