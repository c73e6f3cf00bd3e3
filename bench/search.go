package bench

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"syscall"
	"time"

	"github.com/shelfmark/shelfmark"
)

// SearchConfig configures the search scenario: Works works whose titles
// and descriptions hold one word common to all of them, a word of medium
// frequency (in about 1 work in MediumEvery) and rare words (in about
// RareEvery works each), indexed by the real SearchIndexer; then the
// first page (with facets) of Queries queries of each kind, and pages deep
// into the common word's results.
type SearchConfig struct {
	Works       int // default 1,000,000
	Batch       int // works per CreateResources call (default 500)
	Collections int // collections the works are spread over, for the collection facet (default 10)
	// PrivateEvery makes every n-th work private (default 20), so the
	// visibility join has something to drop.
	PrivateEvery int
	MediumEvery  int // default 100
	RareEvery    int // default 10
	Queries      int // queries of each kind (default 200)
	Limit        int // hits per page (default 20)
	Seed         uint64
	// Progress, when set, is told what is happening and how far it is.
	Progress func(stage string, done, total int)
}

// SearchCommonWord is the word in every work of the search scenario.
const SearchCommonWord = "ledger"

// SearchKind is the latency of one kind of query of the search scenario.
type SearchKind struct {
	Name    string  `json:"name"`
	Queries int     `json:"queries"`
	Latency Latency `json:"latency_ms"`
	// CPU is the CPU time this process spent per query (user and system):
	// with SQLite, the database's work too, and less sensitive than
	// Latency to other work on the machine; with PostgreSQL, the client's
	// side only.
	CPU Latency `json:"cpu_ms"`
	// Total is the total the first page reported for the last query of the
	// kind, and Estimated whether it was an estimate.
	Total     int64 `json:"total"`
	Estimated bool  `json:"estimated"`
	// Matches is the true number of public matches of that query.
	Matches int64 `json:"matches"`
}

// SearchResult holds the search scenario's own figures.
type SearchResult struct {
	Report *Report
	// FillPerS and IndexPerS are the rates of storing the works and of
	// indexing them.
	FillPerS, IndexPerS float64
	// Kinds: common word (first page with facets), medium word, rare
	// word, and a page deep into the common word's results (no facets).
	Kinds []SearchKind
}

// searchWords returns the title and description of work i.
func searchWords(seed uint64, i int, c SearchConfig) (title, body string) {
	r := rand.New(rand.NewPCG(seed, uint64(i)))
	rare := func() string { return fmt.Sprintf("r%dx", r.IntN(rarePool(c))) }
	medium := fmt.Sprintf("m%dx", r.IntN(c.MediumEvery))
	title = fmt.Sprintf("The %s of %s and %s, volume %d", SearchCommonWord, rare(), medium, i)
	body = fmt.Sprintf("Accounts kept in a %s: %s, %s, %s. Entries for the year %d.", SearchCommonWord, rare(), rare(), medium, 1700+r.IntN(300))
	return title, body
}

// rarePool is how many rare words there are: each work draws three, so
// that each is in about RareEvery works.
func rarePool(c SearchConfig) int { return max(1, 3*c.Works/c.RareEvery) }

