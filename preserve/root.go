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

// RepositoryRecord is what repository.json holds: the root number, and
// the secret of the repository's id codec (the setting
// shelfmark.IDSecretSetting), without which a rebuild could not give its
// resources back their keys. The secret makes ids unguessable, so the
// copy needs the protection the database has (docs/preservation.md).
type RepositoryRecord struct {
	Shelfmark int    `json:"shelfmark"`
	Root      int64  `json:"root"`
	IDSecret  string `json:"idSecret,omitempty"`
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
	var (
		inDB   int64
		secret string
	)
	if err := p.store.View(ctx, func(tx shelfmark.ReadTx) error {
		var err error
		if inDB, err = tx.Counter(ctx, CounterRoot); err != nil {
			return err
		}
		secret, _, err = tx.Setting(ctx, shelfmark.IDSecretSetting)
		return err
	}); err != nil {
		return err
	}
	rec, head, err := ReadRepository(ctx, p.root)
	if err != nil {
		return err
	}
	inRoot := rec.Root
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
		if err := p.writeRepository(ctx, 0, RepositoryRecord{Root: n, IDSecret: secret}); err != nil {
			return err
		}
		if err := p.setRootCounter(ctx, n); err != nil {
			return err
		}
		rec.IDSecret = secret
	default:
		return fmt.Errorf("%w: it holds root %d, the database was preserved to root %d: give every server the same --preservation", ErrOtherRoot, inRoot, inDB)
	}
	switch {
	case rec.IDSecret == secret:
	case rec.IDSecret == "" && head > 0:
		// a root written before the record carried the secret
		rec.IDSecret = secret
		if err := p.writeRepository(ctx, head, rec); err != nil {
			return err
		}
	default:
		return fmt.Errorf("%w: its id secret is not the database's", ErrOtherRoot)
	}
	p.mu.Lock()
	p.rootChecked = true
	p.mu.Unlock()
	return nil
}

// ReadRepository reads the repository object of root: its record and its
// head version (a zero record and 0 when there is none yet).
func ReadRepository(ctx context.Context, root *ocfl.Root) (RepositoryRecord, int, error) {
	var rec RepositoryRecord
	obj, err := root.Open(ctx, RepositoryObject)
	if errors.Is(err, ocfl.ErrNotFound) {
		return rec, 0, nil
	}
	if err != nil {
		return rec, 0, err
	}
	rc, err := obj.Open(ctx, obj.Head(), RepositoryPath)
	if err != nil {
		return rec, 0, err
	}
	defer rc.Close()
	if err := json.NewDecoder(io.LimitReader(rc, 1<<16)).Decode(&rec); err != nil || rec.Root == 0 {
		return rec, 0, fmt.Errorf("%s: %s holds no root number: %v", RepositoryObject, RepositoryPath, err)
	}
	if rec.Shelfmark > FormatVersion {
		return rec, 0, fmt.Errorf("%s: format %d is newer than this Shelfmark's (%d)", RepositoryObject, rec.Shelfmark, FormatVersion)
	}
	return rec, obj.Head(), nil
}

// writeRepository writes version head+1 of the repository object with
// rec.
func (p *Preserver) writeRepository(ctx context.Context, head int, rec RepositoryRecord) error {
	rec.Shelfmark = FormatVersion
	js, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return err
	}
	js = append(js, '\n')
	sum := sha512.Sum512(js)
	digest := hex.EncodeToString(sum[:])
	_, err = p.root.Commit(ctx, RepositoryObject, head, ocfl.NewVersion{
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
