package http

// This file serves the interface's home, collection and search pages.

// uiReadRoutes are the routes of this file.
func (s *Server) uiReadRoutes() []route {
	return nil
}
