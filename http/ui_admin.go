package http

// This file serves the interface's the administrators' dashboard.

// uiAdminRoutes are the routes of this file.
func (s *Server) uiAdminRoutes() []route {
	return nil
}
