package redisstore

import (
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/gocolly/colly/v2"
	"golang.org/x/time/rate"

	"github.com/robotsmw/robotsmw/internal/loadsite"
	"github.com/robotsmw/robotsmw/internal/redistest"
	robotsmw "github.com/robotsmw/robotsmw/middleware"
)

// Three members crawling one slow host keep one
// request in flight to it fleet-wide, and the host's Crawl-delay counts
// from the end of the last response any member got, judged at the server.
func TestFleetOneInFlightCrawlDelayFromEnd(t *testing.T) {
	srv := redistest.Start(t)
	site := loadsite.New(t, func(r *http.Request) time.Duration {
		if r.URL.Path == "/robots.txt" {
			return -1
		}
		return 80 * time.Millisecond
	}, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			fmt.Fprint(w, "User-agent: *\nCrawl-delay: 0.2\n")
			return
		}
		fmt.Fprint(w, "<html><body>ok</body></html>")
	})
	fleetCrawl{members: 3, visits: 3, parallelism: 4}.run(t, srv, site.URL)
	peak, spans := site.Result()
	if len(spans) != 9 || peak != 1 {
		t.Fatalf("server saw %d pages, peak in flight %d; want 9, 1", len(spans), peak)
	}
	for i := 1; i < len(spans); i++ {
		if idle := spans[i].Start.Sub(spans[i-1].End); idle < 200*time.Millisecond {
			t.Errorf("page %d started %v after the end of the one before, want ≥ Crawl-delay 200ms", i, idle)
		}
	}
}

// A response that takes longer than a member's TTL (a
// slow host, colly's timeout raised above it) keeps its host's place: the
// member is alive and renews its lease while the response runs, so no
// other member starts a second request to the host.
func TestFleetLongResponseKeepsLease(t *testing.T) {
	srv := redistest.Start(t)
	const ttl = 300 * time.Millisecond
	site := loadsite.New(t, func(r *http.Request) time.Duration {
		if r.URL.Path == "/robots.txt" {
			return -1
		}
		return 3 * ttl
	}, func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "<html><body>ok</body></html>")
	})
	fleets := fleetCrawl{members: 2, visits: 2, parallelism: 2, ttl: ttl, guard: fixedPaceGuard}.run(t, srv, site.URL)
	peak, spans := site.Result()
	if len(spans) != 4 || peak != 1 {
		t.Errorf("server saw %d pages, peak in flight %d; want 4, 1 fleet-wide", len(spans), peak)
	}
	// Every lease was given back: the renewing goroutines end.
	for i, f := range fleets {
		deadline := time.Now().Add(5 * time.Second)
		for {
			f.pacer.renew.mu.Lock()
			running, held := f.pacer.renew.running, len(f.pacer.renew.held)
			f.pacer.renew.mu.Unlock()
			if !running && held == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Errorf("member %d: renewals still running (%v) with %d hosts held after the crawl", i, running, held)
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

// A fleetCrawl is several fleet members over one Redis, each a Guard of
// its own (Rate: rate.Inf unless guard says otherwise) on an async
// collector, visiting site/mM/pI for I below visits.
type fleetCrawl struct {
	members, visits, parallelism int
	ttl                          time.Duration // the members' TTL; 0: memberTTL
	// guard, if set, returns member m's Guard; setup, if set, is called
	// with each member's Fleet and collector before its visits.
	guard func(m int) *robotsmw.Guard
	setup func(m int, f *Fleet, c *colly.Collector)
}

// run crawls site with fc's members until every collector's Wait returns,
// and returns the members' Fleets, which the test's end closes.
func (fc fleetCrawl) run(t *testing.T, srv *redistest.Server, site string) []*Fleet {
	t.Helper()
	var wg sync.WaitGroup
	fleets := make([]*Fleet, fc.members)
	for m := range fleets {
		f := New(srv.Client())
		f.ttl = fc.ttl
		t.Cleanup(func() { f.Close() })
		fleets[m] = f
		g := &robotsmw.Guard{Rate: rate.Inf}
		if fc.guard != nil {
			g = fc.guard(m)
		}
		f.Attach(g)
		c := colly.NewCollector(g.Attach, colly.Async())
		c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: fc.parallelism})
		if fc.setup != nil {
			fc.setup(m, f, c)
		}
		for i := 0; i < fc.visits; i++ {
			c.Visit(fmt.Sprintf("%s/m%d/p%d", site, m, i))
		}
		wg.Add(1)
		go func() { defer wg.Done(); c.Wait() }()
	}
	wg.Wait()
	return fleets
}

// fixedPaceGuard is the Guard of the fleet tests that pace by Crawl-delay
// and in-flight places alone: no latency gap, waits up to 5 s.
func fixedPaceGuard(int) *robotsmw.Guard {
	return &robotsmw.Guard{Rate: rate.Inf, MaxWait: 5 * time.Second, FixedPace: true}
}
