package fixity

import (
	"context"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"strings"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/ocfl"
	"github.com/shelfmark/shelfmark/preserve"
)

// ObjectID is the OCFL object holding the resource id (a work or a
// collection).
func ObjectID(id shelfmark.ID) string { return preserve.ObjectID(id) }

// maxRecord bounds the object.json a repair reads.
const maxRecord = 64 << 20

// batch gathers what checks found, to be written at once.
type batch struct {
	states []shelfmark.FixityState
	events []shelfmark.PreservationEvent
	audits []*shelfmark.AuditEntry
	sum    Summary
}

// flush writes b's states, events and audit entries.
func (c *Checker) flush(ctx context.Context, b *batch) error {
	if err := c.pe.PutFixity(ctx, b.states); err != nil {
		return err
	}
	if err := c.pe.AddEvents(ctx, b.events); err != nil {
		return err
	}
	if len(b.audits) > 0 {
		if err := c.store.Update(ctx, func(tx shelfmark.WriteTx) error { return tx.InsertAudit(ctx, b.audits) }); err != nil {
			return fmt.Errorf("fixity: audit: %w", err)
		}
	}
	return nil
}

// result is one copy's check: what was read and what became of it.
type result struct {
	key         int64
	copy, item  string
	alg, digest string
	err         error // the check's failure: damaged, missing, unreadable
	repair      error // the repair's failure (when err is set)
	from        string
}

// record adds r's event(s), state and audit entry to b.
func (c *Checker) record(b *batch, r result) {
	now := c.opts.Now()
	ev := shelfmark.PreservationEvent{Resource: r.key, Type: shelfmark.EventFixityCheck, At: now, Agent: shelfmark.Agent(),
		Outcome: shelfmark.OutcomeSuccess, Detail: "the bytes match their " + r.alg, Copy: r.copy, Algorithm: r.alg, Digest: r.digest}
	st := shelfmark.FixityState{Resource: r.key, Copy: r.copy, Item: r.item, Checked: now, Outcome: shelfmark.FixityOK}
	b.sum.Checked++
	if r.err == nil {
		b.sum.OK++
		b.events = append(b.events, ev)
		b.states = append(b.states, st)
		return
	}
	ev.Outcome, ev.Detail = shelfmark.OutcomeFailure, r.err.Error()
	b.events = append(b.events, ev)
	fix := shelfmark.PreservationEvent{Resource: r.key, Type: shelfmark.EventRecovery, At: now, Agent: shelfmark.Agent(),
		Copy: r.copy, Algorithm: r.alg, Digest: r.digest}
	audit := &shelfmark.AuditEntry{At: now, Actor: "system:fixity", Resource: r.key}
	where := map[string]string{shelfmark.CopyStore: "content store", shelfmark.CopyOCFL: "OCFL copy"}[r.copy]
	if r.repair == nil {
		b.sum.Repaired++
		fix.Outcome, fix.Detail = shelfmark.OutcomeSuccess, fmt.Sprintf("%s rewritten from %s", r.item, r.from)
		st.Outcome, st.Detail = shelfmark.FixityRepaired, fmt.Sprintf("%s; rewritten from %s", r.err, r.from)
		audit.Action, audit.Outcome, audit.Detail = "fixity.repair", shelfmark.AuditOK, fmt.Sprintf("the %s's copy of %s was damaged and was rewritten from %s", where, r.item, r.from)
		c.opts.Logger.Warn("fixity: a damaged copy was repaired", "copy", r.copy, "item", r.item, "from", r.from, "err", r.err)
	} else {
		b.sum.Damaged++
		fix.Outcome, fix.Detail = shelfmark.OutcomeFailure, "not repaired: "+r.repair.Error()
		st.Outcome, st.Damaged, st.Detail = shelfmark.FixityDamaged, true, fmt.Sprintf("%s; not repaired: %s", r.err, r.repair)
		audit.Action, audit.Outcome, audit.Detail = "fixity.damaged", shelfmark.AuditFailed, fmt.Sprintf("the %s's copy of %s is damaged and could not be repaired: %s", where, r.item, r.repair)
		c.opts.Logger.Error("fixity: a damaged copy could not be repaired", "copy", r.copy, "item", r.item, "err", r.err, "repair", r.repair)
	}
	if len(st.Detail) > 1000 {
		st.Detail = st.Detail[:1000]
	}
	b.events = append(b.events, fix)
	b.states = append(b.states, st)
	b.audits = append(b.audits, audit)
}

