package http

import (
	_ "embed"
	"net/http"
)

//go:embed openapi.json
var openapiDoc []byte

// openapi serves the OpenAPI document of the API.
func (s *Server) openapi(w http.ResponseWriter, r *http.Request) error {
	w.Header().Set("Content-Type", "application/json")
	_, err := w.Write(openapiDoc)
	return err
}
