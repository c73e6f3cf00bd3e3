package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/shelfmark/shelfmark"
	shttp "github.com/shelfmark/shelfmark/http"
	"github.com/shelfmark/shelfmark/http/admission"
)

// UIConfig configures the ui scenario: the server time of the web
// interface's pages on a large repository. It stores one book of Pages
// pages (a work with Pages ordered file sets of one file each), and one
// collection of Members works whose titles and descriptions are the search
// scenario's (one word in every work, rare words in about RareEvery works
// each), indexes everything for search, serves the real HTTP server on a
// loopback port, and asks one page at a time, as an anonymous reader, for
// the book's work page, the collection's first page and its page at 90%
// depth, and the search page of the common word and of a rare word; then
// the search page of the common word again as a signed-in reader with a
// viewer role on the collection (a search by what its caller may read:
// shelfmark.SearchReader), to weigh against the anonymous one.
type UIConfig struct {
	Pages   int // pages of the book (default 1,200)
	Members int // works in the collection, all searchable (default 1,000,000)
	Batch   int // works per CreateResources call (default 500)
	// Requests is how many times each page is timed (default 300), in
	// rounds of one request of each page; Warmup rounds before them are
	// not timed (default 20).
	Requests int
	Warmup   int
	// PageSize and WorkPageSize are the members and the book's pages the
	// raw reads take: what a collection page and a work page show
	// (default 50 and 60); search reads shelfmark.DefaultSearchLimit hits,
	// as the search page does.
	PageSize     int
	WorkPageSize int
	RareEvery    int // a rare word is in about this many works (default 10)
	// UsageSeconds is how long the reader asks for the work page of each
	// of two servers, one counting uses and one not (UIUsage; default
	// 20; less than 0 leaves the measure out).
	UsageSeconds int
	Seed         uint64
	// Progress, when set, is told what is happening and how far it is.
	Progress func(stage string, done, total int)
	// Logger receives the server's log (default: warnings and errors to
	// nowhere).
	Logger *slog.Logger
}

// UIPage is what the scenario measured of one page.
type UIPage struct {
	Name string `json:"name"`
	// Path is the page's path and query, as asked.
	Path string `json:"path"`
	// Available is false when the server has no such page (its route
	// answered as an unknown path); Unavailable then says what it
	// answered, and nothing was timed.
	Available   bool   `json:"available"`
	Unavailable string `json:"unavailable,omitempty"`
	Requests    int    `json:"requests"`
	// Server is the server time of each request: from the start of the
	// server's handler to its return (rendering, compression and writing
	// into the connection included; the client's reading excluded).
	Server Latency `json:"server_ms"`
	// CPU is the CPU time (user and system) this process spent while the
	// handler ran: the server's work, less sensitive than Server to other
	// work on the machine (with SQLite the database's work too; with
	// PostgreSQL the server's side only; the client, in the same process,
	// adds its reading of the answer's bytes).
	CPU Latency `json:"cpu_ms"`
	// Client is the time from sending the request to reading the last
	// byte of the answer, on the same loopback connection.
	Client Latency `json:"client_ms"`
	// Raw is the time of the same reads straight on the engine, in
	// process, as the anonymous caller (RawWhat says which), without HTTP
	// or rendering.
	Raw     Latency `json:"raw_ms"`
	RawWhat string  `json:"raw_what"`
	// Bytes is the size of the last answer's body (after decompression).
	Bytes  int   `json:"bytes"`
	Errors int64 `json:"errors"`
	// FirstError describes the first wrong answer.
	FirstError string `json:"first_error,omitempty"`
}

// UIResult holds the ui scenario's own figures beside its report.
type UIResult struct {
	Report *Report
	Pages  []UIPage
	// StaffOverAnonymous is the server time of the staff search page
	// over that of the anonymous one of the same word, at p50 and at p99
	// (target ≤ 1.2); 0 when either is not available.
	StaffOverAnonymousP50, StaffOverAnonymousP99 float64
	// DeepOverFirst is the server time of the collection page at 90% depth
	// over that of its first page, at p50 and at p99 (target ≤ 1.2); 0
	// when either page is not available.
	DeepOverFirstP50, DeepOverFirstP99 float64
	// FillPerS and IndexPerS are the rates of storing the members and of
	// indexing them for search.
	FillPerS, IndexPerS float64
	// Usage is what counting uses costs the reader, nil when not measured.
	Usage *UIUsage
}

