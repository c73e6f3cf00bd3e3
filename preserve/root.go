package preserve

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha512"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/ocfl"
)

// The storage root names the repository it preserves, so that servers
// sharing a database never write to different roots (each with part of
// the versions) without knowing: the root holds the object
// RepositoryObject, whose repository.json carries a random root number,
// and the database keeps the same number in the counter CounterRoot.
const (
	RepositoryObject = "urn:shelfmark:repository"
	RepositoryPath   = "repository.json"
	CounterRoot      = "preserve_root"
)

// repositoryRecord is what repository.json holds.
type repositoryRecord struct {
	Shelfmark int   `json:"shelfmark"`
	Root      int64 `json:"root"`
}

// ErrOtherRoot is the error of a preserver whose storage root is not the
// one the database was preserved to.
var ErrOtherRoot = errors.New("the storage root is not this repository's preservation copy")

// checkRoot makes sure the storage root is the database's: the first
// preserver of a repository names the root in both; a later one finds the
// same number in both (a database rebuilt from the root, whose counter is
// not set yet, adopts it). It runs once per process while it succeeds.
func (p *Preserver) checkRoot(ctx context.Context) error {
	p.mu.Lock()
	ok := p.rootChecked
	p.mu.Unlock()
	if ok {
		return nil
	}
	var inDB int64
	if err := p.store.View(ctx, func(tx shelfmark.ReadTx) error {
		var err error
		inDB, err = tx.Counter(ctx, CounterRoot)
		return err
	}); err != nil {
		return err
	}
	inRoot, err := p.rootNumber(ctx)
	if err != nil {
		return err
	}
	switch {
	case inRoot != 0 && inDB == inRoot:
	case inRoot != 0 && inDB == 0:
		if err := p.setRootCounter(ctx, inRoot); err != nil {
			return err
		}
	case inRoot == 0 && inDB == 0:
		n, err := randomRoot()
		if err != nil {
			return err
		}
		if err := p.writeRootNumber(ctx, n); err != nil {
			return err
		}
		if err := p.setRootCounter(ctx, n); err != nil {
			return err
		}
	default:
		return fmt.Errorf("%w: it holds root %d, the database was preserved to root %d: give every server the same --preservation", ErrOtherRoot, inRoot, inDB)
	}
	p.mu.Lock()
	p.rootChecked = true
	p.mu.Unlock()
	return nil
}

// rootNumber reads the root's number, 0 when it has none yet.
func (p *Preserver) rootNumber(ctx context.Context) (int64, error) {
	obj, err := p.root.Open(ctx, RepositoryObject)
	if errors.Is(err, ocfl.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	rc, err := obj.Open(ctx, obj.Head(), RepositoryPath)
	if err != nil {
		return 0, err
	}
	defer rc.Close()
	var rec repositoryRecord
	if err := json.NewDecoder(io.LimitReader(rc, 1<<16)).Decode(&rec); err != nil || rec.Root == 0 {
		return 0, fmt.Errorf("%s: %s holds no root number: %v", RepositoryObject, RepositoryPath, err)
	}
	return rec.Root, nil
}

// writeRootNumber writes the repository object with root number n.
func (p *Preserver) writeRootNumber(ctx context.Context, n int64) error {
	js, err := json.MarshalIndent(repositoryRecord{Shelfmark: FormatVersion, Root: n}, "", "  ")
	if err != nil {
		return err
	}
	js = append(js, '\n')
	sum := sha512.Sum512(js)
	digest := hex.EncodeToString(sum[:])
	_, err = p.root.Commit(ctx, RepositoryObject, 0, ocfl.NewVersion{
		State:   map[string]string{RepositoryPath: digest},
		Content: func(context.Context, string) (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(js)), nil },
		Created: p.opts.Now(),
		Message: "the repository this storage root preserves",
		User:    p.opts.Agent,
	})
	return err
}

// setRootCounter records root number n in the database, which has none.
func (p *Preserver) setRootCounter(ctx context.Context, n int64) error {
	return p.store.Update(ctx, func(tx shelfmark.WriteTx) error {
		v, err := tx.AddCounter(ctx, CounterRoot, n)
		if err == nil && v != n {
			return fmt.Errorf("%w: the database was preserved to root %d meanwhile", ErrOtherRoot, v-n)
		}
		return err
	})
}

// randomRoot is a random positive root number.
func randomRoot() (int64, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return 0, err
	}
	return int64(binary.BigEndian.Uint64(b[:])>>1) | 1, nil
}
