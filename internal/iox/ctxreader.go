// Package iox holds the small readers the module's copies share.
package iox

import (
	"context"
	"io"
)

// ContextReader returns a reader of r that fails with ctx's error once
// ctx ends, so that a long io.Copy stops between two reads (a read
// already blocked is not interrupted). Costs one check of ctx a read.
func ContextReader(ctx context.Context, r io.Reader) io.Reader { return ctxReader{ctx, r} }

type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
