package shelfmark

import (
	"context"
	"errors"
	"fmt"
	"regexp"
)

// Audit implements AccountService: administrators see the whole trail; the
// manager of a collection may read the entries about it (q.Resource set to
// it). q.Limit is 1..1000 (default 100).
func (a *Accounts) Audit(ctx context.Context, q AuditQuery) ([]*AuditEntry, error) {
	c := CallerFrom(ctx)
	if q.Limit <= 0 || q.Limit > 1000 {
		q.Limit = min(max(q.Limit, 100), 1000)
	}
	var out []*AuditEntry
	err := a.view(ctx, func(tx ReadTx, at AccountReadTx) error {
		if !c.IsAdmin() {
			if q.Resource == 0 {
				return refusal(c, false, "read the audit trail of the whole repository (ask for one collection's)")
			}
			if _, err := a.collectionKey(ctx, tx, c, q.Resource, false, "read the audit trail"); err != nil {
				return err
			}
		}
		var err error
		if out, err = at.Audit(ctx, q); err != nil || c.IsAdmin() {
			return err
		}
		return a.redactAudit(ctx, tx, c, out)
	})
	if err != nil {
		var e *Error
		if errors.As(err, &e) {
			return nil, err
		}
		return nil, fmt.Errorf("audit trail: %w", err)
	}
	return out, nil
}

// auditIDRE finds what may be resource ids in an audit entry's detail.
var auditIDRE = regexp.MustCompile(`\b[0-9bcdfghjkmnpqrstvwxz]{9}\b`)

// AuditHidden stands in an audit entry's detail, shown to someone other
// than an administrator, for the id of a resource they may not read.
const AuditHidden = "(a resource you may not read)"

// redactAudit replaces, in the details of entries, every id of a resource
// the caller may not read with AuditHidden: a collection's manager reads
// its trail, where a refused write may name someone else's private work.
// Each distinct id is looked up once.
func (a *Accounts) redactAudit(ctx context.Context, tx ReadTx, c *Caller, entries []*AuditEntry) error {
	g := a.repo.guard(tx, c)
	seen := map[string]bool{}
	for _, e := range entries {
		for _, m := range auditIDRE.FindAllString(e.Detail, -1) {
			if _, done := seen[m]; done {
				continue
			}
			key, err := a.repo.ids.Key(ID(m))
			if err != nil {
				seen[m] = true // not an id: a word that looks like one
				continue
			}
			ok, err := g.readableKey(ctx, key)
			if err != nil {
				return fmt.Errorf("audit trail: %w", err)
			}
			seen[m] = ok
		}
		e.Detail = auditIDRE.ReplaceAllStringFunc(e.Detail, func(m string) string {
			if seen[m] {
				return m
			}
			return AuditHidden
		})
	}
	return nil
}
