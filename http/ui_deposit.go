package http

// This file serves the interface's deposit, edit, reorder, access and delete forms.

// uiDepositRoutes are the routes of this file.
func (s *Server) uiDepositRoutes() []route {
	return nil
}
