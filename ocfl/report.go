package ocfl

import (
	"fmt"
	"strings"
)

// Finding is one error or warning of a validation: an OCFL validation code
// ("E040", "W004"), where it was found and what is wrong.
type Finding struct {
	// Code is the OCFL 1.1 validation code (https://ocfl.io/1.1/spec/validation-codes.html).
	Code string
	// Path is the file or directory concerned, relative to the storage root
	// or object root being validated.
	Path string
	// Message says what is wrong, in words.
	Message string
}

// String gives "E040 inventory.json: head v2 is not the highest version v3".
func (f Finding) String() string {
	if f.Path == "" {
		return f.Code + ": " + f.Message
	}
	return f.Code + " " + f.Path + ": " + f.Message
}

// Report is what a validation found: errors (the object or root is not
// valid OCFL) and warnings (it is valid but departs from a SHOULD).
type Report struct {
	// Errors are the violations of a MUST, in the order found.
	Errors []Finding
	// Warnings are the departures from a SHOULD, in the order found.
	Warnings []Finding
}

// maxFindings bounds a report: past it, further findings are counted in the
// last message only, so a pathological object cannot grow a report without
// bound.
const maxFindings = 1000

// Valid reports whether nothing in the report is an error.
func (r *Report) Valid() bool { return len(r.Errors) == 0 }

// Codes returns the distinct error and warning codes, errors first.
func (r *Report) Codes() []string {
	seen := map[string]bool{}
	var out []string
	for _, list := range [][]Finding{r.Errors, r.Warnings} {
		for _, f := range list {
			if !seen[f.Code] {
				seen[f.Code] = true
				out = append(out, f.Code)
			}
		}
	}
	return out
}

// Has reports whether the report holds an error or warning with code.
func (r *Report) Has(code string) bool {
	for _, list := range [][]Finding{r.Errors, r.Warnings} {
		for _, f := range list {
			if f.Code == code {
				return true
			}
		}
	}
	return false
}

// Err returns nil when the report has no error, else an error listing the
// first few errors.
func (r *Report) Err() error {
	if r.Valid() {
		return nil
	}
	var b strings.Builder
	for i, f := range r.Errors {
		if i == 5 {
			fmt.Fprintf(&b, "; and %d more", len(r.Errors)-i)
			break
		}
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(f.String())
	}
	return fmt.Errorf("ocfl: invalid: %s", b.String())
}

// String lists every finding, one a line.
func (r *Report) String() string {
	var b strings.Builder
	for _, f := range r.Errors {
		b.WriteString("error " + f.String() + "\n")
	}
	for _, f := range r.Warnings {
		b.WriteString("warning " + f.String() + "\n")
	}
	return b.String()
}

func (r *Report) errorf(code, path, format string, args ...any) {
	if len(r.Errors) >= maxFindings {
		return
	}
	r.Errors = append(r.Errors, Finding{Code: code, Path: path, Message: fmt.Sprintf(format, args...)})
}

func (r *Report) warnf(code, path, format string, args ...any) {
	if len(r.Warnings) >= maxFindings {
		return
	}
	r.Warnings = append(r.Warnings, Finding{Code: code, Path: path, Message: fmt.Sprintf(format, args...)})
}
