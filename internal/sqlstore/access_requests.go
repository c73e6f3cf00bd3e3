package sqlstore

import (
	"context"
	"fmt"
	"math"

	"github.com/shelfmark/shelfmark"
)

// AccessRequestSQL is the statements of the requests for access
// (shelfmark.AccessRequestTx), the same in both dialects (written once, in
// accessRequestShared). Their arguments are those named, in that order.
type AccessRequestSQL struct {
	AccessRequestsByState  string // state, before, limit
	AccessRequestsByUser   string // user, before, limit
	AccessRequestsByUserOn string // user, resource, before, limit
	AccessRequestByKey     string // key
	InsertAccessRequest    string // resource, user, message, created, state: key
	DecideAccessRequest    string // key, state, decided, decided_by, until, reply
}

// accessRequestCols are the columns ScanAccessRequest reads, with the
// user's name (an unknown user's is empty).
const accessRequestCols = `SELECT ar.key, ar.resource, ar.user_key, coalesce(u.name, ''), ar.message, ar.created, ar.state,
    ar.decided, ar.decided_by, ar.until, ar.reply
FROM access_requests ar LEFT JOIN users u ON u.key = ar.user_key`

// accessRequestShared is AccessRequestSQL with PostgreSQL's placeholders
// (see Shared).
var accessRequestShared = AccessRequestSQL{
	// the index access_requests_state, backwards
	AccessRequestsByState: accessRequestCols + `
WHERE ar.state = $1 AND ar.key < $2 ORDER BY ar.key DESC LIMIT $3`,
	// the index access_requests_user: one reader's requests (a few)
	AccessRequestsByUser: accessRequestCols + `
WHERE ar.user_key = $1 AND ar.key < $2 ORDER BY ar.key DESC LIMIT $3`,
	AccessRequestsByUserOn: accessRequestCols + `
WHERE ar.user_key = $1 AND ar.resource = $2 AND ar.key < $3 ORDER BY ar.key DESC LIMIT $4`,
	AccessRequestByKey: accessRequestCols + ` WHERE ar.key = $1`,
	InsertAccessRequest: `INSERT INTO access_requests (resource, user_key, message, created, state) VALUES ($1, $2, $3, $4, $5)
RETURNING key`,
	DecideAccessRequest: `UPDATE access_requests SET state = $2, decided = $3, decided_by = $4, until = $5, reply = $6
WHERE key = $1 AND state = 'open'`,
}

// ScanAccessRequest reads a row of accessRequestCols.
func ScanAccessRequest(r Scanner) (*shelfmark.AccessRequest, error) {
	var (
		q                  shelfmark.AccessRequest
		state              string
		created            int64
		decided, by, until *int64
	)
	if err := r.Scan(&q.Key, &q.Resource, &q.User, &q.UserName, &q.Message, &created, &state, &decided, &by, &until, &q.Reply); err != nil {
		return nil, err
	}
	q.Created, q.State, q.Decided, q.Until = FromMicros(created), shelfmark.AccessRequestState(state), TimePtr(decided), TimePtr(until)
	if by != nil {
		q.DecidedBy = *by
	}
	return &q, nil
}

// AccessRequests implements shelfmark.AccessRequestTx in one statement:
// by state when f.State is set, else by user (and resource).
func (t *Tx) AccessRequests(ctx context.Context, f shelfmark.AccessRequestFilter) ([]*shelfmark.AccessRequest, error) {
	before := f.Before
	if before <= 0 {
		before = math.MaxInt64
	}
	limit := int64(max(f.Limit, 1))
	var query string
	var args []any
	switch {
	case f.State != "":
		query, args = t.d.AccessRequestsByState, []any{string(f.State), before, limit}
	case f.Resource != 0:
		query, args = t.d.AccessRequestsByUserOn, []any{f.User, f.Resource, before, limit}
	default:
		query, args = t.d.AccessRequestsByUser, []any{f.User, before, limit}
	}
	out, err := Collect(ctx, t.q, query, args, ScanAccessRequest)
	if err != nil {
		return nil, fmt.Errorf("%sread requests for access: %w", t.d.Prefix, err)
	}
	return out, nil
}

// AccessRequestByKey implements shelfmark.AccessRequestTx.
func (t *Tx) AccessRequestByKey(ctx context.Context, key int64) (*shelfmark.AccessRequest, error) {
	out, err := Collect(ctx, t.q, t.d.AccessRequestByKey, []any{key}, ScanAccessRequest)
	if err != nil {
		return nil, fmt.Errorf("%sread request for access %d: %w", t.d.Prefix, key, err)
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out[0], nil
}

// InsertAccessRequest implements shelfmark.AccessRequestWriteTx.
func (w *WriteTx) InsertAccessRequest(ctx context.Context, q *shelfmark.AccessRequest) error {
	if err := Row(ctx, w.q, w.d.InsertAccessRequest, []any{q.Resource, q.User, q.Message, q.Created.UnixMicro(), string(q.State)}, &q.Key); err != nil {
		return fmt.Errorf("%sinsert request for access to %d: %w", w.d.Prefix, q.Resource, err)
	}
	return nil
}

// DecideAccessRequest implements shelfmark.AccessRequestWriteTx.
func (w *WriteTx) DecideAccessRequest(ctx context.Context, q *shelfmark.AccessRequest) (bool, error) {
	n, err := w.q.Exec(ctx, w.d.DecideAccessRequest, q.Key, string(q.State), NullMicros(q.Decided), NullZero(q.DecidedBy), NullMicros(q.Until), q.Reply)
	if err != nil {
		return false, fmt.Errorf("%sdecide request for access %d: %w", w.d.Prefix, q.Key, err)
	}
	return n == 1, nil
}
