// Package promtext names the Prometheus series of a Guard's Stats and
// writes them in Prometheus's text exposition format (version 0.0.4),
// without a dependency.
//
// It is the one list of the series: the module robotsprom builds its
// prometheus.Collector from Metrics, and the examples serve Write on
// /metrics, so that the main module does not require client_golang. The
// robotsprom module's tests check that Write's output is byte for byte
// what client_golang's registry writes for the same Stats.
package promtext

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	robotsmw "github.com/robotsmw/robotsmw/middleware"
)

// A Kind is the type of a metric family.
type Kind uint8

// The kinds of Prometheus metric families used here.
const (
	Counter Kind = iota
	Gauge
	Histogram
)

// String returns the kind as the text format's TYPE line writes it.
func (k Kind) String() string {
	switch k {
	case Counter:
		return "counter"
	case Gauge:
		return "gauge"
	}
	return "histogram"
}

// A Metric is one metric family and its values in one snapshot.
type Metric struct {
	Name, Help string
	Kind       Kind
	// Label is the name of the family's one label, or "" for none.
	Label string
	// Samples are the values of a counter or gauge, one per label value,
	// ordered by label value.
	Samples []Sample
	// Waits is the value of the histogram.
	Waits robotsmw.WaitStats
}

// A Sample is one series of a family: its label's value ("" without a
// label) and its value.
type Sample struct {
	LabelValue string
	Value      float64
}

// Metrics returns the families of s in order of name. Metrics of a zero
// Stats lists the families for descriptions.
func Metrics(s robotsmw.Stats) []Metric {
	t, r := s.Total, s.Robots
	one := func(v int64) []Sample { return []Sample{{Value: float64(v)}} }
	ms := []Metric{
		{Name: "robotsmw_requests_sent_total", Kind: Counter, Samples: one(t.Sent),
			Help: "Requests sent to hosts: pages, retries, redirect hops, robots.txt and sitemaps."},
		{Name: "robotsmw_pages_fetched_total", Kind: Counter, Samples: one(t.Pages),
			Help: "Pages fetched: colly requests whose final response was read."},
		{Name: "robotsmw_final_outcomes_total", Kind: Counter, Label: "outcome",
			Help: "Requests by final outcome, each counted once: fetched (its final response read; equals robotsmw_pages_fetched_total), blocked (robots.txt, Crawl-delay), gave_up (final failures).",
			Samples: []Sample{ // by label value
				{"blocked", float64(t.Blocked)},
				{"fetched", float64(t.Pages)},
				{"gave_up", float64(t.GaveUp)},
			}},
		{Name: "robotsmw_attempt_outcomes_total", Kind: Counter, Label: "outcome",
			Help: "Attempts that were not the end of their request: deferred (put off past MaxWait, not sent), retried (sent, failed, and sent again).",
			Samples: []Sample{
				{"deferred", float64(t.Deferred)},
				{"retried", float64(t.Retried)},
			}},
		{Name: "robotsmw_links_not_followed_total", Kind: Counter, Samples: one(t.NotFollowed),
			Help: "Links FollowLinks did not visit: nofollow pages and rel=nofollow links."},
		{Name: "robotsmw_robots_fetches_total", Kind: Counter, Label: "result",
			Help: "robots.txt fetches of the Guard's robots.txt cache (its own, or Guard.Cache) by result: parsed (2xx), allow_all (4xx, too many redirects), unreachable_429, unreachable_5xx, unreachable_timeout, unreachable_network.",
			Samples: []Sample{
				{"allow_all", float64(r.AllowAll)},
				{"parsed", float64(r.Parsed)},
				{"unreachable_429", float64(r.Status429)},
				{"unreachable_5xx", float64(r.Status5xx)},
				{"unreachable_network", float64(r.Network)},
				{"unreachable_timeout", float64(r.Timeout)},
			}},
		{Name: "robotsmw_robots_unreachable_origins", Kind: Gauge, Samples: one(int64(r.Unreachable)),
			Help: "Origins whose last robots.txt fetch found it unreachable."},
		{Name: "robotsmw_backoffs_total", Kind: Counter, Samples: one(t.Backoffs),
			Help: "Pauses of hosts that 429, 5xx or network errors started or lengthened."},
		{Name: "robotsmw_hosts_evicted_total", Kind: Counter, Samples: one(s.Evicted),
			Help: "Host states forgotten after they went quiet."},
		{Name: "robotsmw_hosts", Kind: Gauge, Samples: one(int64(s.Hosts)),
			Help: "Hosts whose state the Guard keeps."},
		{Name: "robotsmw_hosts_paused", Kind: Gauge, Samples: one(int64(s.PausedHosts)),
			Help: "Hosts paused now after 429, 5xx or network errors."},
		{Name: "robotsmw_requests_in_flight", Kind: Gauge, Samples: one(int64(s.InFlight)),
			Help: "Colly requests sent whose response has not arrived."},
		{Name: "robotsmw_requests_waiting", Kind: Gauge, Samples: one(int64(s.Waiting)),
			Help: "Deferred requests waiting in the Guard to be sent again."},
		{Name: "robotsmw_wait_seconds", Kind: Histogram, Waits: s.Waits,
			Help: "How long requests waited inside colly's callbacks for robots.txt and their host before they were sent."},
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].Name < ms[j].Name })
	return ms
}