// checkBlob checks f's bytes in the content store and repairs them from
// the OCFL copy when they are damaged. It returns an error only when the
// check could not be made (the context ended, the database failed).
func (c *Checker) checkBlob(ctx context.Context, f shelfmark.StoredFile, b *batch) error {
	r := result{key: f.Key, copy: shelfmark.CopyStore, item: f.SHA256, alg: "sha256", digest: f.SHA256}
	got, n, err := c.hashBlob(ctx, f.SHA256)
	b.sum.Bytes += n
	switch {
	case ctx.Err() != nil:
		return ctx.Err()
	case err != nil:
		r.err = fmt.Errorf("the content store's copy cannot be read: %w", err)
	case got != f.SHA256:
		r.err = fmt.Errorf("the content store's copy has sha256 %s (%d bytes)", got, n)
	}
	if r.err != nil {
		r.from = "the OCFL copy"
		r.repair = c.repairBlob(ctx, f)
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	c.record(b, r)
	return nil
}

// hashBlob reads the blob sha and returns its SHA-256 and its size.
func (c *Checker) hashBlob(ctx context.Context, sha string) (string, int64, error) {
	rc, err := c.blobs.Open(ctx, sha)
	if err != nil {
		return "", 0, err
	}
	defer rc.Close()
	return c.hash(ctx, rc, sha256.New())
}

// hash reads r to its end through the pacer into h.
func (c *Checker) hash(ctx context.Context, r io.Reader, h hash.Hash) (string, int64, error) {
	pr := &pacedReader{ctx: ctx, r: r, p: &c.pace}
	_, err := io.CopyBuffer(h, pr, c.buf)
	c.bytes.Add(pr.n)
	if err != nil {
		return "", pr.n, err
	}
	return hex.EncodeToString(h.Sum(nil)), pr.n, nil
}

// repairBlob rewrites f's blob from the newest version of its work's
// object, which ReplaceBlob checks against the SHA-256 (and the OCFL
// reader against the inventory's SHA-512) before anything is replaced.
func (c *Checker) repairBlob(ctx context.Context, f shelfmark.StoredFile) error {
	rep, ok := c.blobs.(shelfmark.BlobRepairer)
	if !ok {
		return errors.New("the content store cannot rewrite a blob")
	}
	if c.root == nil {
		return errors.New("there is no preservation copy")
	}
	var work int64
	if err := c.store.View(ctx, func(tx shelfmark.ReadTx) (err error) {
		work, err = parentOf(ctx, tx, f.FileSet)
		return err
	}); err != nil {
		return err
	}
	if work == 0 {
		return errors.New("the file belongs to no work")
	}
	obj, err := c.root.View(ctx, ObjectID(c.ids.Encode(work)))
	if err != nil {
		return fmt.Errorf("the work's object: %w", err)
	}
	rec, err := readRecord(ctx, obj)
	if err != nil {
		return err
	}
	id := string(c.ids.Encode(f.Key))
	for _, res := range rec.Resources {
		if res.ID != id || res.File == nil || res.File.Path == "" || res.File.SHA256 != f.SHA256 {
			continue
		}
		rc, err := obj.Open(ctx, obj.Head(), res.File.Path)
		if err != nil {
			return err
		}
		defer rc.Close()
		pr := &pacedReader{ctx: ctx, r: rc, p: &c.pace}
		err = rep.ReplaceBlob(ctx, f.SHA256, pr)
		c.bytes.Add(pr.n)
		if err != nil {
			return fmt.Errorf("the OCFL copy: %w", err)
		}
		return nil
	}
	return fmt.Errorf("the newest version of %s does not hold the file", obj.ID())
}

// readRecord reads the object's record (object.json) at its head.
func readRecord(ctx context.Context, obj *ocfl.Object) (*preserve.Record, error) {
	rc, err := obj.Open(ctx, obj.Head(), preserve.RecordPath)
	if err != nil {
		return nil, fmt.Errorf("the record of %s: %w", obj.ID(), err)
	}
	defer rc.Close()
	data, err := io.ReadAll(io.LimitReader(rc, maxRecord+1))
	if err != nil {
		return nil, fmt.Errorf("the record of %s: %w", obj.ID(), err)
	}
	if len(data) > maxRecord {
		return nil, fmt.Errorf("the record of %s is larger than %d bytes", obj.ID(), maxRecord)
	}
	var rec preserve.Record
	if err := json.Unmarshal(data, &rec); err != nil {
		return nil, fmt.Errorf("the record of %s: %w", obj.ID(), err)
	}
	return &rec, nil
}

// checkObject checks every content file of the object id and rewrites a
// damaged one from the content store when the object's record names the
// original it holds. It returns an error only when the check could not be
// made.
func (c *Checker) checkObject(ctx context.Context, id string, b *batch) error {
	var objKey int64
	if s, ok := strings.CutPrefix(id, "urn:shelfmark:"); ok {
		objKey, _ = c.ids.Key(shelfmark.ID(s)) // 0 for the repository object
	}
	obj, err := c.root.View(ctx, id)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		c.record(b, result{key: objKey, copy: shelfmark.CopyOCFL, item: ocfl.ObjectPath(id) + "/inventory.json", alg: "sha512",
			err: fmt.Errorf("the object cannot be opened: %w", err), repair: errors.New("an inventory has no other copy")})
		return nil
	}
	// the originals the record names, by their SHA-512
	type original struct {
		key    int64
		sha256 string
	}
	bySHA512 := map[string]original{}
	rec, recErr := readRecord(ctx, obj)
	if rec != nil {
		for _, res := range rec.Resources {
			if res.File == nil || res.File.Path == "" || res.File.SHA512 == "" || res.File.SHA256 == "" {
				continue
			}
			k, err := c.ids.Key(shelfmark.ID(res.ID))
			if err == nil {
				bySHA512[strings.ToLower(res.File.SHA512)] = original{key: k, sha256: res.File.SHA256}
			}
		}
	}
	for _, cf := range obj.ContentFiles() {
		o, named := bySHA512[cf.Digest]
		r := result{key: objKey, copy: shelfmark.CopyOCFL, item: cf.Path, alg: cf.Algorithm, digest: cf.Digest}
		if named {
			// an original: checked against the SHA-256 its record gives
			// (the record was itself read against the inventory), which
			// hashes faster than SHA-512 where the processor helps
			r.key, r.alg, r.digest = o.key, "sha256", o.sha256
		}
		got, n, err := c.hashContent(ctx, cf, r.alg)
		b.sum.Bytes += n
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case err != nil:
			r.err = fmt.Errorf("the OCFL copy cannot be read: %w", err)
		case got != r.digest:
			r.err = fmt.Errorf("the OCFL copy has %s %s (%d bytes)", r.alg, got, n)
		}
		if r.err != nil {
			r.from = "the content store"
			switch {
			case named:
				r.repair = c.repairContent(ctx, id, cf, o.sha256)
			case recErr != nil:
				r.repair = fmt.Errorf("no other copy is known (%v)", recErr)
			default:
				r.repair = errors.New("no other copy is kept (not an original the record names)")
			}
			if ctx.Err() != nil {
				return ctx.Err()
			}
		}
		c.record(b, r)
	}
	return nil
}

// hashContent reads one content file and returns its digest in alg
// (sha256 or sha512).
func (c *Checker) hashContent(ctx context.Context, cf ocfl.ContentFile, alg string) (string, int64, error) {
	rc, err := c.root.FS().Open(ctx, cf.Path)
	if err != nil {
		return "", 0, err
	}
	defer rc.Close()
	var h hash.Hash = sha512.New()
	if alg == "sha256" {
		h = sha256.New()
	}
	return c.hash(ctx, rc, h)
}

// repairContent rewrites the content file cf of object id from the blob
// sha, which ReplaceContent checks against the inventory's digest before
// anything is replaced.
func (c *Checker) repairContent(ctx context.Context, id string, cf ocfl.ContentFile, sha string) error {
	rc, err := c.blobs.Open(ctx, sha)
	if err != nil {
		return fmt.Errorf("the content store's copy: %w", err)
	}
	defer rc.Close()
	pr := &pacedReader{ctx: ctx, r: rc, p: &c.pace}
	err = c.root.ReplaceContent(ctx, id, cf.ContentPath, pr)
	c.bytes.Add(pr.n)
	if err != nil {
		return fmt.Errorf("the content store's copy: %w", err)
	}
	return nil
}
