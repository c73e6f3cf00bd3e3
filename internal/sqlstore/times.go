package sqlstore

import "time"

// Times of accounts and resources are stored as Unix microseconds; a NULL
// column is a nil pointer.

// FromMicros is the UTC time of stored microseconds.
func FromMicros(v int64) time.Time { return time.UnixMicro(v).UTC() }

// TimePtr is the time of stored microseconds, nil for nil.
func TimePtr(v *int64) *time.Time {
	if v == nil {
		return nil
	}
	t := FromMicros(*v)
	return &t
}
