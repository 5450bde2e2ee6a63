package robotsprom

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gocolly/colly/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/prometheus/common/expfmt"
	"golang.org/x/time/rate"

	"github.com/robotsmw/robotsmw/internal/promtext"
	robotsmw "github.com/robotsmw/robotsmw/middleware"
)

// misbehaving serves a site whose robots.txt disallows /private, that
// answers /busy 429 the first time, /broken 500 always, and /gone 404.
func misbehaving(t testing.TB) *httptest.Server {
	var mu sync.Mutex
	busy := 0
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			fmt.Fprint(w, "User-agent: *\nDisallow: /private\n")
		case "/busy":
			mu.Lock()
			busy++
			first := busy == 1
			mu.Unlock()
			if first {
				w.WriteHeader(http.StatusTooManyRequests)
				return
			}
			fmt.Fprint(w, "ok")
		case "/broken":
			w.WriteHeader(http.StatusInternalServerError)
		case "/gone":
			http.NotFound(w, r)
		default:
			fmt.Fprint(w, "ok")
		}
	}))
	t.Cleanup(s.Close)
	return s
}

// crawl visits the misbehaving site's pages through a new Guard.
func crawl(t testing.TB) *robotsmw.Guard {
	s := misbehaving(t)
	g := &robotsmw.Guard{Rate: rate.Inf, Backoff: 30 * time.Millisecond, MaxRetries: 1, MaxRobotsFailures: 1}
	c := colly.NewCollector(g.Attach)
	for _, p := range []string{"/ok", "/private/x", "/busy", "/broken", "/gone"} {
		c.Visit(s.URL + p)
	}
	c.Wait()
	// The last failure may have paused the host a few milliseconds more.
	time.Sleep(time.Until(g.Stats().Total.PausedUntil))
	return g
}

