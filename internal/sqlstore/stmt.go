package sqlstore

import "strings"

// Stmt builds one statement and its arguments together: Arg appends an
// argument and returns its placeholder in the dialect's form, written
// where the argument is used, so the text and the arguments cannot fall
// out of step, and a value used twice is bound once.
type Stmt struct {
	strings.Builder
	Args []any
	arg  func(n int) string
}

// NewStmt returns an empty statement whose placeholders arg writes (the
// dialect's Arg).
func NewStmt(arg func(n int) string) *Stmt { return &Stmt{arg: arg} }

// Arg binds v and returns its placeholder.
func (s *Stmt) Arg(v any) string {
	s.Args = append(s.Args, v)
	return s.arg(len(s.Args))
}

// Done returns the statement's text and arguments.
func (s *Stmt) Done() (string, []any) { return s.String(), s.Args }
