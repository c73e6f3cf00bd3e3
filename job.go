package shelfmark

import (
	"context"
	"sort"
	"time"
)

// Background work (rules R5, R6) runs from a durable job queue kept in the
// database: a job is a row, enqueued in the same transaction that stored
// what it works on, claimed by one worker at a time under a lease, and
// removed in the same transaction that stores its result. A crash never
// loses a job, and never runs one for a file that was not stored.

// Queues of the background pipeline, in priority order: ingest-related
// work (characterize, derive, text) runs before OCR.
const (
	// QueueCharacterize identifies every stored original file.
	QueueCharacterize = "characterize"
	// QueueDerive makes thumbnails and access copies of images and PDFs.
	QueueDerive = "derive"
	// QueueText extracts the text of PDFs, XML and plain text files.
	QueueText = "text"
	// QueueOCR runs OCR on page images.
	QueueOCR = "ocr"
)

// Queues lists the pipeline's queues in priority order (highest first).
var Queues = []string{QueueCharacterize, QueueDerive, QueueText, QueueOCR}

// ValidQueue reports whether name is one of Queues.
func ValidQueue(name string) bool {
	for _, q := range Queues {
		if q == name {
			return true
		}
	}
	return false
}

// JobState is where a job stands. A finished job is removed; only its
// effects (and the metrics) remain.
type JobState string

// Job states.
const (
	JobQueued  JobState = "queued"
	JobRunning JobState = "running"
	JobFailed  JobState = "failed"
)

// Job is one unit of background work on one resource (a file).
type Job struct {
	ID       int64
	Queue    string
	Resource int64
	State    JobState
	// Attempt counts the times the job was claimed, this one included.
	Attempt int
	// RunAt is when a queued job may run next (later after a failure).
	RunAt time.Time
	// Lease is when a running job is given up as lost if it has not
	// finished: its worker died, and another may claim it.
	Lease time.Time
	// Worker names the worker that holds a running job (or held it last).
	Worker  string
	Error   string
	Created time.Time
}

// NewJob asks for work on a resource.
type NewJob struct {
	Queue    string
	Resource int64
}

// QueueCount is the state of one queue.
type QueueCount struct {
	Queue   string
	Paused  bool
	Queued  int64
	Running int64
	Failed  int64
	// Ready counts queued jobs whose RunAt has come.
	Ready int64
}

// QueueCounter folds rows of (queue, state, count, ready count) and paused
// flags, as the backends read them, into QueueCounts.
type QueueCounter map[string]*QueueCount

func (m QueueCounter) get(q string) *QueueCount {
	c := m[q]
	if c == nil {
		c = &QueueCount{Queue: q}
		m[q] = c
	}
	return c
}

// Add counts n jobs of queue in state, ready of them ready to run.
func (m QueueCounter) Add(queue string, state JobState, n, ready int64) {
	c := m.get(queue)
	switch state {
	case JobQueued:
		c.Queued, c.Ready = n, ready
	case JobRunning:
		c.Running = n
	case JobFailed:
		c.Failed = n
	}
}

// Paused records a queue's paused flag.
func (m QueueCounter) Paused(queue string, paused bool) { m.get(queue).Paused = paused }

// Counts returns the counts by queue name.
func (m QueueCounter) Counts() []QueueCount {
	out := make([]QueueCount, 0, len(m))
	for _, c := range m {
		out = append(out, *c)
	}
	sort.Slice(out, func(i, k int) bool { return out[i].Queue < out[k].Queue })
	return out
}

// JobFilter selects jobs to list: of one queue and state (empty for any),
// with ID greater than After, up to Limit, by ID.
type JobFilter struct {
	Queue string
	State JobState
	After int64
	Limit int
}

// Claim asks for up to N ready jobs of Queue for Worker, leased until
// Lease.
type Claim struct {
	Queue  string
	Worker string
	N      int
	Now    time.Time
	Lease  time.Time
}

// JobReadTx reads the job queue.
type JobReadTx interface {
	// QueueCounts returns the counts of every queue that has jobs or a
	// paused flag, by queue name.
	QueueCounts(ctx context.Context, now time.Time) ([]QueueCount, error)
	// Jobs lists jobs.
	Jobs(ctx context.Context, f JobFilter) ([]*Job, error)
	// JobHeld reports whether job id is running under worker at attempt
	// (its lease was not lost to another worker).
	JobHeld(ctx context.Context, id int64, worker string, attempt int) (bool, error)
}

// JobWriteTx writes the job queue. Every method costs the same however many
// jobs the queue holds.
type JobWriteTx interface {
	// EnqueueJobs adds queued jobs, ready at now. A job for a (queue,
	// resource) that already has one is not added again. The number of
	// statements does not depend on the number of jobs.
	EnqueueJobs(ctx context.Context, jobs []NewJob, now time.Time) error
	// ClaimJobs marks up to c.N ready queued jobs of an unpaused queue
	// running under c.Worker, leased until c.Lease, with their attempt
	// counted, and returns them oldest first. Two workers never get the
	// same job.
	ClaimJobs(ctx context.Context, c Claim) ([]*Job, error)
	// DeleteJobs removes jobs (finished ones).
	DeleteJobs(ctx context.Context, ids []int64) error
	// RequeueJob puts a running job back in the queue, ready at runAt,
	// recording the error of the attempt that failed.
	RequeueJob(ctx context.Context, id int64, runAt time.Time, msg string) error
	// FailJob marks a job failed with its error.
	FailJob(ctx context.Context, id int64, msg string) error
	// RenewJobs moves the lease of those of ids that are running under
	// worker to lease and returns how many it moved: one statement over
	// the primary key, whatever the queue holds. A job given up
	// meanwhile (reaped, retried, finished) is left as it is.
	RenewJobs(ctx context.Context, worker string, ids []int64, lease time.Time) (int64, error)
	// ReapJobs puts running jobs whose lease ended before now back in the
	// queue (their worker died) and returns how many; those that had
	// reached maxAttempts are marked failed instead.
	ReapJobs(ctx context.Context, now time.Time, maxAttempts map[string]int) (int64, error)
	// RetryJobs puts failed jobs of queue (every queue when empty) back
	// in the queue with their attempts reset; with ids, only those.
	// It returns how many.
	RetryJobs(ctx context.Context, queue string, ids []int64, now time.Time) (int64, error)
	// SetQueuePaused pauses or resumes a queue: workers claim nothing from
	// a paused queue; running jobs finish.
	SetQueuePaused(ctx context.Context, queue string, paused bool) error
	// SetFileFormats records what characterization found: formats[i]
	// describes the file keys[i].
	SetFileFormats(ctx context.Context, keys []int64, formats []*Format) error
}

// JobQueue is what operators do with the queue (the API and the CLI); the
// Repository implements it.
type JobQueue interface {
	// QueueCounts returns the state of every pipeline queue, in priority
	// order.
	QueueCounts(ctx context.Context) ([]QueueCount, error)
	// PauseQueue pauses, or with paused false resumes, a queue.
	PauseQueue(ctx context.Context, queue string, paused bool) error
	// RetryFailedJobs puts failed jobs back in their queues.
	RetryFailedJobs(ctx context.Context, queue string, ids []int64) (int64, error)
	// ListJobs lists jobs.
	ListJobs(ctx context.Context, f JobFilter) ([]*Job, error)
}
