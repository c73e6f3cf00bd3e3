package http

// uiAdminRows are the matrix rows of the routes of ui_admin.go.
func (m *matrix) uiAdminRows() []row {
	return nil
}
