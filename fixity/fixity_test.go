package fixity

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/blob"
	"github.com/shelfmark/shelfmark/internal/testkit"
	"github.com/shelfmark/shelfmark/ocfl"
	"github.com/shelfmark/shelfmark/postgres"
	"github.com/shelfmark/shelfmark/preserve"
	"github.com/shelfmark/shelfmark/sqlite"
)

// clock is a settable time.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

func (c *clock) Add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

// stack is a repository with a content store and its preservation copy.
type stack struct {
	ctx   context.Context
	store shelfmark.Storage
	pe    shelfmark.PreservationEvents
	repo  *shelfmark.Repository
	ids   *shelfmark.IDCodec
	dir   string
	blobs *blob.LocalStore
	root  *ocfl.Root
	fsys  *ocfl.DirFS
	p     *preserve.Preserver
	clock *clock
}

// stacks runs f on SQLite and on PostgreSQL.
func stacks(t *testing.T, f func(t *testing.T, s *stack)) {
	open := map[string]func(t *testing.T, dir string) (shelfmark.Storage, error){
		"sqlite": func(t *testing.T, dir string) (shelfmark.Storage, error) {
			return sqlite.Open(context.Background(), filepath.Join(dir, "db.sqlite"), sqlite.Options{})
		},
		"postgres": func(t *testing.T, _ string) (shelfmark.Storage, error) {
			return postgres.Open(context.Background(), testkit.PostgresSchema(t), postgres.Options{})
		},
	}
	for _, name := range []string{"sqlite", "postgres"} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			store, err := open[name](t, dir)
			if err != nil {
				t.Fatal(err)
			}
			s := &stack{store: store, dir: dir, clock: &clock{t: time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)}}
			s.pe = store.(shelfmark.PreservationEvents)
			s.ctx = shelfmark.WithCaller(context.Background(), shelfmark.SystemCaller("test"))
			if s.ids, err = shelfmark.LoadIDCodec(context.Background(), store); err != nil {
				t.Fatal(err)
			}
			s.repo = shelfmark.NewRepository(store, shelfmark.RepositoryOptions{IDs: s.ids, Now: s.clock.Now})
			if s.blobs, err = blob.NewLocal(filepath.Join(dir, "blobs")); err != nil {
				t.Fatal(err)
			}
			if s.fsys, err = ocfl.NewDirFS(filepath.Join(dir, "ocfl")); err != nil {
				t.Fatal(err)
			}
			if s.root, err = ocfl.InitRoot(context.Background(), s.fsys); err != nil {
				t.Fatal(err)
			}
			s.p = preserve.New(store, s.blobs, s.root, s.ids, preserve.Options{Now: s.clock.Now})
			t.Cleanup(func() {
				s.repo.Close()
				s.blobs.Close()
				store.Close()
			})
			f(t, s)
		})
	}
}

// original is a file stored in the content store.
type original struct {
	id   shelfmark.ID
	key  int64
	sha  string
	body []byte
}

// file stores body and makes a file set of work holding it as its original.
func (s *stack) file(t *testing.T, work shelfmark.ID, body []byte) original {
	t.Helper()
	b, err := s.blobs.Put(s.ctx, bytes.NewReader(body), shelfmark.PutOptions{})
	if err != nil {
		t.Fatal(err)
	}
	set, err := s.repo.CreateResource(s.ctx, &shelfmark.NewResource{Kind: shelfmark.KindFileSet, Parent: work})
	if err != nil {
		t.Fatal(err)
	}
	f, err := s.repo.CreateResource(s.ctx, &shelfmark.NewResource{Kind: shelfmark.KindFile, Parent: set.ID, File: &shelfmark.File{
		Name: "page.bin", MediaType: "application/octet-stream", Size: b.Size, SHA256: b.Digests[shelfmark.SHA256], Use: shelfmark.UseOriginal}})
	if err != nil {
		t.Fatal(err)
	}
	k, _ := s.ids.Key(f.ID)
	return original{id: f.ID, key: k, sha: b.Digests[shelfmark.SHA256], body: body}
}

