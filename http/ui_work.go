package http

// This file serves the interface's work pages, citations and sitemap.

// uiWorkRoutes are the routes of this file.
func (s *Server) uiWorkRoutes() []route {
	return nil
}
