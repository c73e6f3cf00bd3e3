package storagetest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
)

// testUploads checks the records of uploads: recording (again), the usage
// kept with them, deleting, pruning the oldest, the blob references they
// hold, and the live files holding some bytes.
func testUploads(t *testing.T, open Opener) {
	e := newEnv(t, open, shelfmark.RepositoryOptions{})
	ctx := context.Background()
	sha := func(i int) string { return fmt.Sprintf("%064x", i) }
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	put := func(u shelfmark.Upload) {
		t.Helper()
		if err := e.store.Update(ctx, func(tx shelfmark.WriteTx) error { return tx.PutUpload(ctx, u) }); err != nil {
			t.Fatal(err)
		}
	}
	usage := func(user int64) shelfmark.UploadUsage {
		t.Helper()
		var u shelfmark.UploadUsage
		var calls []call
		err := e.store.View(ctx, func(tx shelfmark.ReadTx) error {
			var err error
			calls = e.rec.capture(func() { u, err = tx.UploadUsage(ctx, user) })
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(calls) != 1 {
			t.Errorf("usage read with %d statements, want 1: %v", len(calls), calls)
		}
		return u
	}
	put(shelfmark.Upload{User: 1, SHA256: sha(1), Size: 10, Stored: t0})
	put(shelfmark.Upload{User: 1, SHA256: sha(2), Size: 20, Stored: t0.Add(time.Second)})
	put(shelfmark.Upload{User: 2, SHA256: sha(1), Size: 10, Stored: t0.Add(2 * time.Second)})
	put(shelfmark.Upload{User: 1, SHA256: sha(1), Size: 10, Stored: t0.Add(3 * time.Second)}) // again: counted once, time renewed
	if u := usage(1); u != (shelfmark.UploadUsage{Files: 2, Bytes: 30, AllFiles: 3, AllBytes: 40}) {
		t.Errorf("usage of user 1: %+v", u)
	}
	if u := usage(3); u != (shelfmark.UploadUsage{AllFiles: 3, AllBytes: 40}) {
		t.Errorf("usage of a user without uploads: %+v", u)
	}
	err := e.store.View(ctx, func(tx shelfmark.ReadTx) error {
		ups, err := tx.Uploads(ctx, 1, []string{sha(1), sha(2), sha(3)})
		if err != nil {
			return err
		}
		if len(ups) != 2 || !ups[sha(1)].Stored.Equal(t0.Add(3*time.Second)) || ups[sha(2)].Size != 20 || ups[sha(2)].User != 1 {
			t.Errorf("uploads of user 1: %+v", ups)
		}
		if ups, err := tx.Uploads(ctx, 2, []string{sha(2)}); err != nil || len(ups) != 0 {
			t.Errorf("another user's upload is not theirs: %+v, %v", ups, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// an upload record holds its bytes for the collector
	refs := e.store.(shelfmark.BlobReferences)
	if got, err := refs.ReferencedBlobs(ctx, []string{sha(1), sha(2), sha(3)}); err != nil || len(got) != 2 || !got[sha(1)] || !got[sha(2)] {
		t.Errorf("referenced by uploads: %v, %v", got, err)
	}
	var n int
	err = e.store.Update(ctx, func(tx shelfmark.WriteTx) error {
		var err error
		n, err = tx.DeleteUploads(ctx, 1, []string{sha(2), sha(3)})
		return err
	})
	if err != nil || n != 1 {
		t.Fatalf("delete: %d, %v", n, err)
	}
	if u := usage(1); u != (shelfmark.UploadUsage{Files: 1, Bytes: 10, AllFiles: 2, AllBytes: 20}) {
		t.Errorf("usage after a delete: %+v", u)
	}
	if got, err := refs.ReferencedBlobs(ctx, []string{sha(2)}); err != nil || len(got) != 0 {
		t.Errorf("a deleted upload still holds its bytes: %v, %v", got, err)
	}
	// a refused upload takes one use off: user 1 sent sha(1) twice
	release := func(user int64, shas ...string) int {
		t.Helper()
		var n int
		if err := e.store.Update(ctx, func(tx shelfmark.WriteTx) error {
			var err error
			n, err = tx.ReleaseUploads(ctx, user, shas)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := release(1, sha(1), sha(9)); n != 0 {
		t.Errorf("released %d records of two uses, want 0", n)
	}
	if u := usage(1); u != (shelfmark.UploadUsage{Files: 1, Bytes: 10, AllFiles: 2, AllBytes: 20}) {
		t.Errorf("usage after a release of one of two uses: %+v", u)
	}
	put(shelfmark.Upload{User: 1, SHA256: sha(1), Size: 10, Stored: t0.Add(3 * time.Second)}) // two uses again
	if n := release(1, sha(1), sha(1), sha(1)); n != 1 {
		t.Errorf("released %d records, want 1 (three uses taken off two)", n)
	}
	if u := usage(1); u != (shelfmark.UploadUsage{AllFiles: 1, AllBytes: 10}) {
		t.Errorf("usage after the last use went: %+v", u)
	}
	put(shelfmark.Upload{User: 1, SHA256: sha(1), Size: 10, Stored: t0.Add(3 * time.Second)})
	// pruning takes the oldest first, at most limit
	prune := func(before time.Time, limit int) int {
		t.Helper()
		var n int
		if err := e.store.Update(ctx, func(tx shelfmark.WriteTx) error {
			var err error
			n, err = tx.PruneUploads(ctx, before, limit)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := prune(t0.Add(10*time.Second), 1); n != 1 {
		t.Errorf("pruned %d, want 1", n)
	}
	if u := usage(2); u != (shelfmark.UploadUsage{Files: 0, Bytes: 0, AllFiles: 1, AllBytes: 10}) {
		t.Errorf("usage after pruning user 2's older upload: %+v", u)
	}
	if n := prune(t0.Add(3*time.Second), 10); n != 0 {
		t.Errorf("pruned %d records stored at the bound, want 0", n)
	}
	if n, err := shelfmark.PruneUploads(ctx, e.store, t0.Add(time.Hour)); err != nil || n != 1 {
		t.Errorf("PruneUploads: %d, %v", n, err)
	}
	if u := usage(1); u != (shelfmark.UploadUsage{}) {
		t.Errorf("usage after pruning all: %+v", u)
	}

	// the live files holding some bytes, by key, at most limit
	w := rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindWork}))
	fs := rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindFileSet, Parent: w.ID}))
	gone := rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindWork}))
	goneFS := rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindFileSet, Parent: gone.ID}))
	file := func(parent shelfmark.ID, i int) *shelfmark.Resource {
		return rs(t)(e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindFile, Parent: parent,
			File: &shelfmark.File{Name: "f", MediaType: "image/tiff", Size: int64(100 + i), SHA256: sha(i), Use: "original"}}))
	}
	file(goneFS.ID, 7)
	if err := e.repo.DeleteResource(ctx, gone.ID, 0); err != nil {
		t.Fatal(err)
	}
	var live []int64
	for range 3 {
		k, err := e.repo.IDs().Key(file(fs.ID, 7).ID)
		if err != nil {
			t.Fatal(err)
		}
		live = append(live, k)
	}
	file(fs.ID, 8)
	err = e.store.View(ctx, func(tx shelfmark.ReadTx) error {
		var held []shelfmark.HeldFile
		var err error
		calls := e.rec.capture(func() { held, err = tx.FilesHolding(ctx, sha(7), 2) })
		if err != nil {
			return err
		}
		if len(held) != 2 || held[0] != (shelfmark.HeldFile{Key: live[0], Size: 107}) || held[1].Key != live[1] {
			t.Errorf("files holding %s: %+v, want the live %v", sha(7), held, live[:2])
		}
		if len(calls) != 1 {
			t.Errorf("%d statements, want 1", len(calls))
		}
		if held, err := tx.FilesHolding(ctx, sha(9), 8); err != nil || len(held) != 0 {
			t.Errorf("files holding bytes no file names: %+v, %v", held, err)
		}
		if held, err := tx.FilesHolding(ctx, "", 8); err != nil || len(held) != 0 {
			t.Errorf("files holding no digest: %+v, %v", held, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// testUploadRights checks who may name bytes by their SHA-256 in a new
// file: the caller who sent them, or who may read a live file holding
// them; anyone else gets the answer of bytes that are not stored, with no
// size. And who may deposit anywhere, which uploads require.
func testUploadRights(t *testing.T, open Opener) {
	e := newAccessEnv(t, open)
	sys := context.Background()
	collA := rs(t)(e.repo.CreateResource(sys, &shelfmark.NewResource{Kind: shelfmark.KindCollection}))
	collB := rs(t)(e.repo.CreateResource(sys, &shelfmark.NewResource{Kind: shelfmark.KindCollection}))
	depositor := e.user(t, "depositor", shelfmark.ScopeWrite)
	e.grant(t, collA, shelfmark.UserPrincipal("depositor"), shelfmark.RoleDepositor)
	nobody := e.user(t, "nobody", shelfmark.ScopeWrite)
	readOnly := e.user(t, "reader", shelfmark.ScopeRead)
	e.grant(t, collA, shelfmark.UserPrincipal("reader"), shelfmark.RoleDepositor)
	sha := func(i int) string { return fmt.Sprintf("%064x", i) }
	// B holds a private file (bytes 1) and a public one (bytes 2)
	holder := func(vis shelfmark.Visibility, i int) {
		w := rs(t)(e.repo.CreateResource(sys, &shelfmark.NewResource{Kind: shelfmark.KindWork, Visibility: vis, MemberOf: []shelfmark.ID{collB.ID}}))
		fs := rs(t)(e.repo.CreateResource(sys, &shelfmark.NewResource{Kind: shelfmark.KindFileSet, Parent: w.ID}))
		rs(t)(e.repo.CreateResource(sys, &shelfmark.NewResource{Kind: shelfmark.KindFile, Parent: fs.ID,
			File: &shelfmark.File{Name: "b", MediaType: "text/plain", Size: 42, SHA256: sha(i), Use: "original"}}))
	}
	holder(shelfmark.Private, 1)
	holder(shelfmark.Public, 2)

	// attach groups a public work in A with a file naming bytes, as c
	attach := func(c *shelfmark.Caller, digest string, size int64) error {
		t.Helper()
		ctx := as(c)
		ids, err := e.repo.MintIDs(sys, 3)
		if err != nil {
			t.Fatal(err)
		}
		g := &shelfmark.NewGroup{Resources: []*shelfmark.NewResource{
			{ID: ids[0], Kind: shelfmark.KindWork, Visibility: shelfmark.Public, MemberOf: []shelfmark.ID{collA.ID}},
			{ID: ids[1], Kind: shelfmark.KindFileSet, Parent: ids[0]},
			{ID: ids[2], Kind: shelfmark.KindFile, Parent: ids[1], File: &shelfmark.File{Name: "x.txt", MediaType: "text/plain", Size: size, SHA256: digest, Use: "original"}},
		}}
		_, errs := e.repo.CreateGroups(ctx, []*shelfmark.NewGroup{g})
		return errs[0]
	}
	// the answer without the digest it names
	shape := func(err error, digest string) string {
		var se *shelfmark.Error
		if !errors.As(err, &se) {
			return fmt.Sprintf("%v", err)
		}
		return fmt.Sprintf("%s|%s|%d", se.Code, strings.ReplaceAll(se.Message, digest, "SHA"), len(se.Details))
	}
	private := attach(depositor, sha(1), 42)
	unknown := attach(depositor, sha(3), 42)
	if shelfmark.ErrorCode(private) != shelfmark.EINVALID || shape(private, sha(1)) != shape(unknown, sha(3)) {
		t.Errorf("a private file's bytes of another collection: %v; bytes never stored: %v (want the same answer)", private, unknown)
	}
	if strings.Contains(shelfmark.ErrorMessage(private), "42") {
		t.Errorf("the refusal discloses the size: %v", private)
	}
	if wrongSize := attach(depositor, sha(1), 7); shape(wrongSize, sha(1)) != shape(unknown, sha(3)) {
		t.Errorf("a wrong size for bytes the caller may not name: %v (want %v)", wrongSize, unknown)
	}
	// a signed-in user with no rights is refused for the work first
	if a, b := attach(nobody, sha(1), 42), attach(nobody, sha(3), 42); shelfmark.ErrorCode(a) != shelfmark.EFORBIDDEN || shape(a, sha(1)) != shape(b, sha(3)) {
		t.Errorf("no rights: %v and %v", a, b)
	}
	// readable bytes may be named, with their size
	if err := attach(depositor, sha(2), 42); err != nil {
		t.Errorf("the bytes of a public file: %v", err)
	}
	if err := attach(depositor, sha(2), 41); shelfmark.ErrorCode(err) != shelfmark.EDIGESTMISMATCH {
		t.Errorf("a readable file's bytes with another size: %v", err)
	}
	// the caller's own upload may be named, once recorded, and its record
	// goes with the file that names it
	if _, err := e.repo.RecordUploads(as(depositor), []shelfmark.Upload{{SHA256: sha(4), Size: 5}}); err != nil {
		t.Fatal(err)
	}
	if u, err := e.repo.UploadUsage(as(depositor)); err != nil || u.Files != 1 || u.Bytes != 5 {
		t.Errorf("usage after an upload: %+v, %v", u, err)
	}
	if err := attach(nobody, sha(4), 5); shelfmark.ErrorCode(err) != shelfmark.EFORBIDDEN {
		t.Errorf("another user naming the upload: %v", err)
	}
	if err := attach(depositor, sha(4), 6); shelfmark.ErrorCode(err) != shelfmark.EDIGESTMISMATCH {
		t.Errorf("the own upload with another size: %v", err)
	}
	if err := attach(depositor, sha(4), 5); err != nil {
		t.Errorf("the own upload: %v", err)
	}
	if u, err := e.repo.UploadUsage(as(depositor)); err != nil || u.Files != 0 || u.Bytes != 0 || u.AllFiles != 0 {
		t.Errorf("usage once the upload is named: %+v, %v", u, err)
	}
	// named again: the caller deposited the file, so it reads it
	if err := attach(depositor, sha(4), 5); err != nil {
		t.Errorf("bytes of the caller's own file: %v", err)
	}
	// a refused upload's record goes at once, unless another upload of
	// the same bytes waits to be named
	for range 2 {
		if _, err := e.repo.RecordUploads(as(depositor), []shelfmark.Upload{{SHA256: sha(5), Size: 5}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.repo.DiscardUploads(as(depositor), nil, []string{sha(5)}, time.Now()); err != nil {
		t.Fatal(err)
	}
	if u, err := e.repo.UploadUsage(as(depositor)); err != nil || u.Files != 1 {
		t.Errorf("usage after one of two uploads was refused: %+v, %v", u, err)
	}
	if err := e.repo.DiscardUploads(as(depositor), nil, []string{sha(5)}, time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := attach(depositor, sha(5), 5); shape(err, sha(5)) != shape(unknown, sha(3)) {
		t.Errorf("a discarded upload: %v", err)
	}

	// the right to deposit somewhere
	admin := e.user(t, "admin", shelfmark.ScopeWrite)
	admin.Admin = true
	for _, tc := range []struct {
		c    *shelfmark.Caller
		want string
	}{
		{shelfmark.Anonymous(), shelfmark.EUNAUTHORIZED},
		{nobody, shelfmark.EFORBIDDEN},
		{readOnly, shelfmark.EFORBIDDEN},
		{depositor, ""},
		{admin, ""},
	} {
		if err := e.repo.CheckDepositRight(as(tc.c)); shelfmark.ErrorCode(err) != tc.want {
			t.Errorf("deposit right of %s: %v, want %q", tc.c.Actor(), err, tc.want)
		}
	}
	repoWide := e.user(t, "repowide", shelfmark.ScopeWrite)
	e.grant(t, nil, shelfmark.UserPrincipal("repowide"), shelfmark.RoleCurator)
	if err := e.repo.CheckDepositRight(as(repoWide)); err != nil {
		t.Errorf("a curator of the repository: %v", err)
	}
	// a role on a collection deleted since gives no right
	collC := rs(t)(e.repo.CreateResource(sys, &shelfmark.NewResource{Kind: shelfmark.KindCollection}))
	former := e.user(t, "former", shelfmark.ScopeWrite)
	e.grant(t, collC, shelfmark.UserPrincipal("former"), shelfmark.RoleManager)
	if err := e.repo.CheckDepositRight(as(former)); err != nil {
		t.Errorf("a manager of a collection: %v", err)
	}
	if err := e.repo.DeleteResource(sys, collC.ID, 0); err != nil {
		t.Fatal(err)
	}
	if err := e.repo.CheckDepositRight(as(former)); shelfmark.ErrorCode(err) != shelfmark.EFORBIDDEN {
		t.Errorf("a manager of a deleted collection: %v", err)
	}
}