// The pages of the scenario, in the order of its steps.
const (
	UIWork = iota
	UICollectionFirst
	UICollectionDeep
	UISearchCommon
	UISearchRare
	UISearchStaff
	UISearchBook
)

// uiBookTitle is the title of the scenario's book (it holds none of the
// search words).
func uiBookTitle(pages int) string { return fmt.Sprintf("An atlas of shelfmarks in %d pages", pages) }

// uiPageFile names the file of the book's page n (from 1).
func uiPageFile(n int) string { return fmt.Sprintf("page_%04d.tif", n) }

// uiWorkLink matches a link to a work page.
var uiWorkLink = regexp.MustCompile(`/works/[A-Za-z0-9._~-]+`)

// browserAccept is the Accept header of the timed requests, a browser's.
const browserAccept = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"

// uiCheck is what an answer must hold to count as right.
type uiCheck struct {
	contains []string // every one of these
	anyOf    []string // at least one of these (when not empty)
	links    int      // at least this many distinct links to work pages
}

// uiKind is one page of the scenario.
type uiKind struct {
	name, path string
	// token is the bearer token the page is asked with ("": anonymous)
	token   string
	check   uiCheck
	rawWhat string
	raw     func(ctx context.Context) error
}

// RunUI runs the ui scenario against a repository, its storage and its
// content store.
func RunUI(ctx context.Context, repo *shelfmark.Repository, store shelfmark.Storage, blobs shelfmark.BlobStore, c UIConfig) (*UIResult, error) {
	if c.Pages <= 0 {
		c.Pages = 1200
	}
	if c.Members <= 0 {
		c.Members = 1000000
	}
	if c.Batch <= 0 {
		c.Batch = 500
	}
	if c.Requests <= 0 {
		c.Requests = 300
	}
	if c.Warmup < 0 {
		c.Warmup = 0
	} else if c.Warmup == 0 {
		c.Warmup = 20
	}
	if c.PageSize <= 0 {
		c.PageSize = 50
	}
	if c.WorkPageSize <= 0 {
		c.WorkPageSize = 60
	}
	if c.RareEvery <= 0 {
		c.RareEvery = 10
	}
	if c.UsageSeconds == 0 {
		c.UsageSeconds = 20
	}
	progress := c.Progress
	if progress == nil {
		progress = func(string, int, int) {}
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	rep := &Report{Scenario: "ui", Backend: store.Backend(), Started: time.Now().UTC(),
		Params: map[string]any{"pages": c.Pages, "members": c.Members, "requests": c.Requests, "warmup_rounds": c.Warmup,
			"page_size": c.PageSize, "work_page_size": c.WorkPageSize, "rare_every": c.RareEvery, "common_word": SearchCommonWord,
			"timing": "server time: a wrapper around the server's handler on a real HTTP server on a loopback port times each request from the handler's start to its return " +
				"(rendering, gzip and writing into the connection included; the client's reading excluded); one request at a time, anonymous, Accept-Encoding: gzip",
			"goals": "work and collection pages p99 ≤ 30 ms; collection page at 90% depth ≤ 1.2× its first page; search pages (grouped by work) p99 ≤ 100 ms; a signed-in reader's search page ≤ 1.2× the anonymous one; counting 1,000 views/s costs the reader ≤ 5% of its pages a second"}}
	res := &UIResult{Report: rep}

	// the book
	book, pages, err := uiBook(ctx, repo, blobs, c, progress)
	if err != nil {
		return nil, err
	}

	// the collection and its members, searchable
	coll, err := repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindCollection,
		Metadata: []shelfmark.Statement{{Predicate: shelfmark.NSDC + "title", Object: shelfmark.NewLiteral("The ledgers")}}})
	if err != nil {
		return nil, err
	}
	sc := SearchConfig{Works: c.Members, MediumEvery: 100, RareEvery: c.RareEvery}
	mid, _ := searchWords(c.Seed, c.Members/2, sc)
	rare := strings.Fields(mid)[3] // "The ledger of RARE and …"
	deepAt := c.Members * 9 / 10
	var firstID, deepID shelfmark.ID
	var rareIDs []string
	var viewIDs []shelfmark.ID
	start := time.Now()
	nrs := make([]*shelfmark.NewResource, 0, c.Batch)
	for done := 0; done < c.Members; {
		n := min(c.Batch, c.Members-done)
		nrs = nrs[:0]
		var rareAt []int
		for i := done; i < done+n; i++ {
			title, body := searchWords(c.Seed, i, sc)
			if hasWord(title, rare) || hasWord(body, rare) {
				rareAt = append(rareAt, i-done)
			}
			nrs = append(nrs, &shelfmark.NewResource{Kind: shelfmark.KindWork, MemberOf: []shelfmark.ID{coll.ID},
				Metadata: []shelfmark.Statement{
					{Predicate: shelfmark.NSDC + "title", Object: shelfmark.NewLiteral(title)},
					{Predicate: shelfmark.NSDC + "description", Object: shelfmark.NewLiteral(body)},
					{Predicate: shelfmark.NSDC + "creator", Object: shelfmark.NewLiteral(fmt.Sprintf("Clerk %d", i%97))},
					{Predicate: shelfmark.NSDC + "type", Object: shelfmark.NewLiteral("Text")},
				}})
		}
		out, errs := repo.CreateResources(ctx, nrs)
		if err := errors.Join(errs...); err != nil {
			return nil, fmt.Errorf("members %d–%d: %w", done+1, done+n, err)
		}
		if done == 0 {
			firstID = out[0].ID
		}
		if deepAt >= done && deepAt < done+n {
			deepID = out[deepAt-done].ID
		}
		for _, k := range rareAt {
			rareIDs = append(rareIDs, string(out[k].ID))
		}
		if len(viewIDs) < 5000 {
			viewIDs = append(viewIDs, out[0].ID) // the works the other views are of
		}
		done += n
		progress("store members", done, c.Members)
	}
	res.FillPerS = float64(c.Members) / time.Since(start).Seconds()

	// the search index
	start = time.Now()
	indexer := shelfmark.NewSearchIndexer(store, shelfmark.IndexerOptions{})
	toIndex := c.Members + 2*c.Pages + 2 // members, file sets, files, the book and the collection
	for done := 0; ; {
		n, err := indexer.Step(ctx)
		if err != nil {
			return nil, fmt.Errorf("index: %w", err)
		}
		if n == 0 {
			break
		}
		done += n
		progress("index for search", min(done, toIndex), toIndex)
	}
	res.IndexPerS = float64(c.Members) / time.Since(start).Seconds()
	rep.Params["fill_per_s"], rep.Params["index_per_s"] = res.FillPerS, res.IndexPerS
	if err := uiBookText(ctx, repo, store, book, pages); err != nil {
		return nil, err
	}

	// the cursor at 90% depth: the members list walked as the anonymous
	// reader, through the same keyset listing the pages use
	anon := shelfmark.WithCaller(ctx, shelfmark.Anonymous())
	var deep shelfmark.Cursor
	for seen := 0; seen < deepAt; {
		p, err := repo.ListMembers(anon, coll.ID, shelfmark.PageRequest{After: deep, Limit: min(shelfmark.MaxPageSize, deepAt-seen)})
		if err != nil {
			return nil, fmt.Errorf("walk to 90%% depth: %w", err)
		}
		if len(p.Items) == 0 || p.Next == "" {
			return nil, fmt.Errorf("walk to 90%% depth: the members list ended after %d of %d", seen+len(p.Items), c.Members)
		}
		seen += len(p.Items)
		deep = p.Next
		progress("walk to 90% depth", seen, deepAt)
	}
	rep.Params["deep_members_before"] = deepAt
	rep.Params["rare_word"], rep.Params["rare_word_matches"] = rare, len(rareIDs)

	// the pages, and the same reads straight on the engine
	listMembers := func(after shelfmark.Cursor, want shelfmark.ID) func(context.Context) error {
		return func(ctx context.Context) error {
			if _, err := repo.FindResource(ctx, coll.ID); err != nil {
				return err
			}
			p, err := repo.ListMembers(ctx, coll.ID, shelfmark.PageRequest{After: after, Limit: c.PageSize, Metadata: true})
			if err != nil {
				return err
			}
			if len(p.Items) == 0 || p.Items[0].ID != want {
				return fmt.Errorf("members page after %q does not start with %s", after, want)
			}
			return nil
		}
	}
	search := func(word string) func(context.Context) error {
		return func(ctx context.Context) error {
			return store.View(ctx, func(tx shelfmark.ReadTx) error {
				q := shelfmark.SearchQuery{Text: word, Facets: true, Group: true, Now: time.Now()} // as the search page asks
				var err error
				if q.Reader, err = repo.SearchReader(ctx, tx); err != nil {
					return err
				}
				r, err := tx.Search(ctx, q)
				if err == nil && len(r.Hits) == 0 {
					err = fmt.Errorf("search %q: no hits", word)
				}
				return err
			})
		}
	}
	// the signed-in reader: a user with a viewer role on the collection,
	// and a read token of hers
	acc := shelfmark.NewAccounts(repo, shelfmark.AccountsOptions{Logger: c.Logger})
	sys := shelfmark.WithCaller(ctx, shelfmark.SystemCaller("bench"))
	if _, err := acc.AddUser(sys, "bench-reader", "", false, nil); err != nil {
		return nil, fmt.Errorf("the signed-in reader: %w", err)
	}
	if err := acc.SetRoles(sys, coll.ID, []shelfmark.Grant{{Principal: shelfmark.UserPrincipal("bench-reader"), Role: shelfmark.RoleViewer}}); err != nil {
		return nil, fmt.Errorf("the signed-in reader's role: %w", err)
	}
	staffToken, _, err := acc.CreateToken(sys, shelfmark.NewToken{User: "bench-reader", Scope: shelfmark.ScopeRead})
	if err != nil {
		return nil, fmt.Errorf("the signed-in reader's token: %w", err)
	}
	staffCaller, err := acc.Authenticate(ctx, staffToken)
	if err != nil {
		return nil, fmt.Errorf("the signed-in reader's token: %w", err)
	}
	rareCheck := uiCheck{anyOf: rareIDs}
	if len(rareIDs) <= 10 {
		rareCheck = uiCheck{contains: rareIDs}
	}
	minLinks := min(10, c.Members)
	kinds := []uiKind{
		UIWork: {name: fmt.Sprintf("work page of a %d-page book", c.Pages), path: "/works/" + string(book),
			check:   uiCheck{contains: []string{uiBookTitle(c.Pages), uiPageFile(1), uiPageFile(min(c.Pages, c.WorkPageSize))}},
			rawWhat: fmt.Sprintf("the work, its first %d children with their metadata and their files (FindResource, ListChildren, ChildFiles)", c.WorkPageSize),
			raw: func(ctx context.Context) error {
				if _, err := repo.FindResource(ctx, book); err != nil {
					return err
				}
				p, err := repo.ListChildren(ctx, book, shelfmark.PageRequest{Limit: c.WorkPageSize, Metadata: true})
				if err != nil {
					return err
				}
				ids := make([]shelfmark.ID, len(p.Items))
				for i, it := range p.Items {
					ids[i] = it.ID
				}
				_, err = repo.ChildFiles(ctx, book, ids)
				return err
			}},
		UICollectionFirst: {name: fmt.Sprintf("collection page 1 of %d members", c.Members), path: "/collections/" + string(coll.ID),
			check:   uiCheck{contains: []string{string(firstID)}, links: minLinks},
			rawWhat: fmt.Sprintf("the collection and its first %d members with their metadata (FindResource, ListMembers)", c.PageSize),
			raw:     listMembers("", firstID)},
		UICollectionDeep: {name: "collection page at 90% depth", path: "/collections/" + string(coll.ID) + "?after=" + url.QueryEscape(string(deep)),
			check:   uiCheck{contains: []string{string(deepID)}, links: minLinks},
			rawWhat: fmt.Sprintf("the collection and %d members at 90%% depth with their metadata (FindResource, ListMembers)", c.PageSize),
			raw:     listMembers(deep, deepID)},
		UISearchCommon: {name: fmt.Sprintf("search page, a word in all %d works", c.Members), path: "/search?q=" + SearchCommonWord,
			check:   uiCheck{links: minLinks},
			rawWhat: "the first page of hits with facets (ReadTx.Search)",
			raw:     search(SearchCommonWord)},
		UISearchRare: {name: fmt.Sprintf("search page, a word in %d works", len(rareIDs)), path: "/search?q=" + rare,
			check:   rareCheck,
			rawWhat: "the first page of hits with facets (ReadTx.Search)",
			raw:     search(rare)},
		UISearchBook: {name: fmt.Sprintf("search page, a word on every page of the %d-page book", c.Pages), path: "/search?q=" + uiBookWord,
			check:   uiCheck{contains: []string{string(book)}},
			rawWhat: "the first page of hits with facets, grouped by work (ReadTx.Search)",
			raw:     search(uiBookWord)},
		UISearchStaff: {name: fmt.Sprintf("search page, a word in all %d works, as a signed-in reader with a role", c.Members), path: "/search?q=" + SearchCommonWord,
			token: staffToken,
			// signed in: the page names her
			check:   uiCheck{links: minLinks, contains: []string{"bench-reader"}},
			rawWhat: "the first page of hits with facets as the signed-in reader (Repository.SearchReader, ReadTx.Search)",
			raw: func(ctx context.Context) error {
				return search(SearchCommonWord)(shelfmark.WithCaller(ctx, staffCaller))
			}},
	}
	for _, k := range kinds {
		if err := k.raw(anon); err != nil {
			return nil, fmt.Errorf("%s: the raw read: %w", k.name, err)
		}
	}

	// serve
	// admission off: the bench measures the server's own time, one
	// anonymous client asking as fast as it is answered
	srvOpts := shttp.Options{Resources: repo, Blobs: blobs, Storage: store, Accounts: acc, Logger: c.Logger, Jobs: repo,
		Admission: admission.Settings{Off: true}}
	srv := shttp.NewServer(srvOpts)
	timed := &serverTimer{next: srv, took: make(chan serverTime, 16)}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	go func() { _ = srv.Serve(ln, timed) }()
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	base := "http://" + ln.Addr().String()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}, Timeout: 2 * time.Minute}
	get := func(path, accept, token string) (status int, ctype string, body []byte, server serverTime, clientTime time.Duration, err error) {
		req, err := http.NewRequestWithContext(ctx, "GET", base+path, nil)
		if err != nil {
			return 0, "", nil, serverTime{}, 0, err
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		req.Header.Set("Accept", accept)
		req.Header.Set("Accept-Language", "en")
		t0 := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			return 0, "", nil, serverTime{}, 0, err
		}
		body, err = io.ReadAll(resp.Body)
		resp.Body.Close()
		clientTime = time.Since(t0)
		if err != nil {
			return 0, "", nil, serverTime{}, 0, err
		}
		select {
		case server = <-timed.took:
		case <-time.After(time.Minute):
			return 0, "", nil, serverTime{}, 0, fmt.Errorf("GET %s: the server did not report its time", path)
		}
		return resp.StatusCode, resp.Header.Get("Content-Type"), body, server, clientTime, nil
	}

	// which pages the server has: a path no route takes is answered by the
	// API's unknown-path handler, in JSON to a client that does not ask for
	// HTML (a page of a resource that exists answers 200 whatever is asked)
	res.Pages = make([]UIPage, len(kinds))
	for i, k := range kinds {
		pg := &res.Pages[i]
		pg.Name, pg.Path, pg.RawWhat = k.name, k.path, k.rawWhat
		status, ctype, body, _, _, err := get(k.path, "*/*", k.token)
		if err != nil {
			return nil, err
		}
		if (status == http.StatusNotFound || status == http.StatusMethodNotAllowed) && !strings.HasPrefix(ctype, "text/html") {
			pg.Unavailable = fmt.Sprintf("not available: GET %s answered %d %s (no such page in this build)", routeOf(k.path), status, ctype)
			continue
		}
		pg.Available = true
		pg.Bytes = len(body)
	}

	// measure: rounds of one request of each available page, each followed
	// by its raw read
	var srvT, cpuT, cliT, rawT [7][]time.Duration
	var rounds []time.Duration // server time of each timed round, all pages
	wall := time.Now()
	totalRounds := c.Warmup + c.Requests
	for round := 0; round < totalRounds; round++ {
		timedRound := round >= c.Warmup
		var roundSrv time.Duration
		for i, k := range kinds {
			pg := &res.Pages[i]
			r0 := time.Now()
			rerr := k.raw(anon)
			rt := time.Since(r0)
			if rerr != nil {
				return nil, fmt.Errorf("%s: the raw read: %w", k.name, rerr)
			}
			if timedRound {
				rawT[i] = append(rawT[i], rt)
			}
			if !pg.Available {
				continue
			}
			status, ctype, body, st, ct, err := get(k.path, browserAccept, k.token)
			if err != nil {
				return nil, err
			}
			if !timedRound {
				continue
			}
			srvT[i], cpuT[i], cliT[i] = append(srvT[i], st.wall), append(cpuT[i], st.cpu), append(cliT[i], ct)
			roundSrv += st.wall
			pg.Requests++
			pg.Bytes = len(body)
			if why := k.check.judge(status, ctype, body); why != "" {
				pg.Errors++
				if pg.FirstError == "" {
					pg.FirstError = why
				}
			}
		}
		if timedRound {
			rounds = append(rounds, roundSrv)
		}
		progress("measure pages", round+1, totalRounds)
	}
	wallSecs := time.Since(wall).Seconds()

	// the report: one step per page
	var all []time.Duration
	var srvSum, rawSum time.Duration
	var names []string
	for i := range kinds {
		pg := &res.Pages[i]
		name := pg.Name
		pg.Raw = *percentiles(append([]time.Duration(nil), rawT[i]...))
		if !pg.Available {
			names = append(names, name+" ("+pg.Unavailable+")")
			st := Step{}
			if r := total(rawT[i]); r > 0 {
				st.RawLimit = float64(len(rawT[i])) / r.Seconds()
			}
			rep.Steps = append(rep.Steps, st)
			continue
		}
		names = append(names, name)
		all = append(all, srvT[i]...)
		s, r := total(srvT[i]), total(rawT[i])
		srvSum, rawSum = srvSum+s, rawSum+r
		pg.Server = *percentiles(append([]time.Duration(nil), srvT[i]...))
		pg.CPU = *percentiles(append([]time.Duration(nil), cpuT[i]...))
		pg.Client = *percentiles(append([]time.Duration(nil), cliT[i]...))
		lat := pg.Server
		st := Step{Items: int64(pg.Requests), Seconds: s.Seconds(), LatencyMS: &lat, Errors: pg.Errors,
			Flatness: flatnessOf(srvT[i])}
		if s > 0 {
			st.RatePerS = float64(pg.Requests) / s.Seconds()
		}
		if r > 0 {
			st.RawLimit = float64(pg.Requests) / r.Seconds()
			st.Fraction = st.RatePerS / st.RawLimit
		}
		rep.Steps = append(rep.Steps, st)
		rep.Errors += pg.Errors
	}
	rep.Params["steps"] = names
	rep.Params["pages_measured"] = res.Pages
	rep.Params["wall_seconds"] = wallSecs
	rep.Items = int64(len(all))
	rep.Seconds = srvSum.Seconds()
	if srvSum > 0 {
		rep.RatePerS = float64(rep.Items) / srvSum.Seconds()
	}
	if rawSum > 0 {
		rep.RawLimitPerS = float64(rep.Items) / rawSum.Seconds()
		rep.FractionLimit = rep.RatePerS / rep.RawLimitPerS
	}
	rep.RawLimitWhat = "the same reads straight on the engine, in process, as the anonymous reader, without HTTP or rendering " +
		"(per page: the work, its first children and their files; the collection and a page of its members at the same depth; the first page of hits with facets); " +
		"rates here are pages per second of server time (one request at a time), and the raw limit's reads per second of their own time"
	rep.LatencyMS = *percentiles(all)
	rep.Flatness = flatnessOf(rounds)
	anonS, staffS := res.Pages[UISearchCommon], res.Pages[UISearchStaff]
	if anonS.Available && staffS.Available && anonS.Server.P50 > 0 && anonS.Server.P99 > 0 {
		res.StaffOverAnonymousP50, res.StaffOverAnonymousP99 = staffS.Server.P50/anonS.Server.P50, staffS.Server.P99/anonS.Server.P99
		rep.Params["staff_over_anonymous_p50"], rep.Params["staff_over_anonymous_p99"] = res.StaffOverAnonymousP50, res.StaffOverAnonymousP99
	}
	if c.UsageSeconds > 0 {
		progress("the cost of counting uses", 0, 1)
		if res.Usage, err = uiUsageCost(ctx, repo, srvOpts, "/works/"+string(book), viewIDs, time.Duration(c.UsageSeconds)*time.Second, 2*time.Second); err != nil {
			return nil, fmt.Errorf("the cost of counting uses: %w", err)
		}
		rep.Params["usage"] = res.Usage
		rep.Errors += res.Usage.Errors
		progress("the cost of counting uses", 1, 1)
	}
	first, deepPg := res.Pages[UICollectionFirst], res.Pages[UICollectionDeep]
	if first.Available && deepPg.Available && first.Server.P50 > 0 && first.Server.P99 > 0 {
		res.DeepOverFirstP50, res.DeepOverFirstP99 = deepPg.Server.P50/first.Server.P50, deepPg.Server.P99/first.Server.P99
		rep.Params["deep_over_first_p50"], rep.Params["deep_over_first_p99"] = res.DeepOverFirstP50, res.DeepOverFirstP99
		if first.CPU.P50 > 0 {
			rep.Params["deep_over_first_cpu_p50"] = deepPg.CPU.P50 / first.CPU.P50
		}
	}
	return res, nil
}

