package robotsprom

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gocolly/colly/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"golang.org/x/time/rate"

	robotsmw "github.com/robotsmw/robotsmw/middleware"
)

// loopbackSite serves h on 127.0.0.n, a host of its own: the Guard keeps
// one state per host name, so that one site's pause does not hold up
// another's requests.
func loopbackSite(t *testing.T, n int, h http.HandlerFunc) string {
	t.Helper()
	ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.%d:0", n))
	if err != nil {
		t.Fatal(err)
	}
	s := httptest.NewUnstartedServer(h)
	s.Listener.Close()
	s.Listener = ln
	s.Start()
	t.Cleanup(s.Close)
	return s.URL
}

// TestScrapeRobots crawls five sites whose robots.txt is parsed, gone
// (404), answered 429, answered 503 and refused, two pages each, and
// scrapes a real registry: one fetch per site, counted by result, three
// origins unreachable now; the final outcomes add up to the ten requests
// made, their fetched to robotsmw_pages_fetched_total. (A timeout takes
// the Guard's 30 s; the middleware's own tests count one with a shorter
// limit.)
func TestScrapeRobots(t *testing.T) {
	page := func(robots http.HandlerFunc) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/robots.txt" {
				robots(w, r)
				return
			}
			fmt.Fprint(w, "ok")
		}
	}
	sites := []string{
		loopbackSite(t, 31, page(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "User-agent: *\nDisallow: /b\n") })),
		loopbackSite(t, 32, page(http.NotFound)),
		loopbackSite(t, 33, page(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusTooManyRequests) })),
		loopbackSite(t, 34, page(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusServiceUnavailable) })),
	}
	ln, err := net.Listen("tcp", "127.0.0.35:0")
	if err != nil {
		t.Fatal(err)
	}
	sites = append(sites, "http://"+ln.Addr().String())
	ln.Close() // refused from now on

	g := &robotsmw.Guard{Rate: rate.Inf, MaxRetries: 1, MaxRobotsFailures: 1}
	c := colly.NewCollector(g.Attach, colly.Async(true))
	for _, s := range sites {
		c.Visit(s + "/a")
		c.Visit(s + "/b")
	}
	c.Wait()

	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(NewCollector(g))
	want := `
# HELP robotsmw_final_outcomes_total Requests by final outcome, each counted once: fetched (its final response read; equals robotsmw_pages_fetched_total), blocked (robots.txt, Crawl-delay), gave_up (final failures).
# TYPE robotsmw_final_outcomes_total counter
robotsmw_final_outcomes_total{outcome="blocked"} 1
robotsmw_final_outcomes_total{outcome="fetched"} 3
robotsmw_final_outcomes_total{outcome="gave_up"} 6
# HELP robotsmw_pages_fetched_total Pages fetched: colly requests whose final response was read.
# TYPE robotsmw_pages_fetched_total counter
robotsmw_pages_fetched_total 3
# HELP robotsmw_robots_fetches_total robots.txt fetches of the Guard's robots.txt cache (its own, or Guard.Cache) by result: parsed (2xx), allow_all (4xx, too many redirects), unreachable_429, unreachable_5xx, unreachable_timeout, unreachable_network.
# TYPE robotsmw_robots_fetches_total counter
robotsmw_robots_fetches_total{result="allow_all"} 1
robotsmw_robots_fetches_total{result="parsed"} 1
robotsmw_robots_fetches_total{result="unreachable_429"} 1
robotsmw_robots_fetches_total{result="unreachable_5xx"} 1
robotsmw_robots_fetches_total{result="unreachable_network"} 1
robotsmw_robots_fetches_total{result="unreachable_timeout"} 0
# HELP robotsmw_robots_unreachable_origins Origins whose last robots.txt fetch found it unreachable.
# TYPE robotsmw_robots_unreachable_origins gauge
robotsmw_robots_unreachable_origins 3
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "robotsmw_final_outcomes_total",
		"robotsmw_pages_fetched_total", "robotsmw_robots_fetches_total", "robotsmw_robots_unreachable_origins"); err != nil {
		t.Errorf("GatherAndCompare: %v", err)
	}
	if problems, err := testutil.GatherAndLint(reg); err != nil || len(problems) > 0 {
		t.Errorf("GatherAndLint = %v, %v", problems, err)
	}
}
