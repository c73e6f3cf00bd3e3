package shelfmark_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/shelfmark/shelfmark"
)

// bufferPending is what TestBufferServesOrFlushes puts in the buffer
// before each call: a new work in an existing collection, with a title, a
// source key and a depositor.
type bufferPending struct {
	coll, work, user int64
	source           string
}

// bufferAnswers is the explicit list of the WriteTx methods the group
// commit's buffer lets run without writing what it holds back first: the
// writes it holds back itself (nil), and the reads it answers from what it
// holds (a check that the answer includes the held-back rows). Every other
// method must flush before it reads or writes.
var bufferAnswers = map[string]func(ctx context.Context, b shelfmark.WriteTx, p bufferPending) error{
	// held back
	"InsertResources":   nil,
	"PutFields":         nil,
	"InsertMemberships": nil,
	"InsertFiles":       nil,
	"InsertSources":     nil,
	"EnqueueJobs":       nil,
	"SetFileFormats":    nil,
	"DeleteJobs":        nil,
	"SetOwners":         nil,
	// answered from the buffer (and the store)
	"Resource": func(ctx context.Context, b shelfmark.WriteTx, p bufferPending) error {
		r, err := b.Resource(ctx, p.work)
		if err != nil || r == nil || r.Key != p.work {
			return fmt.Errorf("Resource(work) = %+v, %v", r, err)
		}
		return nil
	},
	"ResourceChain": func(ctx context.Context, b shelfmark.WriteTx, p bufferPending) error {
		rs, err := b.ResourceChain(ctx, p.work, shelfmark.MaxChain)
		if err != nil || len(rs) != 1 || rs[0].Key != p.work {
			return fmt.Errorf("ResourceChain(work) = %d rows, %v", len(rs), err)
		}
		return nil
	},
	"Resources": func(ctx context.Context, b shelfmark.WriteTx, p bufferPending) error {
		rs, err := b.Resources(ctx, []int64{p.coll, p.work})
		if err != nil || len(rs) != 2 {
			return fmt.Errorf("Resources(coll, work) = %d rows, %v", len(rs), err)
		}
		return nil
	},
	"Sources": func(ctx context.Context, b shelfmark.WriteTx, p bufferPending) error {
		got, err := b.Sources(ctx, []string{p.source})
		if err != nil || got[p.source] != p.work {
			return fmt.Errorf("Sources = %v, %v", got, err)
		}
		return nil
	},
	"MemberOfMany": func(ctx context.Context, b shelfmark.WriteTx, p bufferPending) error {
		got, err := b.MemberOfMany(ctx, []int64{p.work, p.coll})
		if err != nil || !slices.Equal(got[p.work], []int64{p.coll}) || len(got[p.coll]) != 0 {
			return fmt.Errorf("MemberOfMany(work, coll) = %v, %v; want the work in the collection", got, err)
		}
		return nil
	},
	"Owners": func(ctx context.Context, b shelfmark.WriteTx, p bufferPending) error {
		got, err := b.Owners(ctx, []int64{p.work, p.coll})
		if err != nil || got[p.work] != p.user {
			return fmt.Errorf("Owners(work) = %v, %v; want user %d", got, err, p.user)
		}
		return nil
	},
	"JobHeld": func(ctx context.Context, b shelfmark.WriteTx, p bufferPending) error {
		if err := b.DeleteJobs(ctx, []int64{77}); err != nil {
			return err
		}
		held, err := b.JobHeld(ctx, 77, "w", 1)
		if err != nil || held {
			return fmt.Errorf("JobHeld of a job finished in the batch = %v, %v", held, err)
		}
		return nil
	},
	// the buffer holds no grants: SetGrants writes at once, after a flush
	"GrantsTo": func(ctx context.Context, b shelfmark.WriteTx, p bufferPending) error {
		if err := b.SetGrants(ctx, p.coll, []shelfmark.Grant{{Principal: "user:dee", Role: shelfmark.RoleDepositor}}); err != nil {
			return err
		}
		gs, err := b.GrantsTo(ctx, []string{"user:dee"})
		if err != nil || len(gs) != 1 {
			return fmt.Errorf("GrantsTo after SetGrants in the batch = %v, %v", gs, err)
		}
		return nil
	},
}

var errRollback = errors.New("roll back")

