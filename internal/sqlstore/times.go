package sqlstore

import "time"

// Times of accounts and resources are stored as Unix microseconds; a NULL
// column is a nil pointer.

// FromMicros is the UTC time of stored microseconds.
func FromMicros(v int64) time.Time { return time.UnixMicro(v).UTC() }

// MicrosPtr is t as stored, nil for nil.
func MicrosPtr(t *time.Time) *int64 {
	if t == nil {
		return nil
	}
	v := t.UnixMicro()
	return &v
}

// TimePtr is the time of stored microseconds, nil for nil.
func TimePtr(v *int64) *time.Time {
	if v == nil {
		return nil
	}
	t := FromMicros(*v)
	return &t
}
