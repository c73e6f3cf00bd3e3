package postgres

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/blob"
	"github.com/shelfmark/shelfmark/oai"
	"github.com/shelfmark/shelfmark/ocfl"
	"github.com/shelfmark/shelfmark/preserve"
)

// changeKeys reads the whole change feed and returns its keys in order.
func changeKeys(t *testing.T, db *DB) []int64 {
	t.Helper()
	var keys []int64
	view(t, db, func(tx shelfmark.ReadTx) error {
		rows, err := tx.Changes(context.Background(), 0, 1000)
		for _, r := range rows {
			keys = append(keys, r.Key)
		}
		return err
	})
	return keys
}

// claimAndHold starts a parallel write transaction that claims one number,
// inserts a row of key under it, and waits for release before it commits
// (or, when fail is set, returns an error and rolls back). took is closed
// once the number is taken; the transaction's outcome comes on the
// returned channel.
func claimAndHold(t *testing.T, db *DB, key int64, fail bool, took, release chan struct{}) chan error {
	t.Helper()
	done, ended := make(chan error, 1), make(chan struct{})
	// a test that fails while the transaction waits lets it end before
	// the DB closes
	t.Cleanup(func() {
		select {
		case <-release:
		default:
			close(release)
		}
		<-ended
	})
	go func() {
		defer close(ended)
		ctx := context.Background()
		done <- db.UpdateParallel(ctx, func(tx shelfmark.WriteTx) error {
			seq, err := tx.NextSeq(ctx, 1)
			if err != nil {
				return err
			}
			r := row(key, 0, 0)
			r.Seq = seq
			if err := tx.InsertResources(ctx, []*shelfmark.ResourceRow{r}); err != nil {
				return err
			}
			close(took)
			<-release
			if fail {
				return errors.New("rolled back on purpose")
			}
			return nil
		})
	}()
	return done
}

// overtaken makes a transaction that claims number 1 and holds it open
// (to roll back when fail is set), and a second one that claims 2 and
// commits; it checks that the feed shows neither, and returns the first's
// release and outcome.
func overtaken(t *testing.T, db *DB, fail bool) (chan struct{}, chan error) {
	t.Helper()
	took1, release1 := make(chan struct{}), make(chan struct{})
	first := claimAndHold(t, db, 1, fail, took1, release1)
	<-took1
	took2, release2 := make(chan struct{}), make(chan struct{})
	second := claimAndHold(t, db, 2, false, took2, release2)
	<-took2
	close(release2)
	if err := <-second; err != nil {
		t.Fatal(err)
	}
	if keys := changeKeys(t, db); len(keys) != 0 {
		t.Fatalf("the feed shows %v while number 1 is claimed", keys)
	}
	return release1, first
}

// TestHorizonHoldsBackLaterCommits: a change committed with a higher
// number while a transaction holding a lower one is still open stays out
// of the change feed until that transaction commits; then both show, in
// number order. A harvester that read the feed in between could not have
// moved past the lower number.
func TestHorizonHoldsBackLaterCommits(t *testing.T) {
	db, _ := openTest(t, Options{})
	release1, first := overtaken(t, db, false)
	if h := horizonOf(t, db); h != 0 {
		t.Fatalf("horizon %d with number 1 still claimed", h)
	}
	close(release1)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if keys := changeKeys(t, db); fmt.Sprint(keys) != "[1 2]" {
		t.Fatalf("after both commits the feed shows %v, want [1 2]", keys)
	}
	if h := horizonOf(t, db); h != 2 {
		t.Fatalf("horizon %d, want 2", h)
	}
}

// TestHorizonPassesRolledBackClaim: the numbers of a transaction that
// rolls back are a gap the horizon passes once it has ended, so the
// changes committed after it are not held back for ever.
func TestHorizonPassesRolledBackClaim(t *testing.T) {
	db, _ := openTest(t, Options{})
	release1, first := overtaken(t, db, true)
	close(release1)
	if err := <-first; err == nil {
		t.Fatal("the first transaction committed")
	}
	if keys := changeKeys(t, db); fmt.Sprint(keys) != "[2]" {
		t.Fatalf("after the rollback the feed shows %v, want [2]", keys)
	}
}

