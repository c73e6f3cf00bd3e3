package http

import (
	"context"
	"io"
	"net/http"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/blob"
)

// fullDisk is a real content store on a disk that can be made full: its
// writes and probes then fail as blob.LocalStore's do on ENOSPC (which
// blob's own tests produce).
type fullDisk struct {
	*blob.LocalStore
	full   atomic.Bool
	probes atomic.Int64
}

func (d *fullDisk) Put(ctx context.Context, r io.Reader, opts shelfmark.PutOptions) (*shelfmark.Blob, error) {
	if d.full.Load() {
		io.Copy(io.Discard, r)
		return nil, shelfmark.StorageFull("the content store", syscall.ENOSPC)
	}
	return d.LocalStore.Put(ctx, r, opts)
}

func (d *fullDisk) ProbeSpace(ctx context.Context) error {
	d.probes.Add(1)
	if d.full.Load() {
		return shelfmark.StorageFull("the content store", syscall.ENOSPC)
	}
	return d.LocalStore.ProbeSpace(ctx)
}

// TestStorageFullReadiness checks that a write that finds no space is
// 507 storage_full, and that /readyz answers 503 from then until a probe
// finds space again or a write succeeds.
func TestStorageFullReadiness(t *testing.T) {
	e := newEnv(t, Options{})
	disk := &fullDisk{LocalStore: e.blobs}
	e.reconfigure(func(o *Options) { o.Blobs = disk })
	up := "/api/v1/resources/" + string(e.fileset(t)) + "/files"
	body := content{seed: 5, size: 100 << 10}

	e.do("GET", "/readyz", nil).want(t, http.StatusOK)
	disk.full.Store(true)
	r := e.do("POST", up, body.reader())
	if a := r.wantError(t, http.StatusInsufficientStorage, shelfmark.ESTORAGEFULL); a != nil && a.Message == "" {
		t.Errorf("no message: %s", r.Body)
	}
	e.do("GET", "/readyz", nil).wantError(t, http.StatusServiceUnavailable, shelfmark.EUNAVAILABLE)
	e.do("GET", "/readyz", nil).wantError(t, http.StatusServiceUnavailable, shelfmark.EUNAVAILABLE)
	// Space is freed: the next probe finds it.
	disk.full.Store(false)
	e.do("GET", "/readyz", nil).want(t, http.StatusOK)
	probes := disk.probes.Load()
	e.do("GET", "/readyz", nil).want(t, http.StatusOK)
	if disk.probes.Load() != probes {
		t.Errorf("a ready server probed the disk")
	}

	// Full again, then a write succeeds: ready without a probe.
	disk.full.Store(true)
	e.do("POST", up, body.reader()).wantError(t, http.StatusInsufficientStorage, shelfmark.ESTORAGEFULL)
	disk.full.Store(false)
	e.do("POST", up, body.reader()).want(t, http.StatusCreated)
	probes = disk.probes.Load()
	e.do("GET", "/readyz", nil).want(t, http.StatusOK)
	if disk.probes.Load() != probes {
		t.Errorf("the server probed the disk after a write succeeded")
	}
}
