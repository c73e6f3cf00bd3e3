package http

// uiBulkRows are the matrix rows of the routes of ui_bulk.go.
func (m *matrix) uiBulkRows() []row {
	return nil
}