// TestHorizonTickerAdvances: a claim whose transaction ended without an
// advance of its own (its process died: here the advance is made to miss
// by ending the transaction on a connection of the test's) is passed by
// the ticker within a few of its periods.
func TestHorizonTickerAdvances(t *testing.T) {
	db, schema := openTest(t, Options{})
	ctx := context.Background()
	update(t, db, func(tx shelfmark.WriteTx) error {
		seq, err := tx.NextSeq(ctx, 1)
		r := row(1, 0, 0)
		r.Seq = seq
		return errors.Join(err, tx.InsertResources(ctx, []*shelfmark.ResourceRow{r}))
	})
	// a second writer outside the DB: it claims, inserts and commits on
	// its own connection, and never advances the horizon
	conn, err := adminPool(t).Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `SET search_path TO `+schema); err != nil {
		t.Fatal(err)
	}
	var seq int64
	if _, err := conn.Exec(ctx, `BEGIN`); err != nil {
		t.Fatal(err)
	}
	if err := conn.QueryRow(ctx, `SELECT shelfmark_claim_seq(1)`).Scan(&seq); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `INSERT INTO resources (key, kind, visibility, version, seq, created, modified, eff_visibility)
VALUES (2, 'work', 'public', 1, $1, 0, 0, 'public')`, seq); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `COMMIT`); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * horizonEvery)
	for len(changeKeys(t, db)) < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("the horizon stayed at %d after the claim of %d ended", horizonOf(t, db), seq)
		}
		time.Sleep(horizonEvery / 10)
	}
}

// TestSharedWritersRunTogether: parallel transactions run beside each
// other, while an Update waits for every one of them, and a parallel one
// waits for an Update.
func TestSharedWritersRunTogether(t *testing.T) {
	db, _ := openTest(t, Options{})
	ctx := context.Background()
	took1, release1 := make(chan struct{}), make(chan struct{})
	first := claimAndHold(t, db, 1, false, took1, release1)
	<-took1
	took2, release2 := make(chan struct{}), make(chan struct{})
	second := claimAndHold(t, db, 2, false, took2, release2)
	select {
	case <-took2:
	case <-time.After(10 * time.Second):
		t.Fatal("a parallel transaction waited for another")
	}
	exclusive := make(chan error, 1)
	go func() {
		exclusive <- db.Update(ctx, func(tx shelfmark.WriteTx) error { _, err := tx.NextSeq(ctx, 1); return err })
	}()
	select {
	case err := <-exclusive:
		t.Fatalf("an Update ran beside parallel transactions (%v)", err)
	case <-time.After(200 * time.Millisecond):
	}
	close(release1)
	close(release2)
	for _, c := range []chan error{first, second, exclusive} {
		if err := <-c; err != nil {
			t.Fatal(err)
		}
	}
}

