// Package client is the Go client of Shelfmark's REST API: what a bulk
// ingest needs of a remote repository.
package client

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"maps"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/http/kit"
	"github.com/shelfmark/shelfmark/rdf"
)

// Client talks to a Shelfmark server over its REST API, so that a bulk
// ingest can run against a remote repository with the guarantees of a
// local one. It has what the ingest pipeline needs of a repository
// (MintIDs, CreateGroups, FindSources) and is a shelfmark.BlobStore whose
// puts go to POST /api/v1/blobs. A Client is safe for concurrent use.
//
// The server mints every id: MintIDs hands out placeholders ("ref-1",
// "ref-2", …) that CreateGroups sends as refs, the client's own names of the
// resources of a group.
type Client struct {
	base    string
	hc      *http.Client
	maxBody int64
	token   string
	refs    atomic.Uint64
}

// Options configure a Client.
type Options struct {
	// HTTPClient sends the requests. Nil means a client that keeps enough
	// idle connections for parallel uploads, has no overall timeout (an
	// upload may take long; the context of each call ends it) and waits at
	// most 5 minutes for an answer once a request is sent.
	HTTPClient *http.Client
	// MaxRequestBytes caps the body of one /groups request; CreateGroups
	// splits a larger batch into several requests (default 8 MiB, half the
	// server's default body limit).
	MaxRequestBytes int64
	// Token, when set, is sent as "Authorization: Bearer TOKEN" with
	// every request.
	Token string
}

// refPrefix starts every placeholder id of MintIDs; '-' is not in the id
// alphabet, so a placeholder is never taken for a real id.
const refPrefix = "ref-"

// New returns a client of the server at baseURL, for example
// "http://127.0.0.1:8080" (a trailing /api/v1 is accepted).
func New(baseURL string, opts Options) (*Client, error) {
	u, err := url.Parse(strings.TrimSpace(baseURL))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("server URL %q: want an http or https URL such as http://127.0.0.1:8080", baseURL)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("server URL %q: a query or fragment has no place in it", baseURL)
	}
	base := strings.TrimSuffix(strings.TrimSuffix(u.String(), "/"), "/api/v1")
	hc := opts.HTTPClient
	if hc == nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.MaxIdleConnsPerHost = 64
		tr.DialContext = (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext
		// a server that took a request whole but never answers is given
		// up on, rather than waited for forever
		tr.ResponseHeaderTimeout = 5 * time.Minute
		hc = &http.Client{Transport: tr}
	}
	if opts.MaxRequestBytes <= 0 {
		opts.MaxRequestBytes = 8 << 20
	}
	return &Client{base: base, hc: hc, maxBody: opts.MaxRequestBytes, token: strings.TrimSpace(opts.Token)}, nil
}

// URL returns the server's base URL.
func (c *Client) URL() string { return c.base }

// Ready checks that the server answers, that its database does, and that
// it serves the bulk ingest endpoints.
func (c *Client) Ready(ctx context.Context) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+"/readyz", nil)
	if err != nil {
		return fmt.Errorf("readyz: %w", err)
	}
	if err := c.send(req, http.StatusOK, nil); err != nil {
		return fmt.Errorf("server %s is not ready: %w", c.base, err)
	}
	if _, err := c.FindSources(ctx, []string{"shelfmark:probe"}); err != nil {
		switch shelfmark.ErrorCode(err) {
		case shelfmark.EUNAUTHORIZED, shelfmark.EFORBIDDEN:
			return fmt.Errorf("server %s refuses this ingest (give a token with --token or SHELFMARK_TOKEN): %w", c.base, err)
		}
		return fmt.Errorf("server %s does not serve bulk ingest: %w", c.base, err)
	}
	return nil
}

// MintIDs returns n placeholder ids, unique for this Client, for the
// resources of groups about to be sent to CreateGroups; the server mints
// the real ids.
func (c *Client) MintIDs(ctx context.Context, n int) ([]shelfmark.ID, error) {
	if n < 0 {
		return nil, shelfmark.Errorf(shelfmark.EINVALID, "MintIDs: n is %d.", n)
	}
	last := c.refs.Add(uint64(n))
	ids := make([]shelfmark.ID, n)
	for i := range ids {
		ids[i] = shelfmark.ID(refPrefix + strconv.FormatUint(last-uint64(n)+uint64(i)+1, 10))
	}
	return ids, nil
}

