package marc

import (
	"errors"
	"fmt"
)

// RecordError reports a record that could not be decoded. The reader that
// returned it can continue with the next record.
type RecordError struct {
	// Position is the 1-based number of the record in the stream.
	Position int
	// Offset is the byte offset of the start of the record in the stream.
	Offset int64
	// Reason says what is wrong, e.g. "invalid record length".
	Reason string
	// Err is the underlying error, if any.
	Err error
}

// Error implements error.
func (e *RecordError) Error() string {
	s := fmt.Sprintf("marc: record %d at offset %d: %s", e.Position, e.Offset, e.Reason)
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns the underlying error.
func (e *RecordError) Unwrap() error { return e.Err }

// errMARC8 is the base error of MARC-8 conversion failures.
var errMARC8 = errors.New("invalid MARC-8")

// marc8Error describes a MARC-8 conversion failure at a byte offset.
type marc8Error struct {
	off    int
	reason string
}

func (e *marc8Error) Error() string {
	return fmt.Sprintf("invalid MARC-8 at byte %d: %s", e.off, e.reason)
}

func (e *marc8Error) Unwrap() error { return errMARC8 }
