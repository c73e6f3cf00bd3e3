package http

// This file serves the interface's home, collection, work and search pages, sitemap and citations.

// uiReadRoutes are the routes of this file.
func (s *Server) uiReadRoutes() []route {
	return nil
}
