package http

// This file serves the interface's bulk ingest from a CSV manifest, with a preview.

// uiBulkRoutes are the routes of this file.
func (s *Server) uiBulkRoutes() []route {
	return nil
}
