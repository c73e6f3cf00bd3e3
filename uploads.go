package shelfmark

import (
	"cmp"
	"context"
	"slices"
	"time"
)

// Upload records that a user sent some bytes to the content store (POST
// /api/v1/blobs, a file upload, the deposit form, a bulk ingest run as the
// user) that no file of theirs names yet. The record proves the user holds
// the bytes, so that they may name them by SHA-256 in a file; it keeps the
// bytes from the collector of unreferenced blobs; and it counts towards the
// user's upload quota. It is deleted when the user names the bytes in a
// file, when the upload or deposit is refused, or by PruneUploads once it
// is older than the collector's grace period.
type Upload struct {
	User   int64
	SHA256 string // lower-case hex
	Size   int64
	// Stored is when the bytes were last sent.
	Stored time.Time
}

// UploadUsage is what the uploads no file names yet hold: those of one
// user, and those of all users.
type UploadUsage struct {
	Files, Bytes       int64
	AllFiles, AllBytes int64
}

// HeldFile is a live file holding some bytes.
type HeldFile struct {
	Key  int64
	Size int64
}

// UploadReadTx reads the records of uploads within a transaction.
type UploadReadTx interface {
	// Uploads returns the uploads of user among shas, by SHA-256, in one
	// statement.
	Uploads(ctx context.Context, user int64, shas []string) (map[string]Upload, error)
	// UploadUsage returns what the uploads of user and of all users hold,
	// reading two rows kept with the records (not the records).
	UploadUsage(ctx context.Context, user int64) (UploadUsage, error)
	// FilesHolding returns up to limit live files whose managed bytes have
	// the SHA-256 sha, by key, through the index on files (sha256).
	FilesHolding(ctx context.Context, sha string, limit int) ([]HeldFile, error)
}

// UploadWriteTx writes the records of uploads within a write transaction,
// keeping the usage UploadUsage reads.
type UploadWriteTx interface {
	UploadReadTx
	// PutUpload records u, or adds a use to the user's record of the same
	// bytes and renews its time (the usage counts a record once,
	// whatever its uses: one for each upload of the bytes that waits to
	// be named or refused).
	PutUpload(ctx context.Context, u Upload) error
	// DeleteUploads deletes the uploads of user among shas, whatever
	// their uses (a file names the bytes now), and returns how many it
	// deleted.
	DeleteUploads(ctx context.Context, user int64, shas []string) (int, error)
	// ReleaseUploads takes one use off each upload of user among shas (an
	// upload of the bytes was refused), deletes those left without any,
	// and returns how many it deleted.
	ReleaseUploads(ctx context.Context, user int64, shas []string) (int, error)
	// PruneUploads deletes at most limit uploads stored before the given
	// time and returns how many it deleted.
	PruneUploads(ctx context.Context, before time.Time, limit int) (int, error)
}

// pruneBatch is how many upload records one PruneUploads transaction
// deletes.
const pruneBatch = 1000

// PruneUploads deletes the upload records stored before the given time (the
// collector of unreferenced blobs passes its grace period), a batch per
// transaction, and returns how many it deleted. The bytes of a pruned
// record are then the collector's to judge.
func PruneUploads(ctx context.Context, store Storage, before time.Time) (int, error) {
	total := 0
	for {
		var n int
		err := store.Update(ctx, func(tx WriteTx) error {
			var err error
			n, err = tx.PruneUploads(ctx, before, pruneBatch)
			return err
		})
		if err != nil {
			return total, err
		}
		total += n
		if n < pruneBatch {
			return total, nil
		}
	}
}

// UsageRow is one change of upload usage a backend adds: the files and
// bytes of one user's uploads, or, for User 0, of all users'.
type UsageRow struct {
	User, Files, Bytes int64
}

// UsageRows turns the changes of each user's usage (files, bytes) into the
// rows a backend adds, in the order its writers must lock them so that
// they never wait for each other in a cycle: the totals (User 0) first,
// then the users by key. None when there is no change.
func UsageRows(deltas map[int64][2]int64) []UsageRow {
	if len(deltas) == 0 {
		return nil
	}
	out := make([]UsageRow, 1, len(deltas)+1)
	for u, d := range deltas {
		out[0].Files += d[0]
		out[0].Bytes += d[1]
		out = append(out, UsageRow{User: u, Files: d[0], Bytes: d[1]})
	}
	slices.SortFunc(out[1:], func(a, b UsageRow) int { return cmp.Compare(a.User, b.User) })
	return out
}
