// Package backup takes online, consistent, incremental copies of a
// repository (its SQLite database, its content store and its OCFL
// preservation copy) into a directory or an S3 prefix, and restores them
// into a fresh data directory.
//
// A destination holds a shared pool of files named by their digest, and
// one directory per backup:
//
//	pool/sha256/ab/<sha256>        the content store's blobs (SHA-256)
//	pool/sha512/ab/<sha512>        the preservation copy's files (SHA-512,
//	                               as OCFL digests them)
//	backups/<time>/started         when the run began (claims the directory)
//	backups/<time>/shelfmark.db    the database as of one moment
//	backups/<time>/blobs.txt       the SHA-256 of every blob the database refers to
//	backups/<time>/ocfl.txt        "<sha512> <path>" per file of the storage root
//	backups/<time>/backup.json     the manifest, written last
//
// A blob or file already in the pool is not copied again, so successive
// backups share what did not change, and the files of the storage root that
// OCFL never rewrites (version directories) are taken from the previous
// backup's listing without being read. The database is copied first, with
// SQLite's online backup API; then exactly the blobs that copy refers to, so
// a blob the copy needs cannot be missed because it was collected later.
// Every file is verified against its digest as it is written. The manifest
// is written last, in one atomic write, after everything it names is
// durable: a backup without one is not whole, and Restore refuses it.
package backup
