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

// Issue 20, point 6: three members crawling one slow host keep one
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
	var wg sync.WaitGroup
	for m := 0; m < 3; m++ {
		f := New(srv.Client())
		defer f.Close()
		g := &robotsmw.Guard{Rate: rate.Inf}
		f.Attach(g)
		c := colly.NewCollector(g.Attach, colly.Async())
		c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: 4})
		for i := 0; i < 3; i++ {
			c.Visit(fmt.Sprintf("%s/m%d/p%d", site.URL, m, i))
		}
		wg.Add(1)
		go func() { defer wg.Done(); c.Wait() }()
	}
	wg.Wait()
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

// Issue 20, point 6: a response that takes longer than a member's TTL (a
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
	var wg sync.WaitGroup
	var fleets []*Fleet
	for m := 0; m < 2; m++ {
		f := New(srv.Client())
		f.ttl = ttl
		defer f.Close()
		fleets = append(fleets, f)
		g := &robotsmw.Guard{Rate: rate.Inf, MaxWait: 5 * time.Second, FixedPace: true}
		f.Attach(g)
		c := colly.NewCollector(g.Attach, colly.Async())
		c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: 2})
		for i := 0; i < 2; i++ {
			c.Visit(fmt.Sprintf("%s/m%d/p%d", site.URL, m, i))
		}
		wg.Add(1)
		go func() { defer wg.Done(); c.Wait() }()
	}
	wg.Wait()
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
