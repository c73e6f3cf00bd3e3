package main

import "github.com/shelfmark/shelfmark/internal/testkit"

// The helpers this package's tests share with the server's own tests and
// the end-to-end suites (internal/testkit).
var (
	do           = testkit.Do
	freePort     = testkit.FreePort
	workMetadata = testkit.WorkMetadata
	withBearer   = testkit.WithBearer
	waitServing  = testkit.WaitServing
	createWork   = testkit.CreateWork
	s3Keys       = testkit.S3Keys
	workerSchema = testkit.Schema
)
