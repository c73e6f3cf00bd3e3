package http

// uiWorkRows are the matrix rows of the routes of ui_work.go.
func (m *matrix) uiWorkRows() []row {
	return nil
}
