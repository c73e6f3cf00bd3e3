package shelfmark

import "context"

// ReadinessChecker is implemented by a component that /readyz consults
// besides the database: a content store that must answer, a read replica
// that must not lag too far. Ready returns nil when the component can
// serve requests now, or an error that says why not.
type ReadinessChecker interface {
	Ready(ctx context.Context) error
}
