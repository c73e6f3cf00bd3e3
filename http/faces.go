package http

import "github.com/shelfmark/shelfmark/http/kit"

// faceRoutes turns the routes a face hands over into the shell's, each
// handler wrapped to write its error as JSON and be counted (wrap).
func (s *Server) faceRoutes(rs []kit.Route) []route {
	out := make([]route, len(rs))
	for i, rt := range rs {
		out[i] = route{rt.Method, rt.Pattern, s.wrap(rt.Handle)}
	}
	return out
}
