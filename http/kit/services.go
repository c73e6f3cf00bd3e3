package kit

import (
	"net/http"

	"github.com/shelfmark/shelfmark"
)

// AccountService is the account service, EUNAVAILABLE on a server without
// accounts.
func (d *Deps) AccountService() (shelfmark.AccountService, error) {
	if d.Accounts == nil {
		return nil, shelfmark.Errorf(shelfmark.EUNAVAILABLE, "This server has no accounts.")
	}
	return d.Accounts, nil
}

// JobQueue is the job queue, EUNAVAILABLE on a server without one.
func (d *Deps) JobQueue() (shelfmark.JobQueue, error) {
	if d.Jobs == nil {
		return nil, shelfmark.Errorf(shelfmark.EUNAVAILABLE, "This server has no job queue.")
	}
	return d.Jobs, nil
}

// NamedQueue returns the job queue and the queue the request's {queue}
// path value names; an unknown queue is ENOTFOUND.
func (d *Deps) NamedQueue(r *http.Request) (shelfmark.JobQueue, string, error) {
	jq, err := d.JobQueue()
	if err != nil {
		return nil, "", err
	}
	q := r.PathValue("queue")
	if !shelfmark.ValidQueue(q) {
		return nil, "", shelfmark.Errorf(shelfmark.ENOTFOUND, "There is no queue %q; the queues are %v.", q, shelfmark.Queues)
	}
	return jq, q, nil
}