// FindSources returns the root ids of the source keys stored before
// (POST /api/v1/sources/lookup, up to 1,000 keys a request). A request that
// got no answer is sent once more, as it changes nothing.
func (c *Client) FindSources(ctx context.Context, sourceKeys []string) (map[string]shelfmark.ID, error) {
	out := make(map[string]shelfmark.ID)
	for start := 0; start < len(sourceKeys); start += shelfmark.MaxPageSize {
		body, err := json.Marshal(kit.LookupBody{Keys: sourceKeys[start:min(start+shelfmark.MaxPageSize, len(sourceKeys))]})
		if err != nil {
			return nil, fmt.Errorf("find sources: %w", err)
		}
		var ans kit.LookupJSON
		for attempt := 0; ; attempt++ {
			req, err := c.jsonRequest(ctx, "/api/v1/sources/lookup", body)
			if err != nil {
				return nil, fmt.Errorf("find sources: %w", err)
			}
			err = c.send(req, http.StatusOK, &ans)
			if err == nil {
				break
			}
			var ne *noAnswerError
			if attempt > 0 || !errors.As(err, &ne) || ctx.Err() != nil {
				return nil, fmt.Errorf("find sources: %w", err)
			}
		}
		maps.Copy(out, ans.Found)
	}
	return out, nil
}

// CreateGroups sends groups to POST /api/v1/groups, as few requests as
// MaxRequestBytes and the limit of 1,000 groups a request allow, and
// returns each group's root or its error. Each group is stored atomically
// by the server; a source key stored before is ECONFLICT with
// Details["id"]. The ids of a group's resources must come from MintIDs (or
// be empty); other ids (a stored parent, collections) are sent as they are.
// A root holds what was sent with the id the server minted, version 1, and
// no sequence number or times.
func (c *Client) CreateGroups(ctx context.Context, gs []*shelfmark.NewGroup) ([]*shelfmark.Resource, []error) {
	roots := make([]*shelfmark.Resource, len(gs))
	errs := make([]error, len(gs))
	bodies := make([][]byte, len(gs))
	var chunk []int
	size := 0
	flush := func() {
		if len(chunk) > 0 {
			c.sendGroups(ctx, gs, bodies, chunk, roots, errs)
		}
		chunk, size = nil, 0
	}
	for i, g := range gs {
		b, err := encodeGroup(g)
		if err != nil {
			errs[i] = err
			continue
		}
		bodies[i] = b
		if len(chunk) > 0 && (int64(size+len(b)+32) > c.maxBody || len(chunk) == shelfmark.MaxPageSize) {
			flush()
		}
		chunk = append(chunk, i)
		size += len(b) + 1
	}
	flush()
	return roots, errs
}

// sendGroups sends the groups gs[idx] in one request and records their
// outcomes. A request the server finds too large is split in two, since
// the server stored nothing of it.
func (c *Client) sendGroups(ctx context.Context, gs []*shelfmark.NewGroup, bodies [][]byte, idx []int, roots []*shelfmark.Resource, errs []error) {
	var buf bytes.Buffer
	buf.WriteString(`{"groups":[`)
	for k, i := range idx {
		if k > 0 {
			buf.WriteByte(',')
		}
		buf.Write(bodies[i])
	}
	buf.WriteString("]}")
	var ans struct {
		Results []kit.GroupResult `json:"results"`
	}
	req, err := c.jsonRequest(ctx, "/api/v1/groups", buf.Bytes())
	if err == nil {
		err = c.send(req, http.StatusOK, &ans)
	}
	if err == nil && len(ans.Results) != len(idx) {
		err = &shelfmark.Error{Code: shelfmark.EINTERNAL, Message: fmt.Sprintf("The server answered %d results for %d groups.", len(ans.Results), len(idx))}
	}
	if err != nil {
		if shelfmark.ErrorCode(err) == shelfmark.ETOOLARGE && len(idx) > 1 {
			c.sendGroups(ctx, gs, bodies, idx[:len(idx)/2], roots, errs)
			c.sendGroups(ctx, gs, bodies, idx[len(idx)/2:], roots, errs)
			return
		}
		for _, i := range idx {
			errs[i] = fmt.Errorf("create groups: %w", err)
		}
		return
	}
	for k, i := range idx {
		res := ans.Results[k]
		if res.Status == http.StatusCreated && res.ID != "" {
			roots[i] = rootOf(gs[i], res)
			continue
		}
		errs[i] = resultError(res)
	}
}