// Write writes the metrics of s to w in the text exposition format
// (Content-Type: text/plain; version=0.0.4; charset=utf-8).
func Write(w io.Writer, s robotsmw.Stats) error {
	b := bufio.NewWriter(w)
	for _, m := range Metrics(s) {
		b.WriteString("# HELP " + m.Name + " " + escape(m.Help, false) + "\n")
		b.WriteString("# TYPE " + m.Name + " " + m.Kind.String() + "\n")
		if m.Kind == Histogram {
			for _, bk := range m.Waits.Buckets {
				b.WriteString(m.Name + `_bucket{le="` + float(bk.UpTo.Seconds()) + `"} ` + strconv.FormatInt(bk.Count, 10) + "\n")
			}
			count := strconv.FormatInt(m.Waits.Count, 10)
			b.WriteString(m.Name + `_bucket{le="+Inf"} ` + count + "\n")
			b.WriteString(m.Name + "_sum " + float(m.Waits.Sum.Seconds()) + "\n")
			b.WriteString(m.Name + "_count " + count + "\n")
			continue
		}
		for _, sm := range m.Samples {
			b.WriteString(m.Name)
			if m.Label != "" {
				b.WriteString("{" + m.Label + `="` + escape(sm.LabelValue, true) + `"}`)
			}
			b.WriteString(" " + float(sm.Value) + "\n")
		}
	}
	return b.Flush()
}

// ContentType is the Content-Type of Write's output.
const ContentType = "text/plain; version=0.0.4; charset=utf-8"

// float formats f as the text format does.
func float(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "+Inf"
	case math.IsInf(f, -1):
		return "-Inf"
	case math.IsNaN(f):
		return "NaN"
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// escape escapes a HELP text (backslash, newline) or a label value
// (double quote too).
func escape(s string, quote bool) string {
	r := []string{`\`, `\\`, "\n", `\n`}
	if quote {
		r = append(r, `"`, `\"`)
	}
	return strings.NewReplacer(r...).Replace(s)
}

// Serve serves the metrics of stats() on http://addr/metrics until stop
// is called, for the examples' -metrics flag. It returns the URL.
func Serve(addr string, stats func() robotsmw.Stats) (url string, stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, fmt.Errorf("-metrics %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", Handler(stats))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	return "http://" + ln.Addr().String() + "/metrics", func() { srv.Close() }, nil
}

// Handler serves the metrics of stats() on every request, for the
// examples' /metrics.
func Handler(stats func() robotsmw.Stats) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", ContentType)
		_ = Write(w, stats()) // a failed write is the scraper's to see
	})
}
