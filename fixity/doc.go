// Package fixity checks, on a schedule, that every stored copy of every
// original still has the bytes it was given, and repairs a damaged copy
// from the other.
//
// # What a pass reads
//
// A pass reads every original the content store keeps (by file key,
// hashing its bytes with SHA-256 against the database's digest), then
// every content file of every object in the OCFL preservation copy (in
// storage-root order): an original against the SHA-256 its object's
// record gives (the record itself read against the inventory's SHA-512),
// any other content file against the inventory's SHA-512. Each check is a
// PREMIS "fixity check" event and the copy's fixity state (last check,
// outcome, damaged flag); the pass's cursor is saved after each page of
// originals and of objects, so that a pass stopped by a crash, a shutdown
// or a change of leader resumes where
// it stopped.
//
// # Repair
//
//   - The content store's copy damaged (or missing) and the OCFL copy
//     whole: the blob is rewritten from the OCFL copy (the newest version
//     of the work's object that holds the file).
//   - The OCFL copy damaged and the content store's copy whole: the
//     content file is rewritten from the blob (ocfl.Root.ReplaceContent,
//     which checks the bytes against the inventory under the object's
//     lock).
//
// Each repair is a PREMIS "recovery" event and an audit entry
// (fixity.repair). When neither copy is whole, the file is damaged: its
// states say so, the download of its content fails, and the audit trail
// has a fixity.damaged entry. An OCFL content file no file names (an
// object's record or metadata, an original a later version dropped) has
// no other copy: it is checked and reported, never repaired.
//
// # Cost
//
// Every byte of both copies is read once per pass, at most Options.Rate
// bytes a second (a pass after the first goes no faster than it must to
// finish within Options.Cycle, the time between the starts of two
// passes). A page of files costs one statement to read and, on SQLite,
// one transaction to record its states and events; a repair costs one
// read of the object's inventory and record and one write of the file.
package fixity