// uiBook stores the scenario's book: a work with pages file sets of one
// small file each (the bytes are in the content store), in order, and
// returns it and its pages.
func uiBook(ctx context.Context, repo *shelfmark.Repository, blobs shelfmark.BlobStore, c UIConfig, progress func(string, int, int)) (shelfmark.ID, []shelfmark.ID, error) {
	md := patentStatements(c.Seed, 0, 54)
	md[0] = shelfmark.Statement{Predicate: shelfmark.NSDC + "title", Object: shelfmark.NewLangLiteral(uiBookTitle(c.Pages), "en")}
	md = slices.DeleteFunc(md, func(s shelfmark.Statement) bool { return s.Predicate == shelfmark.NSDC+"type" })
	md = append(md, shelfmark.Statement{Predicate: shelfmark.NSDC + "type", Object: shelfmark.NewLiteral("Book")})
	book, err := repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindWork, Metadata: md})
	if err != nil {
		return "", nil, fmt.Errorf("book: %w", err)
	}
	const per = 100
	order := make([]shelfmark.ID, 0, c.Pages)
	for lo := 0; lo < c.Pages; lo += per {
		hi := min(lo+per, c.Pages)
		ids, err := repo.MintIDs(ctx, 2*(hi-lo))
		if err != nil {
			return "", nil, err
		}
		var nrs []*shelfmark.NewResource
		for i := lo; i < hi; i++ {
			b, err := blobs.Put(ctx, bytes.NewReader(pseudoRandom(c.Seed, i, 2048)), shelfmark.PutOptions{Deferred: true})
			if err != nil {
				return "", nil, fmt.Errorf("page %d: %w", i+1, err)
			}
			fs, f := ids[2*(i-lo)], ids[2*(i-lo)+1]
			nrs = append(nrs,
				&shelfmark.NewResource{ID: fs, Kind: shelfmark.KindFileSet, Parent: book.ID, Metadata: []shelfmark.Statement{
					{Predicate: shelfmark.NSDC + "title", Object: shelfmark.NewLiteral(fmt.Sprintf("Page %d", i+1))}}},
				&shelfmark.NewResource{ID: f, Kind: shelfmark.KindFile, Parent: fs, File: &shelfmark.File{Name: uiPageFile(i + 1),
					MediaType: "image/tiff", Size: b.Size, SHA256: b.Digests[shelfmark.SHA256], Use: "original"}})
			order = append(order, fs)
		}
		if err := blobs.Sync(ctx); err != nil {
			return "", nil, err
		}
		if _, errs := repo.CreateResources(ctx, nrs); errors.Join(errs...) != nil {
			return "", nil, fmt.Errorf("pages %d–%d: %w", lo+1, hi, errors.Join(errs...))
		}
		progress("store the book's pages", hi, c.Pages)
	}
	if _, err := repo.SetOrder(ctx, book.ID, order, 0); err != nil {
		return "", nil, fmt.Errorf("order the book's pages: %w", err)
	}
	return book.ID, order, nil
}