// preserve writes the preservation copy of every change.
func (s *stack) preserve(t *testing.T) {
	t.Helper()
	s.clock.Add(time.Minute)
	if _, _, err := s.p.CatchUp(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// body is n bytes made from seed.
func body(seed byte, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = seed + byte(i*7)
	}
	return b
}

// flip changes one byte of the file at path.
func flip(t *testing.T, path string, at int) {
	t.Helper()
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b[at] ^= 0x40
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// blobPath is where the local store keeps a large blob.
func (s *stack) blobPath(sha string) string {
	return filepath.Join(s.dir, "blobs", sha[0:2], sha[2:4], sha)
}

// contentPath is the file of the OCFL copy of o.
func (s *stack) contentPath(t *testing.T, work shelfmark.ID, o original) string {
	t.Helper()
	obj, err := s.root.Open(context.Background(), preserve.ObjectID(work))
	if err != nil {
		t.Fatal(err)
	}
	rec, err := readRecord(context.Background(), obj)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rec.Resources {
		if r.ID == string(o.id) {
			for _, cf := range obj.ContentFiles() {
				if cf.Digest == r.File.SHA512 {
					return filepath.Join(s.fsys.Dir(), filepath.FromSlash(cf.Path))
				}
			}
		}
	}
	t.Fatalf("no content file of %s", o.id)
	return ""
}

// blobSHA is the SHA-256 of what the content store serves for sha.
func (s *stack) blobSHA(t *testing.T, sha string) string {
	t.Helper()
	rc, err := s.blobs.Open(context.Background(), sha)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	h := sha256.New()
	if _, err := h.Write(readAll(t, rc)); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func readAll(t *testing.T, r interface{ Read([]byte) (int, error) }) []byte {
	t.Helper()
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(r); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// events are the stored events of key.
func (s *stack) events(t *testing.T, key int64) []shelfmark.PreservationEvent {
	t.Helper()
	evs, err := s.pe.Events(context.Background(), key, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

// audit is the fixity entries of the audit trail, newest first.
func (s *stack) audit(t *testing.T) []*shelfmark.AuditEntry {
	t.Helper()
	var out []*shelfmark.AuditEntry
	err := s.store.View(context.Background(), func(tx shelfmark.ReadTx) (err error) {
		out, err = tx.Audit(context.Background(), shelfmark.AuditQuery{Actor: "system:fixity", Limit: 100})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// has reports whether evs holds an event of the type, copy and outcome.
func has(evs []shelfmark.PreservationEvent, typ, copy, outcome string) bool {
	for _, e := range evs {
		if e.Type == typ && e.Copy == copy && e.Outcome == outcome {
			return true
		}
	}
	return false
}

// TestRepair: one byte flipped in an original in the content store and
// another in a second original's OCFL copy are each found by a pass,
// rewritten from the other copy (the blob reads whole and the object
// validates again), and recorded as fixity-check and recovery events and
// audit entries; with both copies of a third original damaged the file
// is reported damaged, and stays so until a copy is whole again.
func TestRepair(t *testing.T) {
	stacks(t, func(t *testing.T, s *stack) {
		ctx := context.Background()
		w, err := s.repo.CreateResource(s.ctx, &shelfmark.NewResource{Kind: shelfmark.KindWork})
		if err != nil {
			t.Fatal(err)
		}
		a := s.file(t, w.ID, body(1, 200<<10))
		b := s.file(t, w.ID, body(2, 300<<10))
		small := s.file(t, w.ID, body(3, 1000)) // kept in the pack database
		s.preserve(t)
		c, err := New(s.store, s.blobs, s.root, s.ids, Options{Rate: -1, Now: s.clock.Now, Page: 2, Logger: quiet})
		if err != nil {
			t.Fatal(err)
		}
		sum, err := c.Pass(ctx)
		if err != nil {
			t.Fatal(err)
		}
		// 3 blobs, and in the object 3 originals, object.json, metadata.nt
		if sum.Checked != 8 || sum.OK != 8 || sum.Repaired != 0 || sum.Damaged != 0 || sum.Bytes < 2*(500<<10) {
			t.Fatalf("a pass over whole copies: %+v", sum)
		}

		flip(t, s.blobPath(a.sha), 1000)
		bContent := s.contentPath(t, w.ID, b)
		flip(t, bContent, 5)
		s.clock.Add(time.Hour)
		sum, err = c.Pass(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if sum.Checked != 8 || sum.Repaired != 2 || sum.Damaged != 0 {
			t.Fatalf("a pass over two damaged copies: %+v", sum)
		}
		if got := s.blobSHA(t, a.sha); got != a.sha {
			t.Errorf("a's blob after the repair has sha256 %s", got)
		}
		if fi, err := os.Stat(s.blobPath(a.sha)); err != nil || fi.Mode().Perm() != 0o444 {
			t.Errorf("a's repaired blob: %v, %v", fi, err)
		}
		if got, _ := os.ReadFile(bContent); !bytes.Equal(got, b.body) {
			t.Error("b's OCFL content after the repair differs from the original")
		}
		if rep := ocfl.ValidateRoot(ctx, s.fsys); !rep.Valid() {
			t.Errorf("the storage root after the repair: %s", rep)
		}
		ea := s.events(t, a.key)
		if !has(ea, shelfmark.EventFixityCheck, shelfmark.CopyStore, shelfmark.OutcomeFailure) ||
			!has(ea, shelfmark.EventRecovery, shelfmark.CopyStore, shelfmark.OutcomeSuccess) {
			t.Errorf("a's events: %+v", ea)
		}
		eb := s.events(t, b.key)
		if !has(eb, shelfmark.EventFixityCheck, shelfmark.CopyOCFL, shelfmark.OutcomeFailure) ||
			!has(eb, shelfmark.EventRecovery, shelfmark.CopyOCFL, shelfmark.OutcomeSuccess) ||
			has(eb, shelfmark.EventRecovery, shelfmark.CopyStore, shelfmark.OutcomeSuccess) {
			t.Errorf("b's events: %+v", eb)
		}
		for _, e := range append(ea, eb...) {
			if e.Agent != "Shelfmark "+shelfmark.Version || e.At.IsZero() || e.Digest == "" {
				t.Errorf("an event without its agent, date or digest: %+v", e)
			}
		}
		au := s.audit(t)
		repairs := map[int64]bool{}
		for _, e := range au {
			if e.Action == "fixity.repair" && e.Outcome == shelfmark.AuditOK {
				repairs[e.Resource] = true
			}
		}
		if !repairs[a.key] || !repairs[b.key] || len(au) != 2 {
			t.Errorf("the audit trail: %d fixity entries, repairs %v", len(au), repairs)
		}
		if d, err := s.repo.FileDamaged(ctx, a.id); err != nil || d {
			t.Errorf("a repaired file is damaged: %v, %v", d, err)
		}

		// both copies of the small original damaged: reported, not repaired
		if err := s.blobs.ReplaceBlob(ctx, small.sha, bytes.NewReader(body(9, 1000))); err == nil {
			t.Fatal("ReplaceBlob took bytes of another digest")
		}
		corruptSmall(t, s, small.sha)
		flip(t, s.contentPath(t, w.ID, small), 0)
		s.clock.Add(time.Hour)
		if sum, err = c.Pass(ctx); err != nil {
			t.Fatal(err)
		}
		if sum.Damaged != 2 || sum.Repaired != 0 {
			t.Fatalf("a pass over an original damaged in both copies: %+v", sum)
		}
		if d, err := s.repo.FileDamaged(ctx, small.id); err != nil || !d {
			t.Errorf("the doubly damaged file: damaged %v, %v", d, err)
		}
		if n, err := s.pe.CountDamaged(ctx); err != nil || n != 1 {
			t.Errorf("damaged files: %d, %v", n, err)
		}
		failed, err := s.pe.FixityStates(ctx, shelfmark.FixityState{}, true, 100)
		if err != nil {
			t.Fatal(err)
		}
		damaged := 0
		for _, st := range failed {
			if st.Damaged {
				damaged++
				if st.Resource != small.key || !strings.Contains(st.Detail, "not repaired") {
					t.Errorf("a damaged state: %+v", st)
				}
			}
		}
		if damaged != 2 {
			t.Errorf("%d damaged states, want 2 (one per copy): %+v", damaged, failed)
		}
		if au := s.audit(t); au[0].Action != "fixity.damaged" || au[0].Outcome != shelfmark.AuditFailed {
			t.Errorf("the newest audit entry: %+v", au[0])
		}

		// a whole copy again (the bytes put back by hand): repaired, no
		// longer damaged
		if err := s.blobs.ReplaceBlob(ctx, small.sha, bytes.NewReader(small.body)); err != nil {
			t.Fatal(err)
		}
		s.clock.Add(time.Hour)
		if sum, err = c.Pass(ctx); err != nil || sum.Repaired != 1 || sum.Damaged != 0 {
			t.Fatalf("the pass after a copy was put back: %+v, %v", sum, err)
		}
		if d, _ := s.repo.FileDamaged(ctx, small.id); d {
			t.Error("a file whose copies are whole again is still damaged")
		}
	})
}

// corruptSmall changes one byte of a blob kept in the pack database.
func corruptSmall(t *testing.T, s *stack, sha string) {
	t.Helper()
	sum, _ := hex.DecodeString(sha)
	data := []byte(nil)
	rc, err := s.blobs.Open(context.Background(), sha)
	if err != nil {
		t.Fatal(err)
	}
	data = readAll(t, rc)
	rc.Close()
	data[10] ^= 1
	db, err := sql.Open("sqlite3", filepath.Join(s.dir, "blobs", "small.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if n, err := db.Exec(`UPDATE blobs SET data = ? WHERE sha256 = ?`, data, sum); err != nil {
		t.Fatal(err)
	} else if k, _ := n.RowsAffected(); k != 1 {
		t.Fatalf("%d rows of the pack database changed", k)
	}
}

// TestResume: a pass stopped part way (its context cancelled after the
// first page) resumes from its saved cursor, checking only what it had
// not, and then ends; the next pass starts from the beginning.
func TestResume(t *testing.T) {
	stacks(t, func(t *testing.T, s *stack) {
		ctx := context.Background()
		w, err := s.repo.CreateResource(s.ctx, &shelfmark.NewResource{Kind: shelfmark.KindWork})
		if err != nil {
			t.Fatal(err)
		}
		for i := range 5 {
			s.file(t, w.ID, body(byte(i), 70<<10))
		}
		s.preserve(t)
		cctx, cancel := context.WithCancel(ctx)
		defer cancel()
		pages := 0
		c, err := New(s.store, s.blobs, s.root, s.ids, Options{Rate: -1, Now: s.clock.Now, Page: 2, Logger: quiet, Progress: func(Summary) {
			if pages++; pages == 2 {
				cancel()
			}
		}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Pass(cctx); !errors.Is(err, context.Canceled) {
			t.Fatalf("a cancelled pass: %v", err)
		}
		p, err := s.pe.FixityPass(ctx)
		if err != nil || p.Files != 4 || !strings.HasPrefix(p.Cursor, "store:") || !p.Finished.IsZero() {
			t.Fatalf("the stopped pass: %+v, %v", p, err)
		}
		c.opts.Progress = nil
		sum, err := c.Pass(ctx)
		if err != nil {
			t.Fatal(err)
		}
		// 1 blob left, then 5 originals, object.json and metadata.nt
		if !sum.Resumed || sum.Checked != 8 {
			t.Errorf("the resumed pass: %+v, want 8 checks", sum)
		}
		p, _ = s.pe.FixityPass(ctx)
		if p.Files != 12 || p.Finished.IsZero() || p.Cursor != "" {
			t.Errorf("the finished pass: %+v", p)
		}
		if sum, err := c.Pass(ctx); err != nil || sum.Resumed || sum.Checked != 12 {
			t.Errorf("the next pass: %+v, %v", sum, err)
		}
	})
}

// TestRate: a pass reads no faster than its rate: the waits it asks for
// add up to its bytes over the rate (a clock the waits move, no wall
// time).
func TestRate(t *testing.T) {
	stacks(t, func(t *testing.T, s *stack) {
		w, err := s.repo.CreateResource(s.ctx, &shelfmark.NewResource{Kind: shelfmark.KindWork})
		if err != nil {
			t.Fatal(err)
		}
		for i := range 3 {
			s.file(t, w.ID, body(byte(i), 1<<20))
		}
		s.preserve(t)
		var slept time.Duration
		c, err := New(s.store, s.blobs, s.root, s.ids, Options{Rate: 1 << 20, Now: s.clock.Now, Logger: quiet,
			Sleep: func(_ context.Context, d time.Duration) error { slept += d; s.clock.Add(d); return nil }})
		if err != nil {
			t.Fatal(err)
		}
		sum, err := c.Pass(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		want := time.Duration(float64(sum.Bytes) / (1 << 20) * float64(time.Second))
		if sum.Bytes < 6<<20 || slept < want-time.Second || slept > want+time.Second {
			t.Errorf("%d bytes at 1 MiB/s waited %v, want about %v", sum.Bytes, slept, want)
		}
	})
}

// quiet is the logger of the tests' checkers.
var quiet = slog.New(slog.DiscardHandler)
