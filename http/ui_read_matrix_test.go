package http

// uiReadRows are the matrix rows of the routes of ui_read.go.
func (m *matrix) uiReadRows() []row {
	return nil
}
