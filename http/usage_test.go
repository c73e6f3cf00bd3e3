package http

// Tests of the counting of uses: a reader's look at a work's page and
// the file they take are counted once each (a second look within 30
// seconds is a double click), a robot's look is not counted, and the
// counts show on the work's page, the collection's, the administrators'
// report, its CSV and the API's COUNTER report.

import (
	"context"
	"encoding/json"
	"html"
	"net/http"
	"strings"
	"testing"

	"github.com/shelfmark/shelfmark"
)

func TestUsageCounted(t *testing.T) {
	onBackends(t, func(t *testing.T, backend string) {
		e := newPolicyEnv(t, backend, Options{})
		counter, err := e.repo.NewUsageCounter()
		if err != nil {
			t.Fatal(err)
		}
		e.reconfigure(func(o *Options) { o.Usage = counter })
		ctx := context.Background()
		coll := e.createAll(ctx, []*shelfmark.NewResource{{Kind: shelfmark.KindCollection, Metadata: titled("Charts")}})[0]
		work := e.createAll(ctx, []*shelfmark.NewResource{{Kind: shelfmark.KindWork, MemberOf: []shelfmark.ID{coll.ID}, Metadata: titled("Harbour chart")}})[0]
		fs := e.createAll(ctx, []*shelfmark.NewResource{{Kind: shelfmark.KindFileSet, Parent: work.ID}})[0]
		file := e.createAll(ctx, []*shelfmark.NewResource{{Kind: shelfmark.KindFile, Parent: fs.ID, File: e.putBytes("chart.txt", "text/plain", []byte("a harbour"))}})[0]

		person := "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"
		fetch := func(path, ua string, want int) {
			t.Helper()
			req := e.request("GET", path, nil)
			req.Header.Set("User-Agent", ua)
			req.Header.Set("Accept", "text/html")
			res, err := e.ts.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != want {
				t.Fatalf("GET %s as %s: %d, want %d", path, ua, res.StatusCode, want)
			}
		}
		fetch("/works/"+string(work.ID), person, 200)
		fetch("/works/"+string(work.ID), person, 200) // a double click
		fetch("/works/"+string(work.ID), "Googlebot/2.1 (+http://www.google.com/bot.html)", 200)
		fetch("/api/v1/resources/"+string(file.ID)+"/content", person, 200)
		req := e.request("HEAD", "/works/"+string(work.ID), nil)
		req.Header.Set("User-Agent", person)
		if res, err := e.ts.Client().Do(req); err == nil {
			res.Body.Close()
		}
		fetch("/works/nosuchwork", person, 404)
		if err := counter.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		tot, err := e.repo.UsageTotalsOf(ctx, work.ID)
		if err != nil {
			t.Fatal(err)
		}
		if tot.Investigations != 2 || tot.UniqueInvestigations != 1 || tot.Requests != 1 || tot.UniqueRequests != 1 {
			t.Errorf("the work's totals: %+v, want 2 looks (1 unique) and 1 download", tot)
		}

		b := newVisitor(t, e.testEnv)
		if p := b.get("/works/" + string(work.ID)); !strings.Contains(p.Body, "Viewed 2 times (1 sessions)") || !strings.Contains(p.Body, "downloaded 1 times (1 sessions)") {
			t.Errorf("the work's page does not show its use: %.300s", p.Body[strings.Index(p.Body, "<main"):])
		}
		if p := b.get("/collections/" + string(coll.ID)); !strings.Contains(p.Body, "Viewed 2 times") {
			t.Errorf("the collection's page does not show its works' use")
		}
		// another reader's look counts (a session of its own); the
		// visitor's above did not (Go's client is on the robots list)
		fetch("/works/"+string(work.ID), "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0", 200)
		if err := counter.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		admin := newVisitor(t, e.testEnv)
		admin.signIn("admin", adminPassword)
		month := e.clock.now().UTC().Format("2006-01")
		p := admin.get("/admin/usage")
		body := html.UnescapeString(p.Body)
		if p.Status != 200 || !strings.Contains(body, "<rect") || !strings.Contains(body, "Harbour chart</a> — 3") {
			t.Errorf("the report: %d %.3000s", p.Status, body)
		}
		p = admin.get("/admin/usage.csv?from=" + month + "&to=" + month)
		if want := month + ",3,2,1,1"; !strings.Contains(p.Body, want) {
			t.Errorf("the CSV: %q, want a line %q", p.Body, want)
		}
		if p := admin.get("/admin/usage?from=2026-13"); p.Status != 400 {
			t.Errorf("a month that is none: %d", p.Status)
		}
		r := e.do("GET", "/api/v1/usage?begin_date="+month+"&end_date="+month+"&item_id="+string(work.ID), nil)
		r.want(t, http.StatusOK)
		var rep struct {
			Report_Header struct{ Report_ID string }
			Report_Items  []struct {
				Item        string
				Performance []struct {
					Instance []struct {
						Metric_Type string
						Count       int64
					}
				}
			}
		}
		if err := json.Unmarshal(r.Body, &rep); err != nil {
			t.Fatal(err)
		}
		if rep.Report_Header.Report_ID != "IR" || len(rep.Report_Items) != 1 || rep.Report_Items[0].Item != "Harbour chart" ||
			len(rep.Report_Items[0].Performance) != 1 || len(rep.Report_Items[0].Performance[0].Instance) != 4 ||
			rep.Report_Items[0].Performance[0].Instance[0].Metric_Type != "Total_Item_Investigations" || rep.Report_Items[0].Performance[0].Instance[0].Count != 3 {
			t.Errorf("the item report: %s", r.Body)
		}
		e.do("GET", "/api/v1/usage?begin_date=soon&end_date="+month, nil).want(t, http.StatusBadRequest)
	})
}
