package api

import (
	"net/http"
	"strconv"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/http/kit"
)

// TokenJSON is an API token as listed (never its secret).
type TokenJSON struct {
	ID      int64      `json:"id"`
	Hint    string     `json:"hint"`
	Scope   string     `json:"scope"`
	Note    string     `json:"note,omitempty"`
	Created time.Time  `json:"created"`
	Expires *time.Time `json:"expires"`
	Revoked *time.Time `json:"revoked,omitempty"`
}

func newTokenJSON(t *shelfmark.Token) TokenJSON {
	return TokenJSON{ID: t.Key, Hint: t.Hint, Scope: string(t.Scope), Note: t.Note, Created: t.Created, Expires: t.Expires, Revoked: t.Revoked}
}

// createToken handles POST /api/v1/tokens: {scope, expires, note} makes
// an API token for the caller (an administrator may name another user)
// and shows its secret, this once.
func (s *Handler) createToken(w http.ResponseWriter, r *http.Request) error {
	acc, err := s.deps.AccountService()
	if err != nil {
		return err
	}
	c, err := kit.SignedIn(r, "POST /api/v1/tokens")
	if err != nil {
		return err
	}
	var in struct {
		User    string  `json:"user"`
		Scope   string  `json:"scope"`
		Expires *string `json:"expires"`
		Note    string  `json:"note"`
	}
	if err := kit.ReadJSON(w, r, kit.MaxAccountBody, &in); err != nil {
		return err
	}
	nt := shelfmark.NewToken{User: c.Name, Kind: shelfmark.TokenAPI, Scope: shelfmark.Scope(in.Scope), Note: in.Note}
	if in.User != "" {
		nt.User = in.User
	}
	// the scope (write, or the caller's own when narrower, by default) and
	// the note are judged, and a refusal recorded, by the account service
	if in.Expires != nil {
		t, err := kit.ParseExpiry(*in.Expires, s.deps.Now())
		if err != nil {
			return err
		}
		nt.Expires = &t
	}
	secret, tok, err := acc.CreateToken(r.Context(), nt)
	if err != nil {
		return err
	}
	out := struct {
		Token string `json:"token"`
		TokenJSON
	}{Token: secret, TokenJSON: newTokenJSON(tok)}
	w.Header().Set("Cache-Control", "no-store")
	return kit.WriteJSON(w, http.StatusCreated, out)
}

// listTokens handles GET /api/v1/tokens[?user=NAME]: the caller's API
// tokens (an administrator may name another user).
func (s *Handler) listTokens(w http.ResponseWriter, r *http.Request) error {
	acc, user, err := s.tokenOwner(r, "GET /api/v1/tokens")
	if err != nil {
		return err
	}
	toks, err := acc.Tokens(r.Context(), user)
	if err != nil {
		return err
	}
	out := struct {
		Tokens []TokenJSON `json:"tokens"`
	}{Tokens: make([]TokenJSON, len(toks))}
	for i, t := range toks {
		out.Tokens[i] = newTokenJSON(t)
	}
	return kit.WriteJSON(w, http.StatusOK, out)
}

// revokeToken handles DELETE /api/v1/tokens/{id}[?user=NAME].
func (s *Handler) revokeToken(w http.ResponseWriter, r *http.Request) error {
	acc, user, err := s.tokenOwner(r, "DELETE /api/v1/tokens/{id}")
	if err != nil {
		return err
	}
	key, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || key <= 0 {
		return shelfmark.Errorf(shelfmark.ENOTFOUND, "There is no token %q; token ids are whole numbers (GET /api/v1/tokens lists them).", r.PathValue("id"))
	}
	if err := acc.RevokeToken(r.Context(), user, key); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// tokenOwner reads what the token routes but create need: the account
// service, a signed-in caller (route names the route in the refusal), and
// whose tokens are meant: ?user=NAME (which the account service allows an
// administrator only) or the caller's own.
func (s *Handler) tokenOwner(r *http.Request, route string) (shelfmark.AccountService, string, error) {
	acc, err := s.deps.AccountService()
	if err != nil {
		return nil, "", err
	}
	c, err := kit.SignedIn(r, route)
	if err != nil {
		return nil, "", err
	}
	user := r.URL.Query().Get("user")
	if user == "" {
		user = c.Name
	}
	return acc, user, nil
}