// TestFollowerWritesRunBesideCreates: a follower's write (the search
// indexer's, the OAI-PMH projector's, the preserver's checkpoint) commits
// while a parallel transaction of creates is open, rather than waiting for
// it, and waits for an Update; the moves of a checkpoint by followers that
// waited, and by one that started as they were let go, all hold.
func TestFollowerWritesRunBesideCreates(t *testing.T) {
	db, _ := openTest(t, Options{})
	ctx := context.Background()
	took, release := make(chan struct{}), make(chan struct{})
	creates := claimAndHold(t, db, 1, false, took, release)
	<-took
	follow := func(by int64) chan error {
		c := make(chan error, 1)
		go func() {
			c <- shelfmark.UpdateFollower(ctx, db, func(tx shelfmark.WriteTx) error {
				_, err := tx.AddCounter(ctx, "test_checkpoint", by)
				return err
			})
		}()
		return c
	}
	select {
	case err := <-follow(1):
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a follower's write waited for a transaction of creates")
	}
	close(release)
	if err := <-creates; err != nil {
		t.Fatal(err)
	}

	held, stop := make(chan struct{}), make(chan struct{})
	var once sync.Once
	letGo := func() { once.Do(func() { close(stop) }) }
	t.Cleanup(letGo) // a failed test lets the Update end before the DB closes
	exclusive := make(chan error, 1)
	go func() {
		exclusive <- db.Update(ctx, func(tx shelfmark.WriteTx) error {
			// the transaction, and its lock, begin with its first statement
			_, err := tx.Counter(ctx, "test_checkpoint")
			close(held)
			<-stop
			return err
		})
	}()
	<-held
	later := follow(2)
	select {
	case err := <-later:
		t.Fatalf("a follower's write ran beside an Update (%v)", err)
	case <-time.After(200 * time.Millisecond):
	}
	letGo()
	for _, c := range []chan error{exclusive, later, follow(4)} {
		if err := <-c; err != nil {
			t.Fatal(err)
		}
	}
	view(t, db, func(tx shelfmark.ReadTx) error {
		v, err := tx.Counter(ctx, "test_checkpoint")
		if err == nil && v != 7 {
			t.Errorf("the checkpoint holds %d after moves of 1, 2 and 4", v)
		}
		return err
	})
}

// lateCommits is the test's DB with its parallel transactions held open a
// random while after their work, between their claim and their commit,
// so that commits overtake each other as on a busy server. It records
// the first number each took, in commit order.
type lateCommits struct {
	*DB
	mu        sync.Mutex
	committed []int64
}

// seqWatch notes the first number a transaction takes.
type seqWatch struct {
	shelfmark.WriteTx
	first int64
}

func (w *seqWatch) NextSeq(ctx context.Context, n int) (int64, error) {
	s, err := w.WriteTx.NextSeq(ctx, n)
	if w.first == 0 {
		w.first = s
	}
	return s, err
}

func (l *lateCommits) UpdateParallel(ctx context.Context, fn func(shelfmark.WriteTx) error) error {
	var w *seqWatch
	err := l.DB.UpdateParallel(ctx, func(tx shelfmark.WriteTx) error {
		w = &seqWatch{WriteTx: tx}
		if err := fn(w); err != nil {
			return err
		}
		time.Sleep(time.Duration(rand.IntN(3000)) * time.Microsecond)
		return nil
	})
	if err == nil && w.first != 0 {
		l.mu.Lock()
		l.committed = append(l.committed, w.first)
		l.mu.Unlock()
	}
	return err
}

// overtaken counts the commits that came after a commit of a higher
// number.
func (l *lateCommits) overtaken() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n, high := 0, int64(0)
	for _, s := range l.committed {
		if s < high {
			n++
		}
		high = max(high, s)
	}
	return n
}