// RunSearch runs the search scenario against a repository and its
// storage, in process: the queries go through Storage.View and
// ReadTx.Search, as GET /api/v1/search does.
func RunSearch(ctx context.Context, repo *shelfmark.Repository, store shelfmark.Storage, c SearchConfig) (*SearchResult, error) {
	if c.Works <= 0 {
		c.Works = 1000000
	}
	if c.Batch <= 0 {
		c.Batch = 500
	}
	if c.Collections <= 0 {
		c.Collections = 10
	}
	if c.PrivateEvery <= 0 {
		c.PrivateEvery = 20
	}
	if c.MediumEvery <= 0 {
		c.MediumEvery = 100
	}
	if c.RareEvery <= 0 {
		c.RareEvery = 10
	}
	if c.Queries <= 0 {
		c.Queries = 200
	}
	if c.Limit <= 0 {
		c.Limit = 20
	}
	progress := c.Progress
	if progress == nil {
		progress = func(string, int, int) {}
	}
	res := &SearchResult{}
	rep := &Report{Scenario: "search", Backend: store.Backend(), Started: time.Now().UTC(),
		Params: map[string]any{"works": c.Works, "collections": c.Collections, "private_every": c.PrivateEvery,
			"medium_every": c.MediumEvery, "rare_every": c.RareEvery, "queries": c.Queries, "limit": c.Limit,
			"common_word": SearchCommonWord, "window": shelfmark.SearchWindow}}
	res.Report = rep

	// fill
	var colls []shelfmark.ID
	for i := 0; i < c.Collections; i++ {
		r, err := repo.CreateResource(ctx, &shelfmark.NewResource{Kind: shelfmark.KindCollection,
			Metadata: []shelfmark.Statement{{Predicate: shelfmark.NSDC + "title", Object: shelfmark.NewLiteral(fmt.Sprintf("Fonds %d", i+1))}}})
		if err != nil {
			return nil, err
		}
		colls = append(colls, r.ID)
	}
	start := time.Now()
	nrs := make([]*shelfmark.NewResource, 0, c.Batch)
	for done := 0; done < c.Works; {
		n := min(c.Batch, c.Works-done)
		nrs = nrs[:0]
		for i := done; i < done+n; i++ {
			title, body := searchWords(c.Seed, i, c)
			nr := &shelfmark.NewResource{Kind: shelfmark.KindWork, MemberOf: []shelfmark.ID{colls[i%len(colls)]},
				Metadata: []shelfmark.Statement{
					{Predicate: shelfmark.NSDC + "title", Object: shelfmark.NewLiteral(title)},
					{Predicate: shelfmark.NSDC + "description", Object: shelfmark.NewLiteral(body)},
				}}
			if i%c.PrivateEvery == c.PrivateEvery-1 {
				nr.Visibility = shelfmark.Private
			}
			nrs = append(nrs, nr)
		}
		if _, errs := repo.CreateResources(ctx, nrs); errors.Join(errs...) != nil {
			return nil, fmt.Errorf("works %d–%d: %w", done+1, done+n, errors.Join(errs...))
		}
		done += n
		progress("store works", done, c.Works)
	}
	res.FillPerS = float64(c.Works) / time.Since(start).Seconds()

	// index
	start = time.Now()
	indexer := shelfmark.NewSearchIndexer(store, shelfmark.IndexerOptions{})
	for done := 0; ; {
		n, err := indexer.Step(ctx)
		if err != nil {
			return nil, fmt.Errorf("index: %w", err)
		}
		if n == 0 {
			break
		}
		done += n
		progress("index", min(done, c.Works+c.Collections), c.Works+c.Collections)
	}
	res.IndexPerS = float64(c.Works) / time.Since(start).Seconds()
	rep.Params["fill_per_s"], rep.Params["index_per_s"] = res.FillPerS, res.IndexPerS

	// the true number of public matches of a word: how many works hold it
	public := func(match func(title, body string) bool) int64 {
		var n int64
		for i := 0; i < c.Works; i++ {
			if i%c.PrivateEvery == c.PrivateEvery-1 {
				continue
			}
			if t, b := searchWords(c.Seed, i, c); match(t, b) {
				n++
			}
		}
		return n
	}

	var cpu time.Duration // of the last search
	search := func(q shelfmark.SearchQuery) (*shelfmark.SearchResult, time.Duration, error) {
		q.Now = time.Now()
		cpu0 := processCPU()
		begin := time.Now()
		var r *shelfmark.SearchResult
		err := store.View(ctx, func(tx shelfmark.ReadTx) error {
			var err error
			r, err = tx.Search(ctx, q)
			return err
		})
		d := time.Since(begin)
		cpu = processCPU() - cpu0
		return r, d, err
	}
	rng := rand.New(rand.NewPCG(c.Seed, 1<<40))
	kinds := []struct {
		name  string
		words func(i int) string
		deep  bool
	}{
		{"common word, first page with facets", func(int) string { return SearchCommonWord }, false},
		{"medium word (1 work in " + fmt.Sprint(c.MediumEvery) + "), first page with facets", func(int) string { return fmt.Sprintf("m%dx", rng.IntN(c.MediumEvery)) }, false},
		{"rare word (about " + fmt.Sprint(c.RareEvery) + " works), first page with facets", func(int) string {
			return fmt.Sprintf("r%dx", rng.IntN(rarePool(c)))
		}, false},
		{"common word, a page deep in the results (no facets)", func(int) string { return SearchCommonWord }, true},
	}
	// a cursor deep in the common word's results: walk window by window
	// (each window is SearchWindow hits) to about the middle
	var deep *shelfmark.SearchCursor
	{
		q := shelfmark.SearchQuery{Text: SearchCommonWord, Limit: shelfmark.MaxSearchLimit}
		target := c.Works / 2 / shelfmark.MaxSearchLimit
		for i := 0; i < target; i++ {
			r, _, err := search(q)
			if err != nil {
				return nil, err
			}
			if r.Next == nil {
				break
			}
			deep, q.After = r.Next, r.Next
			progress("walk to a deep page", i+1, target)
		}
	}
	rep.Params["deep_page_hits_before"] = c.Works / 2 / shelfmark.MaxSearchLimit * shelfmark.MaxSearchLimit
	var all []time.Duration
	runStart := time.Now()
	for _, k := range kinds {
		var ds, cpus []time.Duration
		var last *shelfmark.SearchResult
		var word string
		kstart := time.Now()
		for i := 0; i < c.Queries; i++ {
			word = k.words(i)
			q := shelfmark.SearchQuery{Text: word, Limit: c.Limit, Facets: !k.deep}
			if k.deep {
				q.After = deep
			}
			r, d, err := search(q)
			if err != nil {
				rep.Errors++
				return res, fmt.Errorf("search %q: %w", word, err)
			}
			if len(r.Hits) == 0 && (k.deep || word == SearchCommonWord) {
				rep.Errors++
			}
			ds, cpus, last = append(ds, d), append(cpus, cpu), r
			progress(k.name, i+1, c.Queries)
		}
		secs := time.Since(kstart).Seconds()
		all = append(all, ds...)
		lat := *percentiles(append([]time.Duration(nil), ds...))
		sk := SearchKind{Name: k.name, Queries: len(ds), Latency: lat, CPU: *percentiles(cpus), Total: last.Total, Estimated: last.Estimated}
		if !k.deep {
			sk.Matches = public(func(title, body string) bool { return hasWord(title, word) || hasWord(body, word) })
		}
		res.Kinds = append(res.Kinds, sk)
		rep.Steps = append(rep.Steps, Step{Items: int64(len(ds)), Seconds: secs, RatePerS: float64(len(ds)) / secs, LatencyMS: &lat})
	}
	rep.Items = int64(len(all))
	rep.Seconds = time.Since(runStart).Seconds()
	rep.RatePerS = float64(rep.Items) / rep.Seconds
	rep.LatencyMS = res.Kinds[0].Latency // the headline: a common word's first page with facets
	rep.Flatness = flatness(rep.Steps[:1])
	// the raw limit: the same index answering its cheapest query (a rare
	// word's first page with facets); the common word's rate is stated as a
	// fraction of it
	rep.RawLimitPerS = rep.Steps[2].RatePerS
	rep.RawLimitWhat = "first pages with facets of rare words (about " + fmt.Sprint(c.RareEvery) + " matches each) on the same index"
	if rep.RawLimitPerS > 0 {
		rep.FractionLimit = rep.Steps[0].RatePerS / rep.RawLimitPerS
	}
	names := make([]string, len(res.Kinds))
	for i, k := range res.Kinds {
		names[i] = k.Name
	}
	rep.Params["steps"] = names
	rep.Params["kinds"] = res.Kinds
	return res, nil
}

// processCPU returns the CPU time (user and system) this process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// hasWord reports whether text holds word as a whole word (the scenario's
// words are letters and digits between spaces and punctuation).
func hasWord(text, word string) bool {
	for i := 0; ; {
		j := strings.Index(text[i:], word)
		if j < 0 {
			return false
		}
		j += i
		before := j == 0 || !isAlnum(text[j-1])
		after := j+len(word) == len(text) || !isAlnum(text[j+len(word)])
		if before && after {
			return true
		}
		i = j + 1
	}
}

func isAlnum(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9'
}
