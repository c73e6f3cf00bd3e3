package shelfmark

import (
	"context"
	"fmt"
	"sort"
)

// EventLog is what the repository knows of a resource's preservation
// history: the resource (its tombstone when deleted) and its PREMIS events.
type EventLog struct {
	Resource *Resource
	// Events are, on the first page, the ingestion (the resource's
	// creation), the characterization (a file's recorded format, dated by
	// the file's last change) and the deletion (its tombstone), with the
	// stored events (fixity checks, recoveries) of the page, by date.
	Events []PreservationEvent
	// Next is the cursor of the next page of stored events (0: none).
	Next int64
}

// EventService reads resources' preservation events; the Repository
// implements it.
type EventService interface {
	// ResourceEvents returns id's events as the caller may read the
	// resource (ENOTFOUND otherwise; a deleted resource the caller could
	// read answers with its tombstone and its deletion), limit stored
	// events after the cursor after (0 starts).
	ResourceEvents(ctx context.Context, id ID, after int64, limit int) (*EventLog, error)
	// FileDamaged reports whether the fixity checks found every copy of
	// the file id's bytes damaged. Cost: one statement over the partial
	// index of damaged states.
	FileDamaged(ctx context.Context, id ID) (bool, error)
}

var _ EventService = (*Repository)(nil)

// Agent is the PREMIS agent of the events Shelfmark records.
func Agent() string { return "Shelfmark " + Version }

// ResourceEvents implements EventService. Cost: the resource's access
// reads, then one statement of at most limit (≤ MaxEventPage) stored
// events over the index of events by resource.
func (r *Repository) ResourceEvents(ctx context.Context, id ID, after int64, limit int) (*EventLog, error) {
	key, err := r.ids.Key(id)
	if err != nil {
		return nil, err
	}
	if limit <= 0 || limit > MaxEventPage {
		limit = MaxEventPage
	}
	if after < 0 {
		return nil, Errorf(EINVALID, "after: %d is not a cursor this list gave out.", after)
	}
	var res *Resource
	err = r.store.View(ctx, func(tx ReadTx) error {
		g := r.guard(tx, CallerFrom(ctx))
		row, err := tx.Resource(ctx, key)
		if err != nil {
			return err
		}
		_, err = g.readableEver(ctx, key, row)
		if err != nil {
			return err
		}
		res = r.rowResource(row)
		if row.Kind == KindFile {
			res.File, err = tx.File(ctx, key)
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("events of %s: %w", id, err)
	}
	log := &EventLog{Resource: res}
	if after == 0 {
		log.Events = append(log.Events, PreservationEvent{Resource: key, Type: EventIngestion, At: res.Created, Agent: Agent(),
			Outcome: OutcomeSuccess, Detail: fmt.Sprintf("%s %s created", res.Kind, id)})
		if f := res.File; f != nil && f.Format != nil {
			d := "PRONOM " + f.Format.PRONOM
			if f.Format.Name != "" {
				d += " (" + f.Format.Name
				if f.Format.Version != "" {
					d += " " + f.Format.Version
				}
				d += ")"
			}
			log.Events = append(log.Events, PreservationEvent{Resource: key, Type: EventCharacterization, At: res.Modified, Agent: Agent(),
				Outcome: OutcomeSuccess, Detail: d})
		}
		if res.Deleted != nil {
			log.Events = append(log.Events, PreservationEvent{Resource: key, Type: EventDeletion, At: *res.Deleted, Agent: Agent(),
				Outcome: OutcomeSuccess, Detail: fmt.Sprintf("%s %s deleted; its tombstone remains", res.Kind, id)})
		}
	}
	if pe, ok := r.store.(PreservationEvents); ok {
		stored, err := pe.Events(ctx, key, after, limit+1)
		if err != nil {
			return nil, fmt.Errorf("events of %s: %w", id, err)
		}
		if len(stored) > limit {
			stored = stored[:limit]
			log.Next = stored[limit-1].ID
		}
		log.Events = append(log.Events, stored...)
	}
	sort.SliceStable(log.Events, func(i, j int) bool { return log.Events[i].At.Before(log.Events[j].At) })
	return log, nil
}

// FileDamaged implements EventService. It does not check access: the
// caller has read the file already.
func (r *Repository) FileDamaged(ctx context.Context, id ID) (bool, error) {
	pe, ok := r.store.(PreservationEvents)
	if !ok {
		return false, nil
	}
	key, err := r.ids.Key(id)
	if err != nil {
		return false, err
	}
	d, err := pe.DamagedFiles(ctx, []int64{key})
	if err != nil {
		return false, fmt.Errorf("fixity of %s: %w", id, err)
	}
	return d[key], nil
}