// judge returns why an answer is wrong, or "".
func (c uiCheck) judge(status int, ctype string, body []byte) string {
	if status != http.StatusOK {
		return fmt.Sprintf("status %d", status)
	}
	if !strings.HasPrefix(ctype, "text/html") {
		return "Content-Type " + ctype
	}
	for _, s := range c.contains {
		if !bytes.Contains(body, []byte(s)) {
			return fmt.Sprintf("the page does not hold %q", s)
		}
	}
	if len(c.anyOf) > 0 && !slices.ContainsFunc(c.anyOf, func(s string) bool { return bytes.Contains(body, []byte(s)) }) {
		return fmt.Sprintf("the page holds none of %q", c.anyOf)
	}
	if c.links > 0 {
		seen := map[string]bool{}
		for _, m := range uiWorkLink.FindAll(body, -1) {
			seen[string(m)] = true
		}
		if len(seen) < c.links {
			return fmt.Sprintf("the page links to %d works, want at least %d", len(seen), c.links)
		}
	}
	return ""
}

// serverTimer times each request its handler serves and reports the time
// on took once the handler has returned.
type serverTimer struct {
	next http.Handler
	took chan serverTime
}

// serverTime is the time a handler took, and the CPU time of the process
// meanwhile.
type serverTime struct{ wall, cpu time.Duration }

func (t *serverTimer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	cpu0 := processCPU()
	t0 := time.Now()
	t.next.ServeHTTP(w, r)
	st := serverTime{wall: time.Since(t0), cpu: processCPU() - cpu0}
	select {
	case t.took <- st:
	default: // nobody waits for it
	}
}

// routeOf returns the route a path is for, without its id and query.
func routeOf(path string) string {
	path, _, _ = strings.Cut(path, "?")
	if i := strings.LastIndexByte(path, '/'); i > 0 {
		return path[:i+1] + "{id}"
	}
	return path
}

// total sums durations.
func total(ds []time.Duration) (t time.Duration) {
	for _, d := range ds {
		t += d
	}
	return t
}

// flatnessOf is the rate in the last tenth of a sequence of request times
// over the rate in its first tenth (the time of the first tenth over that
// of the last).
func flatnessOf(ds []time.Duration) float64 {
	k := len(ds) / 10
	if k == 0 {
		return 0
	}
	first, last := total(ds[:k]), total(ds[len(ds)-k:])
	if last <= 0 {
		return 0
	}
	return first.Seconds() / last.Seconds()
}