// resultError is the error of a group the server did not store.
func resultError(res kit.GroupResult) error {
	if res.Error == nil || res.Error.Code == "" {
		return &shelfmark.Error{Code: shelfmark.EINTERNAL, Message: fmt.Sprintf("The server answered status %d for a group, without an error.", res.Status)}
	}
	e := &shelfmark.Error{Code: res.Error.Code, Message: res.Error.Message, Details: res.Error.Details}
	if e.Code == shelfmark.ECONFLICT && res.ID != "" {
		if _, ok := e.Details["id"]; !ok {
			e.Details = maps.Clone(e.Details)
			if e.Details == nil {
				e.Details = map[string]any{}
			}
			e.Details["id"] = string(res.ID)
		}
	}
	return e
}

// rootOf is the root of a stored group as the client knows it.
func rootOf(g *shelfmark.NewGroup, res kit.GroupResult) *shelfmark.Resource {
	nr := g.Resources[0]
	real := func(id shelfmark.ID) shelfmark.ID {
		if got, ok := res.IDs[string(id)]; ok && id != "" {
			return got
		}
		return id
	}
	vis := nr.Visibility
	if vis == "" {
		vis = shelfmark.Public
	}
	root := &shelfmark.Resource{ID: res.ID, Kind: nr.Kind, Visibility: vis, Embargo: nr.Embargo, Parent: real(nr.Parent),
		Metadata: nr.Metadata, File: nr.File, Version: 1}
	for _, c := range nr.MemberOf {
		root.MemberOf = append(root.MemberOf, real(c))
	}
	return root
}

// encodeGroup turns a group into its JSON for /api/v1/groups: the ids of
// the group's own resources become refs, other ids stay as they are.
func encodeGroup(g *shelfmark.NewGroup) ([]byte, error) {
	if g == nil || len(g.Resources) == 0 {
		return nil, shelfmark.Errorf(shelfmark.EINVALID, "A group needs at least one resource.")
	}
	inGroup := make(map[shelfmark.ID]bool, len(g.Resources))
	for i, nr := range g.Resources {
		switch {
		case nr == nil:
			return nil, shelfmark.Errorf(shelfmark.EINVALID, "resource %d of the group is empty.", i+1)
		case nr.ID == "":
			continue
		case !strings.HasPrefix(string(nr.ID), refPrefix):
			return nil, shelfmark.Errorf(shelfmark.EINVALID, "resource %d of the group has the id %s, which MintIDs of this client did not hand out; the server mints the ids of new resources.", i+1, nr.ID)
		case inGroup[nr.ID]:
			return nil, shelfmark.Errorf(shelfmark.EINVALID, "resource %d of the group: the id %s is used twice.", i+1, nr.ID)
		}
		inGroup[nr.ID] = true
	}
	out := kit.GroupJSON{SourceKey: g.SourceKey, FormerSourceKey: g.FormerKey, StoreAnyway: g.StoreAnyway, Resources: make([]kit.GroupMember, len(g.Resources))}
	for i, nr := range g.Resources {
		ref := string(nr.ID)
		if ref == "" {
			ref = fmt.Sprintf("%sunnamed-%d", refPrefix, i+1) // no one names it
		}
		m := kit.GroupMember{Ref: ref, Kind: nr.Kind, Visibility: string(nr.Visibility), Parent: string(nr.Parent)}
		for _, c := range nr.MemberOf {
			m.MemberOf = append(m.MemberOf, string(c))
		}
		if nr.Embargo != nil {
			m.Embargo, _ = json.Marshal(nr.Embargo.UTC().Format(time.RFC3339Nano))
		}
		if len(nr.Metadata) > 0 {
			m.Metadata = rdf.JSONMetadata(nr.Metadata)
		}
		if f := nr.File; f != nil {
			switch {
			case !f.Managed():
				return nil, shelfmark.Errorf(shelfmark.EINVALID, "file %q: external content cannot be sent as part of a group; register it with POST /api/v1/resources/{id}/files.", f.Name)
			case f.SHA512 != "" || f.MD5 != "":
				return nil, shelfmark.Errorf(shelfmark.EINVALID, "file %q: a group names its files' bytes by SHA-256 only; SHA-512 and MD5 cannot be sent.", f.Name)
			}
			size := f.Size
			m.File = &kit.GroupFile{Name: f.Name, MediaType: f.MediaType, SHA256: f.SHA256, Size: &size, Use: f.Use}
		}
		out.Resources[i] = m
	}
	for _, id := range g.Order {
		out.Order = append(out.Order, string(id))
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("encode group %q: %w", g.SourceKey, err)
	}
	return b, nil
}

