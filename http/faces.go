package http

import "github.com/shelfmark/shelfmark/http/kit"

// faceRoutes turns the routes a face hands over into the shell's, each
// handler wrapped to write its error as JSON and be counted (wrap), and
// kept to administrators (admin) or given an upload slot (uploading) when
// the route says so.
func (s *Server) faceRoutes(rs []kit.Route) []route {
	out := make([]route, len(rs))
	for i, rt := range rs {
		h := s.wrap(rt.Handle)
		if rt.Upload {
			h = s.uploading(h)
		}
		if rt.Admin {
			h = s.admin(h)
		}
		out[i] = route{rt.Method, rt.Pattern, h}
	}
	return out
}