// TestScrape crawls a misbehaving site and scrapes the Collector: the
// counters by outcome, the gauges and the waits histogram.
func TestScrape(t *testing.T) {
	g := crawl(t)
	col := NewCollector(g)
	// robots.txt, /ok, /busy twice, /broken twice, /gone; pages: /ok,
	// /busy, /gone (a 404 is a page read).
	want := `
# HELP robotsmw_backoffs_total Pauses of hosts that 429, 5xx or network errors started or lengthened.
# TYPE robotsmw_backoffs_total counter
robotsmw_backoffs_total 3
# HELP robotsmw_hosts Hosts whose state the Guard keeps.
# TYPE robotsmw_hosts gauge
robotsmw_hosts 1
# HELP robotsmw_hosts_evicted_total Host states forgotten after they went quiet.
# TYPE robotsmw_hosts_evicted_total counter
robotsmw_hosts_evicted_total 0
# HELP robotsmw_hosts_paused Hosts paused now after 429, 5xx or network errors.
# TYPE robotsmw_hosts_paused gauge
robotsmw_hosts_paused 0
# HELP robotsmw_final_outcomes_total Requests by final outcome, each counted once: fetched (its final response read; equals robotsmw_pages_fetched_total), blocked (robots.txt, Crawl-delay), gave_up (final failures).
# TYPE robotsmw_final_outcomes_total counter
robotsmw_final_outcomes_total{outcome="blocked"} 1
robotsmw_final_outcomes_total{outcome="fetched"} 3
robotsmw_final_outcomes_total{outcome="gave_up"} 1
# HELP robotsmw_attempt_outcomes_total Attempts that were not the end of their request: deferred (put off past MaxWait, not sent), retried (sent, failed, and sent again).
# TYPE robotsmw_attempt_outcomes_total counter
robotsmw_attempt_outcomes_total{outcome="deferred"} 0
robotsmw_attempt_outcomes_total{outcome="retried"} 2
# HELP robotsmw_robots_fetches_total robots.txt fetches of the Guard's robots.txt cache (its own, or Guard.Cache) by result: parsed (2xx), allow_all (4xx, too many redirects), unreachable_429, unreachable_5xx, unreachable_timeout, unreachable_network.
# TYPE robotsmw_robots_fetches_total counter
robotsmw_robots_fetches_total{result="allow_all"} 0
robotsmw_robots_fetches_total{result="parsed"} 1
robotsmw_robots_fetches_total{result="unreachable_429"} 0
robotsmw_robots_fetches_total{result="unreachable_5xx"} 0
robotsmw_robots_fetches_total{result="unreachable_network"} 0
robotsmw_robots_fetches_total{result="unreachable_timeout"} 0
# HELP robotsmw_pages_fetched_total Pages fetched: colly requests whose final response was read.
# TYPE robotsmw_pages_fetched_total counter
robotsmw_pages_fetched_total 3
# HELP robotsmw_requests_in_flight Colly requests sent whose response has not arrived.
# TYPE robotsmw_requests_in_flight gauge
robotsmw_requests_in_flight 0
# HELP robotsmw_requests_sent_total Requests sent to hosts: pages, retries, redirect hops, robots.txt and sitemaps.
# TYPE robotsmw_requests_sent_total counter
robotsmw_requests_sent_total 7
# HELP robotsmw_requests_waiting Deferred requests waiting in the Guard to be sent again.
# TYPE robotsmw_requests_waiting gauge
robotsmw_requests_waiting 0
`
	names := []string{"robotsmw_backoffs_total", "robotsmw_hosts", "robotsmw_hosts_evicted_total",
		"robotsmw_hosts_paused", "robotsmw_final_outcomes_total", "robotsmw_attempt_outcomes_total",
		"robotsmw_robots_fetches_total", "robotsmw_pages_fetched_total",
		"robotsmw_requests_in_flight", "robotsmw_requests_sent_total", "robotsmw_requests_waiting"}
	if err := testutil.CollectAndCompare(col, strings.NewReader(want), names...); err != nil {
		t.Errorf("CollectAndCompare: %v", err)
	}
	if n := testutil.CollectAndCount(col); n != 22 {
		t.Errorf("CollectAndCount = %d series, want 22 (11 families of one series, 3 final outcomes, 2 attempt outcomes, 6 robots.txt results)", n)
	}
	if problems, err := testutil.CollectAndLint(col); err != nil || len(problems) > 0 {
		t.Errorf("CollectAndLint = %v, %v", problems, err)
	}

	// The histogram: one wait per attempt sent by colly (/ok, /busy
	// twice, /broken twice, /gone), in buckets that only grow.
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(col)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatalf("Gather: %v", err)
	}
	found := false
	for _, mf := range mfs {
		if mf.GetName() != "robotsmw_wait_seconds" {
			continue
		}
		found = true
		h := mf.GetMetric()[0].GetHistogram()
		if h.GetSampleCount() != 6 {
			t.Errorf("robotsmw_wait_seconds_count = %d, want 6", h.GetSampleCount())
		}
		var last uint64
		for _, b := range h.GetBucket() {
			if b.GetCumulativeCount() < last || b.GetCumulativeCount() > h.GetSampleCount() {
				t.Errorf("robotsmw_wait_seconds bucket le=%g = %d after %d, of %d", b.GetUpperBound(), b.GetCumulativeCount(), last, h.GetSampleCount())
			}
			last = b.GetCumulativeCount()
		}
		if len(h.GetBucket()) != 12 {
			t.Errorf("robotsmw_wait_seconds has %d buckets, want 12", len(h.GetBucket()))
		}
	}
	if !found {
		t.Error("Gather has no robotsmw_wait_seconds")
	}
}

// TestTextMatchesClientGolang: what the examples serve without
// client_golang (promtext.Write) is byte for byte what client_golang's
// registry writes for the same Stats.
func TestTextMatchesClientGolang(t *testing.T) {
	g := crawl(t)
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(NewCollector(g))
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatalf("Gather: %v", err)
	}
	var want bytes.Buffer
	enc := expfmt.NewEncoder(&want, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, mf := range mfs {
		if err := enc.Encode(mf); err != nil {
			t.Fatalf("Encode: %v", err)
		}
	}
	var got bytes.Buffer
	if err := promtext.Write(&got, g.Stats()); err != nil {
		t.Fatalf("promtext.Write: %v", err)
	}
	if got.String() != want.String() {
		t.Errorf("promtext.Write =\n%s\nclient_golang writes\n%s", got.String(), want.String())
	}
}

// TestConstLabels: two Guards in one registry, told apart by ConstLabels.
func TestConstLabels(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	a, b := NewCollector(&robotsmw.Guard{}), NewCollector(&robotsmw.Guard{})
	a.ConstLabels = prometheus.Labels{"crawl": "news"}
	b.ConstLabels = prometheus.Labels{"crawl": "shops"}
	if err := reg.Register(a); err != nil {
		t.Fatalf("Register(a): %v", err)
	}
	if err := reg.Register(b); err != nil {
		t.Fatalf("Register(b) with other ConstLabels: %v", err)
	}
	if n, err := testutil.GatherAndCount(reg, "robotsmw_requests_sent_total"); err != nil || n != 2 {
		t.Errorf("GatherAndCount(robotsmw_requests_sent_total) = %d, %v; want 2", n, err)
	}
}
