// Package oai is Shelfmark's OAI-PMH 2.0 data provider: the six verbs over
// GET and POST at /oai, oai_dc and marcxml through a registry of formats,
// sets from collections, persistent deletions, and resumption tokens that
// are keyset cursors (rule R11), served from a view of the repository that
// a Projector keeps up to date.
package oai

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/shelfmark/shelfmark"
)

// Config describes the repository to harvesters.
type Config struct {
	// RepositoryName is Identify's repositoryName.
	RepositoryName string
	// BaseURL is the URL of the provider ("https://repo.example.org/oai");
	// when empty it is taken from each request's Host.
	BaseURL string
	// AdminEmails are Identify's adminEmail (at least one).
	AdminEmails []string
	// Domain is the repositoryIdentifier of OAI identifiers
	// ("oai:{Domain}:{id}"): a domain name the repository controls.
	Domain string
	// PageSize is how many records or headers a list page holds (default
	// 100).
	PageSize int
	// Logger receives failed requests.
	Logger *slog.Logger
	// Now is the clock (tests); default time.Now.
	Now func() time.Time
	// IDs is the repository's id codec, which OAI identifiers and set
	// specs are made with (default shelfmark.LegacyIDCodec, for tests).
	IDs *shelfmark.IDCodec
}

// DefaultDomain is the repositoryIdentifier used when none is configured.
const DefaultDomain = "shelfmark.local"

// domainPattern is repositoryIdentifier's pattern in oai-identifier.xsd.
var domainPattern = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9\-]*(\.[a-zA-Z][a-zA-Z0-9\-]*)+$`)

// emailPattern is adminEmail's pattern in OAI-PMH.xsd.
var emailPattern = regexp.MustCompile(`^\S+@(\S+\.)+\S+$`)

// Provider serves OAI-PMH 2.0 requests.
type Provider struct {
	store   shelfmark.Storage
	formats *Registry
	cfg     Config

	keyMu sync.Mutex
	key   []byte
}

// NewProvider returns a provider of the view in store.
func NewProvider(store shelfmark.Storage, formats *Registry, cfg Config) (*Provider, error) {
	if cfg.RepositoryName == "" {
		cfg.RepositoryName = "Shelfmark repository"
	}
	if cfg.Domain == "" {
		cfg.Domain = DefaultDomain
	}
	if !domainPattern.MatchString(cfg.Domain) {
		return nil, fmt.Errorf("oai: domain %q is not a domain name (letters, digits and hyphens, at least one dot, each part starting with a letter)", cfg.Domain)
	}
	if len(cfg.AdminEmails) == 0 {
		cfg.AdminEmails = []string{"admin@" + cfg.Domain}
	}
	for _, e := range cfg.AdminEmails {
		if !emailPattern.MatchString(e) {
			return nil, fmt.Errorf("oai: admin email %q is not an email address", e)
		}
	}
	if cfg.PageSize <= 0 {
		cfg.PageSize = 100
	}
	if cfg.PageSize > 10000 {
		return nil, fmt.Errorf("oai: page size %d is above 10,000", cfg.PageSize)
	}
	cfg.BaseURL = strings.TrimSuffix(cfg.BaseURL, "/")
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.IDs == nil {
		cfg.IDs = shelfmark.LegacyIDCodec()
	}
	return &Provider{store: store, formats: formats, cfg: cfg}, nil
}

// counterSecret holds the key that signs resumption tokens, shared by every
// server of one database.
const counterSecret = "oai_secret"

// tokenKey returns the key that signs resumption tokens, making it on first
// use.
func (p *Provider) tokenKey(ctx context.Context) ([]byte, error) {
	p.keyMu.Lock()
	defer p.keyMu.Unlock()
	if p.key != nil {
		return p.key, nil
	}
	var secret int64
	// from the primary: a replica may not have replayed a key another
	// server just made
	err := p.store.View(shelfmark.WithoutReplicaRead(ctx), func(tx shelfmark.ReadTx) (err error) {
		secret, err = tx.Counter(ctx, counterSecret)
		return err
	})
	if err != nil {
		return nil, err
	}
	if secret == 0 {
		var b [8]byte
		if _, err := rand.Read(b[:]); err != nil {
			return nil, err
		}
		mine := int64(binary.LittleEndian.Uint64(b[:])>>2) + 1
		err = p.store.Update(ctx, func(tx shelfmark.WriteTx) error {
			v, err := tx.AddCounter(ctx, counterSecret, mine)
			if err != nil {
				return err
			}
			if v != mine { // another server made the key first: keep theirs
				v, err = tx.AddCounter(ctx, counterSecret, -mine)
			}
			secret = v
			return err
		})
		if err != nil {
			return nil, err
		}
	}
	p.key = binary.LittleEndian.AppendUint64([]byte("shelfmark-oai-token:"), uint64(secret))
	return p.key, nil
}

// ServeHTTP answers one OAI-PMH request.
func (p *Provider) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodPost:
	default:
		w.Header().Set("Allow", "GET, HEAD, POST")
		http.Error(w, "OAI-PMH requests are GET or POST", http.StatusMethodNotAllowed)
		return
	}
	res := &response{p: p, now: p.cfg.Now().UTC(), base: p.baseURL(r)}
	args, err := readArgs(r)
	if err != nil {
		res.fail(nil, errBadArgument, err.Error())
	} else {
		p.handle(r.Context(), res, args)
	}
	if res.err != nil {
		if r.Context().Err() == nil {
			p.cfg.Logger.Error("oai: request failed", "query", r.URL.RawQuery, "err", res.err)
		}
		http.Error(w, "The repository could not answer: "+res.err.Error(), http.StatusServiceUnavailable)
		return
	}
	head := res.head()
	h := w.Header()
	h.Set("Content-Type", "text/xml; charset=utf-8")
	h.Set("Content-Length", strconv.Itoa(len(head)+len(res.body)+len(responseClose)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		// three writes, no copy of the page: net/http buffers them
		_, _ = w.Write(head)
		_, _ = w.Write(res.body)
		_, _ = io.WriteString(w, responseClose)
	}
}

// baseURL is the provider's URL as harvesters should use it.
func (p *Provider) baseURL(r *http.Request) string {
	if p.cfg.BaseURL != "" {
		return p.cfg.BaseURL
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host + r.URL.Path
}

// identifier returns the OAI identifier of a key.
func (p *Provider) identifier(key int64) string {
	return "oai:" + p.cfg.Domain + ":" + string(p.cfg.IDs.Encode(key))
}

// parseIdentifier returns the key an OAI identifier names, or false when it
// is not one of this repository's.
func (p *Provider) parseIdentifier(s string) (int64, bool) {
	pre := "oai:" + p.cfg.Domain + ":"
	if !strings.HasPrefix(s, pre) {
		return 0, false
	}
	k, err := p.cfg.IDs.Key(shelfmark.ID(s[len(pre):]))
	return k, err == nil
}
