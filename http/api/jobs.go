package api

import (
	"net/http"
	"strconv"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/http/kit"
)

// QueueJSON is one queue in GET /api/v1/jobs: its pause and its jobs by
// state (Ready: the queued ones due now).
type QueueJSON struct {
	Queue   string `json:"queue"`
	Paused  bool   `json:"paused"`
	Queued  int64  `json:"queued"`
	Ready   int64  `json:"ready"`
	Running int64  `json:"running"`
	Failed  int64  `json:"failed"`
}

// JobJSON is one job in GET /api/v1/jobs/{queue}.
type JobJSON struct {
	ID       int64     `json:"id"`
	Queue    string    `json:"queue"`
	Resource string    `json:"resource"`
	State    string    `json:"state"`
	Attempt  int       `json:"attempt"`
	RunAt    time.Time `json:"run_at"`
	Worker   string    `json:"worker,omitempty"`
	Error    string    `json:"error,omitempty"`
	Created  time.Time `json:"created"`
}

// getJobs handles GET /api/v1/jobs: the counts of every queue.
func (s *Handler) getJobs(w http.ResponseWriter, r *http.Request) error {
	jq, err := s.deps.JobQueue()
	if err != nil {
		return err
	}
	counts, err := jq.QueueCounts(r.Context())
	if err != nil {
		return err
	}
	out := struct {
		Queues []QueueJSON `json:"queues"`
	}{Queues: make([]QueueJSON, len(counts))}
	for i, c := range counts {
		out.Queues[i] = QueueJSON{Queue: c.Queue, Paused: c.Paused, Queued: c.Queued, Ready: c.Ready, Running: c.Running, Failed: c.Failed}
	}
	return kit.WriteJSON(w, http.StatusOK, out)
}

// listJobs handles GET /api/v1/jobs/{queue}?state=failed&after=&limit=.
func (s *Handler) listJobs(w http.ResponseWriter, r *http.Request) error {
	jq, q, err := s.deps.NamedQueue(r)
	if err != nil {
		return err
	}
	f := shelfmark.JobFilter{Queue: q, State: shelfmark.JobState(r.URL.Query().Get("state")), Limit: 100}
	switch f.State {
	case "", shelfmark.JobQueued, shelfmark.JobRunning, shelfmark.JobFailed:
	default:
		return shelfmark.Errorf(shelfmark.EINVALID, "state must be queued, running or failed, not %q.", f.State)
	}
	if v := r.URL.Query().Get("after"); v != "" {
		if f.After, err = strconv.ParseInt(v, 10, 64); err != nil || f.After < 0 {
			return shelfmark.Errorf(shelfmark.EINVALID, "after must be a job id, not %q.", v)
		}
	}
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 1000 {
			return shelfmark.Errorf(shelfmark.EINVALID, "limit must be between 1 and 1000, not %q.", v)
		}
		f.Limit = n
	}
	jobs, err := jq.ListJobs(r.Context(), f)
	if err != nil {
		return err
	}
	out := struct {
		Jobs []JobJSON `json:"jobs"`
		Next string    `json:"next,omitempty"`
	}{Jobs: make([]JobJSON, len(jobs))}
	for i, j := range jobs {
		out.Jobs[i] = JobJSON{ID: j.ID, Queue: j.Queue, Resource: string(s.deps.Resources.IDs().Encode(j.Resource)), State: string(j.State),
			Attempt: j.Attempt, RunAt: j.RunAt, Worker: j.Worker, Error: j.Error, Created: j.Created}
	}
	if len(jobs) == f.Limit {
		out.Next = strconv.FormatInt(jobs[len(jobs)-1].ID, 10)
	}
	return kit.WriteJSON(w, http.StatusOK, out)
}

// queueAction handles POST /api/v1/jobs/{queue}/{action}: pause, resume,
// or retry (the failed jobs; a body {"ids": [...]} retries only those).
func (s *Handler) queueAction(w http.ResponseWriter, r *http.Request) error {
	jq, q, err := s.deps.NamedQueue(r)
	if err != nil {
		return err
	}
	out := map[string]any{"queue": q}
	var b struct {
		IDs []int64 `json:"ids"`
	}
	if r.ContentLength != 0 {
		if err := kit.ReadJSON(w, r, s.opts.MaxBodyBytes, &b); err != nil {
			return err
		}
	}
	for _, id := range b.IDs {
		if id <= 0 {
			return shelfmark.Errorf(shelfmark.EINVALID, "ids: %d is not a job id.", id)
		}
	}
	switch a := r.PathValue("action"); a {
	case "pause", "resume":
		if b.IDs != nil {
			return shelfmark.Errorf(shelfmark.EINVALID, "ids: %s applies to the whole queue; only retry takes ids.", a)
		}
		if err := jq.PauseQueue(r.Context(), q, a == "pause"); err != nil {
			return err
		}
		out["paused"] = a == "pause"
	case "retry":
		n, err := jq.RetryFailedJobs(r.Context(), q, b.IDs)
		if err != nil {
			return err
		}
		out["retried"] = n
	default:
		return shelfmark.Errorf(shelfmark.ENOTFOUND, "The action must be pause, resume or retry, not %q.", a)
	}
	return kit.WriteJSON(w, http.StatusOK, out)
}
