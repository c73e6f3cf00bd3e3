package api

import (
	"net/http"
	"strings"
	"time"

	"github.com/shelfmark/shelfmark"
	"github.com/shelfmark/shelfmark/http/kit"
)

// This file serves the usage reports in the shape of COUNTER Release
// 5.1's reports as SUSHI sends them (Report_Header, Report_Items with
// their Performance by month and metric): the repository's use
// (administrators) or one item's (who may read it).

// UsageReportJSON is a usage report as COUNTER's SUSHI JSON shapes it.
type UsageReportJSON struct {
	ReportHeader UsageHeaderJSON `json:"Report_Header"`
	ReportItems  []UsageItemJSON `json:"Report_Items"`
}

// UsageHeaderJSON is a report's header.
type UsageHeaderJSON struct {
	ReportName       string            `json:"Report_Name"`
	ReportID         string            `json:"Report_ID"`
	Release          string            `json:"Release"`
	InstitutionName  string            `json:"Institution_Name"`
	Created          string            `json:"Created"`
	CreatedBy        string            `json:"Created_By"`
	ReportFilters    map[string]string `json:"Report_Filters"`
	ReportAttributes map[string]string `json:"Report_Attributes"`
}

// UsageItemJSON is one item of a report (a work, a collection, or the
// whole repository as the platform).
type UsageItemJSON struct {
	Item        string            `json:"Item"`
	ItemID      []UsageIDJSON     `json:"Item_ID"`
	Platform    string            `json:"Platform"`
	DataType    string            `json:"Data_Type"`
	Performance []UsagePeriodJSON `json:"Performance"`
}

// UsageIDJSON names an item.
type UsageIDJSON struct {
	Type  string `json:"Type"`
	Value string `json:"Value"`
}

// UsagePeriodJSON is one month's counts of an item.
type UsagePeriodJSON struct {
	Period   UsageMonthJSON      `json:"Period"`
	Instance []UsageInstanceJSON `json:"Instance"`
}

// UsageMonthJSON is a month: its first and last day.
type UsageMonthJSON struct {
	BeginDate string `json:"Begin_Date"`
	EndDate   string `json:"End_Date"`
}

// UsageInstanceJSON is one metric's count.
type UsageInstanceJSON struct {
	MetricType string `json:"Metric_Type"`
	Count      int64  `json:"Count"`
}

// usage handles GET /api/v1/usage?begin_date=YYYY-MM&end_date=YYYY-MM&item_id=:
// the repository's use month by month (an administrator's), or the item's
// (a work or collection the caller may read). Months without use are
// left out, as COUNTER's reports do.
func (s *Handler) usage(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	from, err := shelfmark.ParseUsageMonth("begin_date", q.Get("begin_date"))
	if err != nil {
		return err
	}
	to, err := shelfmark.ParseUsageMonth("end_date", q.Get("end_date"))
	if err != nil {
		return err
	}
	item := shelfmark.ID(strings.TrimSpace(q.Get("item_id")))
	if item != "" {
		if err := item.Check(); err != nil {
			return err
		}
	}
	rep, err := s.deps.Resources.UsageReport(r.Context(), item, from, to)
	if err != nil {
		return err
	}
	name, id := "Shelfmark", "platform"
	if item != "" {
		res, err := s.deps.Resources.FindResource(r.Context(), item)
		if err != nil {
			return err
		}
		name, id = string(item), "shelfmark:"+string(item)
		for _, st := range res.Metadata {
			if st.Predicate == shelfmark.NSDC+"title" || st.Predicate == shelfmark.NSDCTerms+"title" {
				name = st.Object.Value
				break
			}
		}
	}
	out := UsageReportJSON{ReportHeader: UsageHeaderJSON{ReportName: "Item Report", ReportID: "IR", Release: "5.1",
		Created: s.deps.Now().UTC().Format(time.RFC3339), CreatedBy: "Shelfmark " + shelfmark.Version,
		ReportFilters:    map[string]string{"Begin_Date": shelfmark.UsageMonthStart(from).Format(time.DateOnly), "End_Date": shelfmark.UsageMonthStart(to).AddDate(0, 1, -1).Format(time.DateOnly)},
		ReportAttributes: map[string]string{"Attributes_To_Show": "Data_Type"}}}
	if item == "" {
		out.ReportHeader.ReportName, out.ReportHeader.ReportID = "Platform Report", "PR"
	}
	it := UsageItemJSON{Item: name, ItemID: []UsageIDJSON{{Type: "Proprietary", Value: id}}, Platform: "Shelfmark", DataType: "Repository_Item"}
	for _, m := range rep.Months {
		var inst []UsageInstanceJSON
		for _, c := range []struct {
			metric shelfmark.UsageMetric
			n      int64
		}{{shelfmark.TotalInvestigations, m.Investigations}, {shelfmark.UniqueInvestigations, m.UniqueInvestigations},
			{shelfmark.TotalRequests, m.Requests}, {shelfmark.UniqueRequests, m.UniqueRequests}} {
			if c.n > 0 {
				inst = append(inst, UsageInstanceJSON{MetricType: c.metric.String(), Count: c.n})
			}
		}
		if len(inst) == 0 {
			continue
		}
		start := shelfmark.UsageMonthStart(m.Month)
		it.Performance = append(it.Performance, UsagePeriodJSON{Period: UsageMonthJSON{BeginDate: start.Format(time.DateOnly),
			EndDate: start.AddDate(0, 1, -1).Format(time.DateOnly)}, Instance: inst})
	}
	out.ReportItems = []UsageItemJSON{it}
	return kit.WriteJSON(w, http.StatusOK, out)
}
