package http

// uiDepositRows are the matrix rows of the routes of ui_deposit.go.
func (m *matrix) uiDepositRows() []row {
	return nil
}
