package ui

// This file serves signing in and out from the interface: a form that
// opens the same session POST /api/v1/login does (and counts failures the
// same way), and a button that ends it.

import (
	"net/http"
	"strings"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/http/kit"
)

// loginData is the content of the sign-in page.
type loginData struct {
	Name  string
	Next  string
	Error string
	// OIDC is set when single sign-on is configured.
	OIDC bool
}

// loginPage handles GET /login.
func (s *Handler) loginPage(w http.ResponseWriter, r *http.Request) error {
	p := s.page(w, r, "login.title")
	p.Data = &loginData{Next: kit.ReturnPathOr(r.URL.Query().Get("next"), "/"), OIDC: s.opts.SingleSignOn}
	return s.render(w, r, http.StatusOK, "login", p)
}

// loginForm handles POST /login: a good name and password open a session
// and go on to next; a bad one shows the form again with why (401).
func (s *Handler) loginForm(w http.ResponseWriter, r *http.Request) error {
	name, next := strings.TrimSpace(r.PostForm.Get("name")), kit.ReturnPathOr(r.PostForm.Get("next"), "/")
	secret, _, err := s.opts.SignIn.PasswordLogin(r, name, r.PostForm.Get("password"))
	if err != nil {
		switch status := kit.Status(shelfmark.ErrorCode(err)); status {
		case http.StatusUnauthorized, http.StatusBadRequest, http.StatusTooManyRequests:
			p := s.page(w, r, "login.title")
			msg := p.T("login.failed")
			if status == http.StatusTooManyRequests {
				kit.RetryAfter(w, err)
				msg = shelfmark.ErrorMessage(err)
			}
			p.Data = &loginData{Name: name, Next: next, Error: msg, OIDC: s.opts.SingleSignOn}
			return s.render(w, r, status, "login", p)
		}
		return err
	}
	http.SetCookie(w, s.deps.SessionCookie(r, secret, 0))
	http.Redirect(w, r, next, http.StatusSeeOther)
	return nil
}

// logoutForm handles POST /logout: the session ends and the browser goes
// home.
func (s *Handler) logoutForm(w http.ResponseWriter, r *http.Request) error {
	if err := s.opts.SignIn.EndSession(w, r); err != nil {
		return err
	}
	http.Redirect(w, r, "/", http.StatusSeeOther)
	return nil
}