// Put streams r to POST /api/v1/blobs, where the server stores it durably,
// and returns its digests, computed while the bytes are sent and checked
// against the server's answer. opts.Expect is sent as Content-Digest, so
// that the server refuses (EDIGESTMISMATCH) and keeps nothing when the
// bytes differ; opts.MaxSize ends the upload (ETOOLARGE) once more bytes
// came; opts.Deferred changes nothing, as every put is durable at once.
// The request asks 100-continue: a server that refuses the upload before
// reading it (503 or 429 with a retry_after, as when its background is
// over its backlog limit) is asked again after that wait, for as long as
// ctx lasts, since not a byte of r was read.
func (c *Client) Put(ctx context.Context, r io.Reader, opts shelfmark.PutOptions) (*shelfmark.Blob, error) {
	if opts.MaxSize < 0 {
		return nil, fmt.Errorf("put: negative MaxSize %d", opts.MaxSize)
	}
	for {
		blob, sent, err := c.put(ctx, r, opts)
		wait, ok := retryAfter(err)
		if !ok || sent > 0 {
			return blob, err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("put: waiting %s to send again (%w): %w", wait, err, context.Cause(ctx))
		case <-t.C:
		}
	}
}

// retryAfter is the wait an EUNAVAILABLE or ETOOMANY error of the server
// names (its retry_after, at most a minute).
func retryAfter(err error) (time.Duration, bool) {
	var se *shelfmark.Error
	if !errors.As(err, &se) || (se.Code != shelfmark.EUNAVAILABLE && se.Code != shelfmark.ETOOMANY) {
		return 0, false
	}
	secs, ok := se.Details["retry_after"].(float64)
	if !ok || secs <= 0 {
		return 0, false
	}
	return time.Duration(min(secs, 60) * float64(time.Second)), true
}

// put is one attempt of Put; sent is how many bytes of r it read.
func (c *Client) put(ctx context.Context, r io.Reader, opts shelfmark.PutOptions) (*shelfmark.Blob, int64, error) {
	body := &uploadBody{r: r, limit: opts.MaxSize, done: make(chan struct{})}
	for _, alg := range append(append([]shelfmark.DigestAlgorithm{shelfmark.SHA256}, opts.Compute...), algorithms(opts.Expect)...) {
		if body.has(alg) {
			continue
		}
		h := alg.New()
		if h == nil {
			return nil, 0, shelfmark.Errorf(shelfmark.EINVALID, "The digest algorithm %q is not one of sha-256, sha-512, md5, sha.", alg)
		}
		body.hs = append(body.hs, namedHash{alg: alg, h: h})
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+"/api/v1/blobs", body)
	if err != nil {
		return nil, 0, fmt.Errorf("put: %w", err)
	}
	req.Header.Set("Content-Type", "application/octet-stream")
	req.Header.Set("Expect", "100-continue")
	if len(opts.Expect) > 0 {
		parts := make([]string, len(opts.Expect))
		for i, d := range opts.Expect {
			parts[i] = string(d.Algorithm) + "=:" + base64.StdEncoding.EncodeToString(d.Value) + ":"
		}
		req.Header.Set("Content-Digest", strings.Join(parts, ", "))
	}
	var ans kit.BlobJSON
	err = c.send(req, http.StatusCreated, &ans)
	// The transport closes the body when it is done with it, perhaps after
	// the answer came: only then are the count and the hashes final.
	select {
	case <-body.done:
	case <-ctx.Done():
		return nil, body.n, fmt.Errorf("put: %w", context.Cause(ctx))
	}
	if body.err != nil {
		return nil, body.n, body.err // the reader failed or was too long: not the server's fault
	}
	if err != nil {
		return nil, body.n, err
	}
	blob := &shelfmark.Blob{Size: body.n, Digests: make(map[shelfmark.DigestAlgorithm]string, len(body.hs))}
	for _, h := range body.hs {
		blob.Digests[h.alg] = hex.EncodeToString(h.h.Sum(nil))
	}
	if ans.SHA256 != blob.Digests[shelfmark.SHA256] || ans.Size != blob.Size {
		return nil, body.n, &shelfmark.Error{Code: shelfmark.EINTERNAL,
			Message: fmt.Sprintf("The server stored %d bytes with the SHA-256 %s, but %d bytes with the SHA-256 %s were sent.", ans.Size, ans.SHA256, blob.Size, blob.Digests[shelfmark.SHA256])}
	}
	return blob, body.n, nil
}

// Sync does nothing: the server makes every put durable before it answers.
func (c *Client) Sync(ctx context.Context) error { return nil }

// Open is EUNSUPPORTED: the API serves the bytes of files, not of blobs
// (GET /api/v1/resources/{id}/content).
func (c *Client) Open(ctx context.Context, sha256 string) (io.ReadSeekCloser, error) {
	return nil, shelfmark.Errorf(shelfmark.EUNSUPPORTED, "The bytes stored on a remote server cannot be opened by SHA-256; read a file's content at /api/v1/resources/{id}/content.")
}

