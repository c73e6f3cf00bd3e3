package http

// This file serves the interface's bulk ingest from a CSV manifest, with a preview.

import "time"

// uiBulkRoutes are the routes of this file.
func (s *Server) uiBulkRoutes() []route {
	return nil
}

// ingestRunView is a bulk ingest started from the interface, as the
// administrators' dashboard lists it.
type ingestRunView struct {
	ID      string
	User    string
	Started time.Time
	// State is "preview", "running", "done", "failed" or "cancelled".
	State  string
	Total  int64 // rows of the manifest
	Done   int64 // items stored
	Failed int64 // items refused
}

// ingestRuns lists the bulk ingests this server knows of, newest first.
func (s *Server) ingestRuns() []ingestRunView {
	return nil
}