// TestBufferServesOrFlushes calls every method of shelfmark.WriteTx on the
// group commit's buffer over a real store while the buffer holds writes
// back: unless the method is one the buffer answers or holds back itself
// (bufferAnswers), the buffer must have written what it held before the
// method read or wrote anything, or the method could miss rows of earlier
// operations of the same group commit. Arguments are zero values (a
// method that panics on them has run its flush by then); each call runs in
// a transaction of its own that is rolled back.
func TestBufferServesOrFlushes(t *testing.T) {
	backends(t, func(t *testing.T, e *acctEnv) {
		ctx := context.Background()
		coll, err := e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindCollection})
		if err != nil {
			t.Fatal(err)
		}
		ids, err := e.repo.MintIDs(ctx, 1)
		if err != nil {
			t.Fatal(err)
		}
		p := bufferPending{source: "dir:buffer/1", user: 42}
		p.coll, _ = e.repo.IDs().Key(coll.ID)
		p.work, _ = e.repo.IDs().Key(ids[0])
		now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
		hold := func(b *shelfmark.BufferedTx) error {
			row := &shelfmark.ResourceRow{Key: p.work, Kind: shelfmark.KindWork, Visibility: shelfmark.Public,
				Version: 1, Seq: 1 << 30, Created: now, Modified: now}
			if err := b.InsertResources(ctx, []*shelfmark.ResourceRow{row}); err != nil {
				return err
			}
			title := shelfmark.Field{Predicate: "http://purl.org/dc/terms/title", Objects: []shelfmark.Term{shelfmark.NewLiteral("held")}}
			if err := b.PutFields(ctx, []int64{p.work}, []shelfmark.Field{title}); err != nil {
				return err
			}
			if err := b.InsertMemberships(ctx, []shelfmark.Membership{{Collection: p.coll, Member: p.work}}); err != nil {
				return err
			}
			if err := b.InsertSources(ctx, []string{p.source}, []int64{p.work}); err != nil {
				return err
			}
			if err := b.SetOwners(ctx, []int64{p.work}, p.user); err != nil {
				return err
			}
			if !b.Pending() {
				return errors.New("nothing is held back")
			}
			return nil
		}
		ctxType := reflect.TypeFor[context.Context]()
		wt := reflect.TypeFor[shelfmark.WriteTx]()
		if wt.NumMethod() < 90 {
			t.Fatalf("WriteTx has %d methods: the enumeration is broken", wt.NumMethod())
		}
		for i := range wt.NumMethod() {
			m := wt.Method(i)
			answer, listed := bufferAnswers[m.Name]
			err := e.store.Update(ctx, func(tx shelfmark.WriteTx) error {
				b := shelfmark.NewBufferedTx(tx)
				if err := hold(b); err != nil {
					return fmt.Errorf("hold rows back: %w", err)
				}
				if answer != nil {
					if err := answer(ctx, b, p); err != nil {
						return err
					}
				}
				args := make([]reflect.Value, 0, m.Type.NumIn())
				for j := range m.Type.NumIn() {
					in := m.Type.In(j)
					if m.Type.IsVariadic() && j == m.Type.NumIn()-1 {
						break
					}
					if in == ctxType {
						args = append(args, reflect.ValueOf(ctx))
					} else {
						args = append(args, reflect.Zero(in))
					}
				}
				func() {
					defer func() { _ = recover() }() // zero arguments may not make sense to the store
					reflect.ValueOf(b).MethodByName(m.Name).Call(args)
				}()
				if !listed && b.Pending() {
					return fmt.Errorf("%s ran while rows were held back: it neither flushes first nor is answered by the buffer", m.Name)
				}
				return errRollback
			})
			if !errors.Is(err, errRollback) {
				t.Errorf("%s: %v", m.Name, err)
			}
		}
		for name := range bufferAnswers {
			if _, ok := wt.MethodByName(name); !ok {
				t.Errorf("bufferAnswers names %s, which WriteTx does not have", name)
			}
		}
	})
}

// commitGate is a CommitObserver that can hold the committer after a
// commit (the committer calls it before taking its next batch) and records
// the size of every group commit.
type commitGate struct {
	mu      sync.Mutex
	sizes   []int
	armed   bool
	held    chan struct{}
	release chan struct{}
}