// algorithms lists the algorithms of digests.
func algorithms(ds []shelfmark.Digest) []shelfmark.DigestAlgorithm {
	out := make([]shelfmark.DigestAlgorithm, len(ds))
	for i, d := range ds {
		out[i] = d.Algorithm
	}
	return out
}

// namedHash is a running hash and its algorithm.
type namedHash struct {
	alg shelfmark.DigestAlgorithm
	h   hash.Hash
}

// uploadBody is the body of a put: it counts and hashes the bytes as the
// transport reads them, and stops with ETOOLARGE past the limit. The
// transport reads it from one goroutine and closes it when done; done is
// closed then, so that the count and hashes may be read.
type uploadBody struct {
	r     io.Reader
	limit int64
	hs    []namedHash
	n     int64
	err   error
	once  sync.Once
	done  chan struct{}
}

// has reports whether the body computes the digest alg.
func (b *uploadBody) has(alg shelfmark.DigestAlgorithm) bool {
	for _, h := range b.hs {
		if h.alg == alg {
			return true
		}
	}
	return false
}

// Read implements io.Reader.
func (b *uploadBody) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	n, err := b.r.Read(p)
	if n > 0 {
		b.n += int64(n)
		if b.limit > 0 && b.n > b.limit {
			b.err = &shelfmark.Error{Code: shelfmark.ETOOLARGE, Message: fmt.Sprintf("The content is larger than the limit of %d bytes.", b.limit),
				Details: map[string]any{"limit": b.limit}}
			return 0, b.err
		}
		for _, h := range b.hs {
			h.h.Write(p[:n])
		}
	}
	if err != nil && err != io.EOF {
		b.err = fmt.Errorf("put: reading the bytes: %w", err)
		return n, b.err
	}
	return n, err
}

// Close implements io.Closer; it leaves the underlying reader to its owner.
func (b *uploadBody) Close() error {
	b.once.Do(func() { close(b.done) })
	return nil
}

// jsonRequest builds a POST of a JSON body.
func (c *Client) jsonRequest(ctx context.Context, path string, body []byte) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+path, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	return req, nil
}

// noAnswerError is a request that got no answer from the server (it may
// or may not have been carried out).
type noAnswerError struct {
	err *shelfmark.Error
}

// Error implements error.
func (e *noAnswerError) Error() string { return e.err.Error() }

// Unwrap lets errors.As find the *shelfmark.Error.
func (e *noAnswerError) Unwrap() error { return e.err }

// send sends req and decodes a JSON answer with the status want into out
// (nil: the body is dropped). Any other answer becomes a *shelfmark.Error
// with the server's code and message; no answer is a *noAnswerError with
// the code EUNAVAILABLE, or the context's error once it ended.
func (c *Client) send(req *http.Request, want int, out any) error {
	req.Header.Set("User-Agent", "shelfmark/"+shelfmark.Version)
	req.Header.Set("Accept", "application/json")
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		if ctx := req.Context(); ctx.Err() != nil {
			return fmt.Errorf("%s %s: %w", req.Method, req.URL.Path, context.Cause(ctx))
		}
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return &noAnswerError{&shelfmark.Error{Code: shelfmark.EUNAVAILABLE,
			Message: fmt.Sprintf("No answer from the server to %s %s: %v.", req.Method, req.URL.Redacted(), err)}}
	}
	defer resp.Body.Close()
	if resp.StatusCode != want {
		return responseError(req, resp)
	}
	if out == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return &shelfmark.Error{Code: shelfmark.EINTERNAL, Message: fmt.Sprintf("The answer to %s %s could not be read: %v.", req.Method, req.URL.Redacted(), err)}
	}
	return nil
}

// responseError turns an error answer into a *shelfmark.Error: the API's
// JSON error as it is, anything else with a code from its status.
func responseError(req *http.Request, resp *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	var eb kit.ErrorBody
	if json.Unmarshal(b, &eb) == nil && eb.Code != "" && eb.Message != "" {
		return &shelfmark.Error{Code: eb.Code, Message: eb.Message, Details: eb.Details}
	}
	code, ok := kit.CodeOf(resp.StatusCode)
	if !ok {
		code = shelfmark.EINTERNAL
	}
	return &shelfmark.Error{Code: code, Message: fmt.Sprintf("The server answered %s to %s %s: %.200q.", resp.Status, req.Method, req.URL.Redacted(), b)}
}
