package shelfmark

import (
	"context"
	"time"
)

// auditEntry describes a write by the caller on ctx; the committer stamps
// its time and appends it in the write's own transaction.
func auditEntry(ctx context.Context, action string, key int64, predicates []string) *AuditEntry {
	c := CallerFrom(ctx)
	return &AuditEntry{Actor: c.Actor(), User: c.User, Token: c.Token, Action: action, Resource: key,
		Predicates: predicates, Outcome: AuditOK, Request: c.Request}
}

// depositedBy records the signed-in user who created a work or collection
// as its depositor (depositors may edit what they deposited), and makes
// the creator of a collection its manager.
func depositedBy(ctx context.Context, tx WriteTx, o *op, row *ResourceRow) error {
	c := CallerFrom(o.ctx)
	if c.User == 0 || (row.Kind != KindWork && row.Kind != KindCollection) {
		return nil
	}
	if err := tx.SetOwners(ctx, []int64{row.Key}, c.User); err != nil {
		return err
	}
	if row.Kind == KindCollection && !c.Admin {
		return tx.SetGrants(ctx, row.Key, []Grant{{Resource: row.Key, Principal: UserPrincipal(c.Name), Role: RoleManager}})
	}
	return nil
}

// auditDenied records a write the policy refused, in a transaction of its
// own (the write itself did not happen). A failure to record is logged,
// not returned: the caller's answer is the refusal.
func (r *Repository) auditDenied(ctx context.Context, action string, key int64, err error) {
	switch ErrorCode(err) {
	case EFORBIDDEN, EUNAUTHORIZED:
	default:
		return
	}
	e := auditEntry(ctx, action, key, nil)
	e.Outcome, e.Detail, e.At = AuditDenied, ErrorMessage(err), r.now()
	werr := r.store.Update(context.WithoutCancel(ctx), func(tx WriteTx) error {
		return tx.InsertAudit(ctx, []*AuditEntry{e})
	})
	if werr != nil {
		r.log.Warn("audit: could not record a denied write", "action", action, "err", werr)
	}
}

// stampAudit gives the entries of a batch their time.
func stampAudit(entries []*AuditEntry, now time.Time) {
	for _, e := range entries {
		e.At = now
	}
}
