// Package ocfl reads, writes and validates Oxford Common File Layout 1.1
// storage (https://ocfl.io/1.1/spec/): the self-describing copy of every
// object from which a repository can be rebuilt. It is a format adapter and
// imports only the standard library.
//
// # Layout
//
// A storage root (Root) holds the declaration 0=ocfl_1.1, ocfl_layout.json
// naming the 0004-hashed-n-tuple-storage-layout extension, and that
// extension's extensions/0004-hashed-n-tuple-storage-layout/config.json
// (sha256, tupleSize 3, numberOfTuples 3, shortObjectRoot false). An object
// lives at ObjectPath(id): the sha256 of its id in hex, split into three
// directories of three characters, then the whole digest. The optional
// human-readable copy of the specification (ocfl_1.1.md) is not written:
// validators, ocfl-py among them, do not ask for it.
//
// An object root holds 0=ocfl_object_1.1, inventory.json and
// inventory.json.sha512 (the root inventory, which is the object's current
// state), and the version directories v1, v2, … Each version directory
// holds a copy of the inventory as of that version (and its sidecar) and,
// under content/, the files first seen in that version, stored under the
// first logical path (in sorted order) that had their digest. Content is
// addressed by sha512: a version records each logical path's digest, and
// the manifest maps each digest to the content file holding it, so content
// already stored is never written again (forward delta). Deleting a file
// drops it from the new version's state; its bytes stay for the earlier
// versions. Purge removes a whole object.
//
// # Commit point
//
// Root.Commit writes, in order: any new content into the new version's
// directory (each file's digest checked as it streams), the version's
// inventory.json (created exclusively) and its sidecar, then the root
// inventory.json, then the root sidecar. Writing the root inventory is the
// commit point. Every Write of the FS replaces a whole file atomically: a
// temporary file, fsync and rename on a local directory (DirFS); a single
// PUT on S3, where objects appear whole and there is no rename. On an FS
// that is a Linker (DirFS) the root inventory and sidecar are not written
// but made second names of the version's (hard links; a link to a
// temporary name and a rename when they replace older ones), which OCFL
// requires to be identical to them anyway: two file creations fewer per
// version. Before the commit point nothing a reader follows has changed;
// after it the new version is the object's head.
//
// A Batch commits versions of many objects with two synchronisations in
// all: each version is written up to its commit point without syncing
// (BatchFS.WriteLater; new files are created in place, since no reader
// follows them yet), then one sync (syncfs(2) on Linux) makes them all
// durable, then every root inventory is written, then one more sync. It is
// how the preserver keeps up with a bulk ingest: a version's cost is then
// the files and directories it makes, not their syncs.
//
// # Recovery
//
// A crash can leave: temporary files (named .ocfl-tmp-…); a version
// directory beyond the root inventory's head; a new object's root with no
// inventory.json yet; or, on a crash right after the commit point, a root
// sidecar that does not match the root inventory. Root.Open and Root.Commit
// detect each under the object's lock and repair it before going on: they
// remove the first three, and rewrite the sidecar when the root inventory
// is byte for byte the head version's inventory, whose own sidecar
// matches; and a root inventory that does not parse (torn by a crash
// during a Batch's commit points, on an FS that writes it anew) is restored from the newest version
// inventory that is whole and names itself the head. Anything else wrong
// is reported, never "repaired". So after a
// crash at any point an object reads as its last whole version, and the
// next Commit succeeds. Root.RecoverAll does the same for every object
// root at once (the root of a new object whose first version never
// committed is otherwise cleaned only when its id is written again): run it
// at start-up.
//
// # Rebuilding and fixity
//
// Root.Objects lists every object's id; Object.Versions, Object.State and
// Object.Open read any version back; Object.ContentFiles gives each stored
// file with the digest its bytes must have.
//
// # Concurrency
//
// Commits of one object are serialised by a lock in the Root and, on an FS
// that implements Locker (DirFS does, with a record lock on one byte of a
// lock file at the top of the storage root, which validators ignore), by a
// lock other processes honour too. The expected head is checked under that
// lock, so of two writers that both expect head N, one commits N+1 and the
// other gets ErrHeadMismatch. On an FS without locks (S3), the exclusive
// creation of the version inventory (If-None-Match: *) still stops two
// writers from both committing a version, but recovery by one could remove
// the other's version in progress: run one writing process per storage
// root, or give the FS a Locker. Readers are safe there: on an FS without
// locks Root.Open repairs nothing and reads the last committed version.
//
// # Validation
//
// ValidateObject and ValidateRoot check objects and storage roots against
// the specification and report each problem with its OCFL validation code
// (Exxx for errors, Wxxx for warnings). Their cost is bounded: an
// inventory is read only up to MaxInventorySize, and a report holds at
// most a thousand errors and a thousand warnings.
package ocfl