func (g *commitGate) ObserveCommit(ops int, d time.Duration, err error) {
	g.mu.Lock()
	g.sizes = append(g.sizes, ops)
	armed := g.armed
	g.armed = false
	g.mu.Unlock()
	if armed {
		close(g.held)
		<-g.release
	}
}

// arm makes the next commit wait in the observer until release is closed.
func (g *commitGate) arm() {
	g.mu.Lock()
	g.armed, g.held, g.release = true, make(chan struct{}), make(chan struct{})
	g.mu.Unlock()
}

// TestDepositorWorkAndFileSetInOneCommit: a depositor of a collection
// creates, in one batch request, a work in the collection and a file set
// under it, and both land in the same group commit. The file set's check
// reads the work's collections (to find the depositor's role) while the
// work's membership is still held back in the group commit's buffer; it
// must see it, or the file set is refused as forbidden.
func TestDepositorWorkAndFileSetInOneCommit(t *testing.T) {
	gate := &commitGate{}
	// one committer, held by the gate, so that the two resources make one
	// batch on either backend
	backendsWith(t, shelfmark.RepositoryOptions{Observer: gate, Committers: 1}, func(t *testing.T, e *acctEnv) {
		ctx := context.Background()
		admin := e.user(t, "root", true, shelfmark.ScopeAdmin)
		dee := e.user(t, "dee", false, shelfmark.ScopeWrite)
		coll, err := e.repo.CreateResource(as(admin), &shelfmark.NewResource{Kind: shelfmark.KindCollection})
		if err != nil {
			t.Fatal(err)
		}
		if err := e.acc.SetRoles(as(admin), coll.ID, []shelfmark.Grant{
			{Principal: "user:root", Role: shelfmark.RoleManager}, {Principal: "user:dee", Role: shelfmark.RoleDepositor}}); err != nil {
			t.Fatal(err)
		}
		ids, err := e.repo.MintIDs(as(dee), 2)
		if err != nil {
			t.Fatal(err)
		}

		// hold the committer after an unrelated commit, queue the
		// depositor's two resources behind it, then let it take them in
		// one batch
		gate.arm()
		other := make(chan error, 1)
		go func() {
			_, err := e.repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindWork})
			other <- err
		}()
		select {
		case <-gate.held:
		case <-time.After(2 * time.Minute):
			t.Fatal("the first commit never reached the observer")
		}
		type result struct {
			out  []*shelfmark.Resource
			errs []error
		}
		done := make(chan result, 1)
		go func() {
			out, errs := e.repo.CreateResources(as(dee), []*shelfmark.NewResource{
				{ID: ids[0], Kind: shelfmark.KindWork, Visibility: shelfmark.Private, MemberOf: []shelfmark.ID{coll.ID}},
				{ID: ids[1], Kind: shelfmark.KindFileSet, Parent: ids[0]},
			})
			done <- result{out, errs}
		}()
		for deadline := time.Now().Add(2 * time.Minute); shelfmark.QueuedOps(e.repo) < 2; time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				close(gate.release)
				t.Fatalf("%d of the 2 operations queued", shelfmark.QueuedOps(e.repo))
			}
		}
		gate.mu.Lock()
		before := len(gate.sizes)
		gate.mu.Unlock()
		close(gate.release)
		if err := <-other; err != nil {
			t.Fatal(err)
		}
		r := <-done
		gate.mu.Lock()
		sizes := slices.Clone(gate.sizes[before:])
		gate.mu.Unlock()
		if len(sizes) == 0 || sizes[0] != 2 {
			t.Fatalf("group commits after the gate: %v; want the work and its file set in one", sizes)
		}
		for i, err := range r.errs {
			if err != nil {
				t.Errorf("resource %d: %v", i+1, err)
			}
		}
		if t.Failed() {
			return
		}
		fs, err := e.repo.FindResource(as(dee), ids[1])
		if err != nil || fs.Parent != ids[0] {
			t.Fatalf("the depositor reads the file set: %+v, %v", fs, err)
		}
		w, err := e.repo.FindResource(as(dee), ids[0])
		if err != nil || !slices.Equal(w.MemberOf, []shelfmark.ID{coll.ID}) {
			t.Fatalf("the depositor reads the work: %+v, %v", w, err)
		}
	})
}
