package api

import (
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/http/kit"
)

// eventsPage bounds the stored events of one answer.
const eventsPage = 100

// getEvents answers GET /api/v1/resources/{id}/events: the resource's
// PREMIS events (ingestion, characterization, the versions of its object
// in the preservation copy, fixity checks, recoveries, deletion) as PREMIS
// 3 XML (Accept: application/xml) or JSON, as the caller may read the
// resource (404 otherwise). Stored events come in pages of at most 100
// (?after=CURSOR, the answer's next). Cost: the resource's access reads,
// one statement of stored events and, on the first page of a work or a
// collection, one read of its object's inventory.
func (s *Handler) getEvents(w http.ResponseWriter, r *http.Request) error {
	asXML, ok := wantsXML(r.Header.Get("Accept"))
	if !ok {
		return &shelfmark.Error{Code: shelfmark.ENOTACCEPTABLE,
			Message: fmt.Sprintf("No representation matches Accept %q; the events are available as application/json and application/xml.", r.Header.Get("Accept"))}
	}
	es, ok := s.deps.Resources.(shelfmark.EventService)
	if !ok {
		return shelfmark.Errorf(shelfmark.ENOTFOUND, "This server keeps no preservation events.")
	}
	var after int64
	if v := r.URL.Query().Get("after"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 {
			return shelfmark.Errorf(shelfmark.EINVALID, "after: %.100q is not a cursor this list gave out.", v)
		}
		after = n
	}
	id := shelfmark.ID(r.PathValue("id"))
	log, err := es.ResourceEvents(r.Context(), id, after, eventsPage)
	if err != nil {
		return err
	}
	var views []eventView
	told := 0
	for _, e := range log.Events {
		v := eventView{ID: strconv.FormatInt(e.ID, 10), Type: e.Type, TypeURI: shelfmark.EventTypeURI(e.Type), Date: e.At, Agent: e.Agent,
			Outcome: e.Outcome, Detail: e.Detail, Copy: e.Copy, Algorithm: e.Algorithm, Digest: e.Digest}
		if e.ID == 0 {
			told++
			v.ID = eventID(strings.ReplaceAll(e.Type, " ", "-"), told)
		}
		views = append(views, v)
	}
	res := log.Resource
	if after == 0 && s.opts.Versions != nil && (res.Kind == shelfmark.KindWork || res.Kind == shelfmark.KindCollection) {
		vs, err := s.opts.Versions.ObjectVersions(r.Context(), res.ID)
		if err != nil {
			return err
		}
		for _, v := range vs {
			agent := v.User
			if agent == "" {
				agent = "Shelfmark"
			}
			views = append(views, eventView{ID: eventID("version", v.Num), Type: shelfmark.EventReplication, TypeURI: shelfmark.EventTypeURI(shelfmark.EventReplication),
				Date: v.Created, Agent: agent, Outcome: shelfmark.OutcomeSuccess, Copy: shelfmark.CopyOCFL,
				Detail: fmt.Sprintf("version v%d of the preservation copy's object: %s", v.Num, v.Message)})
		}
		sortEvents(views)
	}
	w.Header().Set("Vary", "Accept")
	w.Header().Set("Cache-Control", "private, no-store")
	next := ""
	if log.Next != 0 {
		next = strconv.FormatInt(log.Next, 10)
		w.Header().Add("Link", `</api/v1/resources/`+string(res.ID)+`/events?after=`+next+`>; rel="next"`)
	}
	if !asXML {
		if views == nil {
			views = []eventView{}
		}
		return kit.WriteJSON(w, http.StatusOK, map[string]any{"id": res.ID, "events": views, "next": next})
	}
	body, err := premisXML(res, views)
	if err != nil {
		return fmt.Errorf("events of %s: %w", res.ID, err)
	}
	w.Header().Set("Content-Type", "application/xml; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	_, err = w.Write(body)
	return err
}

// sortEvents orders events by date, stably.
func sortEvents(vs []eventView) {
	sort.SliceStable(vs, func(i, j int) bool { return vs[i].Date.Before(vs[j].Date) })
}

// wantsXML reads Accept: XML when application/xml or text/xml comes
// before any JSON or wildcard; JSON for an empty Accept, JSON or a
// wildcard; not ok for anything else.
func wantsXML(accept string) (xml, ok bool) {
	if strings.TrimSpace(accept) == "" {
		return false, true
	}
	for _, part := range strings.Split(accept, ",") {
		mt, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if refused(params) {
			continue
		}
		switch strings.ToLower(strings.TrimSpace(mt)) {
		case "application/xml", "text/xml":
			return true, true
		case "application/json", "*/*", "application/*":
			return false, true
		}
	}
	return false, false
}

// refused reports whether media type parameters give q=0.
func refused(params string) bool {
	for _, p := range strings.Split(params, ";") {
		if k, v, ok := strings.Cut(strings.TrimSpace(p), "="); ok && strings.EqualFold(k, "q") {
			if q, err := strconv.ParseFloat(v, 64); err == nil && q == 0 {
				return true
			}
		}
	}
	return false
}
