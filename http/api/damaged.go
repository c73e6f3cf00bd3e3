package api

import (
	"context"
	"fmt"

	"github.com/shelfmark/shelfmark"
)

// refuseDamaged fails the download of the file id when fixity checks
// found every copy of its bytes damaged: a 500 with a message saying so,
// before any byte is sent, so that no client takes damaged bytes (or a
// truncated body) for the file. Cost: one statement.
func refuseDamaged(ctx context.Context, es shelfmark.EventService, id shelfmark.ID) error {
	damaged, err := es.FileDamaged(ctx, id)
	if err != nil {
		return err
	}
	if damaged {
		return &shelfmark.Error{Code: shelfmark.EINTERNAL, Details: map[string]any{"damaged": true},
			Message: fmt.Sprintf("The bytes of %s are damaged in every copy this repository keeps (content store and preservation copy); they are not served. An administrator can see it in the fixity report.", id)}
	}
	return nil
}