// TestParallelCommitsConsumersMissNothing: works created by many clients
// at once, their group commits running side by side and committing out of
// number order, while the search indexer, the OAI-PMH projector, the
// preserver and a plain reader of the change feed follow them: each of
// them ends with every work, none missed and none twice.
func TestParallelCommitsConsumersMissNothing(t *testing.T) {
	db, _ := openTest(t, Options{})
	store := &lateCommits{DB: db}
	ctx := context.Background()
	repo := shelfmark.NewRepository(store, shelfmark.RepositoryOptions{Committers: 4, MaxBatch: 8})
	defer repo.Close()
	blobs, err := blob.NewLocal(filepath.Join(t.TempDir(), "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	fsys, err := ocfl.NewDirFS(filepath.Join(t.TempDir(), "ocfl"))
	if err != nil {
		t.Fatal(err)
	}
	root, err := ocfl.InitRoot(ctx, fsys)
	if err != nil {
		t.Fatal(err)
	}
	indexer := shelfmark.NewSearchIndexer(store, shelfmark.IndexerOptions{Batch: 16})
	projector := oai.NewProjector(store, blobs, oai.DefaultRegistry(), oai.ProjectorOptions{IDs: repo.IDs()})
	preserver := preserve.New(store, blobs, root, repo.IDs(), preserve.Options{
		Now: func() time.Time { return time.Now().Add(time.Hour) }}) // every change is old enough

	// the plain reader: the feed from its cursor, in pages
	seen := map[int64]int{}
	var cursor int64
	follow := func() error {
		return db.View(ctx, func(tx shelfmark.ReadTx) error {
			rows, err := tx.Changes(ctx, cursor, 1000)
			for _, r := range rows {
				seen[r.Key]++
				cursor = r.Seq
			}
			return err
		})
	}

	const clients, rounds, each = 8, 12, 3
	var writing sync.WaitGroup
	var created sync.Map // key → id
	errs := make(chan error, clients)
	for c := range clients {
		writing.Add(1)
		go func() {
			defer writing.Done()
			for i := range rounds {
				nrs := make([]*shelfmark.NewResource, each)
				for j := range nrs {
					nrs[j] = &shelfmark.NewResource{Kind: shelfmark.KindWork, Visibility: shelfmark.Public,
						Metadata: []shelfmark.Statement{{Predicate: shelfmark.NSDC + "title", Object: shelfmark.NewLiteral(fmt.Sprintf("work %d.%d.%d", c, i, j))}}}
				}
				res, errs2 := repo.CreateResources(ctx, nrs)
				for j, err := range errs2 {
					if err != nil {
						errs <- err
						return
					}
					created.Store(res[j].ID, true)
				}
			}
		}()
	}
	consumers := []func() error{
		func() error { return indexer.CatchUp(ctx) },
		func() error { _, err := projector.CatchUp(ctx); return err },
		func() error { _, _, err := preserver.CatchUp(ctx); return err },
		follow,
	}
	stop := make(chan struct{})
	var following sync.WaitGroup
	consumerErrs := make(chan error, len(consumers))
	for _, step := range consumers {
		following.Add(1)
		go func() {
			defer following.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if err := step(); err != nil {
					consumerErrs <- err
					return
				}
			}
		}()
	}
	writing.Wait()
	close(stop)
	following.Wait()
	close(errs)
	close(consumerErrs)
	for err := range errs {
		t.Fatal(err)
	}
	for err := range consumerErrs {
		t.Fatal(err)
	}
	// once more each, after the last commit
	for _, step := range consumers {
		if err := step(); err != nil {
			t.Fatal(err)
		}
	}
	if n := store.overtaken(); n == 0 {
		t.Fatalf("no commit overtook another in %d commits: the test did not interleave them", len(store.committed))
	} else {
		t.Logf("%d commits, %d of them after a commit of a higher number", len(store.committed), n)
	}

	var ids []shelfmark.ID
	created.Range(func(k, _ any) bool { ids = append(ids, k.(shelfmark.ID)); return true })
	if len(ids) != clients*rounds*each {
		t.Fatalf("%d works created", len(ids))
	}
	inOAI := map[int64]int{}
	view(t, db, func(tx shelfmark.ReadTx) error {
		var after int64
		for {
			recs, err := tx.OAIRecords(ctx, shelfmark.OAIList{Prefix: "oai_dc", After: after, Max: math.MaxInt64, Limit: 500})
			if err != nil || len(recs) == 0 {
				return err
			}
			for _, r := range recs {
				inOAI[r.Key]++
				after = r.Seq
			}
		}
	})
	for _, id := range ids {
		key, err := repo.IDs().Key(id)
		if err != nil {
			t.Fatal(err)
		}
		if seen[key] != 1 {
			t.Errorf("the feed's reader saw %s %d times", id, seen[key])
		}
		if inOAI[key] != 1 {
			t.Errorf("OAI-PMH lists %s %d times", id, inOAI[key])
		}
		view(t, db, func(tx shelfmark.ReadTx) error {
			d, err := tx.SearchDoc(ctx, key)
			if err == nil && d == nil {
				t.Errorf("%s is not indexed", id)
			}
			return err
		})
		if _, err := root.View(ctx, preserve.ObjectID(id)); err != nil {
			t.Errorf("%s is not preserved: %v", id, err)
		}
	}
}
