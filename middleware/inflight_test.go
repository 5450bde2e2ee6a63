package robotsmw

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/robotsmw/robotsmw/pace"

	"github.com/gocolly/colly/v2"
	"golang.org/x/time/rate"

	"github.com/robotsmw/robotsmw/internal/loadsite"
)

// newLoadSite returns a loadsite.Site serving robotsTxt at once and
// pages after delay(path).
func newLoadSite(t *testing.T, robotsTxt string, delay func(path string) time.Duration) *loadsite.Site {
	return loadsite.New(t, func(r *http.Request) time.Duration {
		if r.URL.Path == "/robots.txt" {
			return -1
		}
		return delay(r.URL.Path)
	}, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			fmt.Fprint(w, robotsTxt)
			return
		}
		fmt.Fprint(w, "<html><body>ok</body></html>")
	})
}

// A slow host gets one request in flight, not more,
// however many colly threads want it; InFlight raises the limit.
func TestOneRequestInFlightPerHost(t *testing.T) {
	for _, tt := range []struct {
		name     string
		inFlight int
		want     int
	}{
		{"default", 0, 1},
		{"InFlight 2", 2, 2},
	} {
		s := newLoadSite(t, "User-agent: *\nAllow: /\n", func(string) time.Duration { return 150 * time.Millisecond })
		g := &Guard{Rate: rate.Inf, InFlight: tt.inFlight, FixedPace: true}
		c := colly.NewCollector(g.Attach, colly.Async())
		c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: 8})
		for i := 0; i < 6; i++ {
			c.Visit(fmt.Sprintf("%s/p%d", s.URL, i))
		}
		waitOrFail(t, "Wait", c.Wait)
		peak, spans := s.Result()
		if len(spans) != 6 || peak != tt.want {
			t.Errorf("%s: server saw %d pages, peak in flight %d; want 6 pages, peak %d", tt.name, len(spans), peak, tt.want)
		}
	}
}

// Guard.Transport's requests share the host's place with colly's.
func TestTransportOneInFlight(t *testing.T) {
	s := newLoadSite(t, "", func(string) time.Duration { return 100 * time.Millisecond })
	g := &Guard{Rate: rate.Inf, FixedPace: true}
	client := &http.Client{Transport: g.Transport(nil)}
	c := colly.NewCollector(g.Attach, colly.Async())
	var wg sync.WaitGroup
	for i := 0; i < 3; i++ {
		c.Visit(fmt.Sprintf("%s/c%d", s.URL, i))
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := client.Get(fmt.Sprintf("%s/t%d", s.URL, i))
			if err != nil {
				t.Errorf("Get: %v", err)
				return
			}
			resp.Body.Close()
		}()
	}
	wg.Wait()
	waitOrFail(t, "Wait", c.Wait)
	if peak, spans := s.Result(); peak != 1 || len(spans) != 6 {
		t.Errorf("server saw %d pages, peak in flight %d; want 6, peak 1", len(spans), peak)
	}
}

// Crawl-delay is the time "after loading
// one page, before starting to load another": counted from the end of the
// previous response, not from its start.
func TestCrawlDelayFromEndOfResponse(t *testing.T) {
	const delay, work = 300 * time.Millisecond, 200 * time.Millisecond
	s := newLoadSite(t, "User-agent: *\nCrawl-delay: 0.3\n", func(string) time.Duration { return work })
	g := &Guard{Rate: rate.Inf, FixedPace: true}
	c := colly.NewCollector(g.Attach, colly.Async())
	c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: 4})
	for i := 0; i < 4; i++ {
		c.Visit(fmt.Sprintf("%s/p%d", s.URL, i))
	}
	waitOrFail(t, "Wait", c.Wait)
	peak, spans := s.Result()
	if len(spans) != 4 || peak != 1 {
		t.Fatalf("server saw %d pages, peak %d; want 4, peak 1", len(spans), peak)
	}
	if idle, _ := loadsite.MinIdle(spans); idle < delay-slack {
		t.Errorf("shortest time from the end of a response to the next request = %v, want ≥ Crawl-delay %v", idle, delay)
	}
}

// A host that slows down is given time: after each
// response it is left alone for at least its smoothed response time, which
// Stats shows; FixedPace turns that off.
func TestLatencyAwarePacing(t *testing.T) {
	const work = 150 * time.Millisecond
	for _, fixed := range []bool{false, true} {
		s := newLoadSite(t, "", func(string) time.Duration { return work })
		g := &Guard{Rate: rate.Inf, FixedPace: fixed}
		c := colly.NewCollector(g.Attach)
		for i := 0; i < 4; i++ {
			c.Visit(fmt.Sprintf("%s/p%d", s.URL, i))
		}
		_, spans := s.Result()
		idle, _ := loadsite.MinIdle(spans[1:]) // from the second response on, the latency is known
		hs := hostStats(g, "127.0.0.1")
		switch {
		case !fixed && idle < work-slack:
			t.Errorf("latency-aware: shortest idle time after a %v response = %v, want ≥ %v", work, idle, work)
		case !fixed && (hs.Latency < work || hs.Latency > 3*work || hs.Gap != hs.Latency):
			t.Errorf("latency-aware: Stats Latency %v, Gap %v; want about %v, Gap = Latency", hs.Latency, hs.Gap, work)
		case fixed && idle >= work-slack:
			t.Errorf("FixedPace: shortest idle time = %v, want no latency gap", idle)
		}
	}
}

// Per-host overrides (Guard.Hosts): a host a rule names gets its own rate
// and in-flight places, and still never goes faster than its
// Crawl-delay, counted from the end of each response.
func TestHostRules(t *testing.T) {
	fast := newLoadSite(t, "User-agent: *\nAllow: /\n", func(string) time.Duration { return 50 * time.Millisecond })
	slow := newLoadSite(t, "User-agent: *\nCrawl-delay: 0.3\n", func(string) time.Duration { return 50 * time.Millisecond })
	// Both sites are 127.0.0.1; "localhost" reaches the slow one under
	// another host name.
	slowURL := strings.Replace(slow.URL, "127.0.0.1", "localhost", 1)
	g := &Guard{
		Rate:      1,
		FixedPace: true,
		Hosts: []HostRule{
			{Host: "127.0.0.1", Rate: rate.Inf, InFlight: 2},
			{Host: "local*", Rate: rate.Inf},
		},
	}
	c := colly.NewCollector(g.Attach, colly.Async())
	c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: 8})
	for i := 0; i < 4; i++ {
		c.Visit(fmt.Sprintf("%s/p%d", fast.URL, i))
		c.Visit(fmt.Sprintf("%s/p%d", slowURL, i))
	}
	waitOrFail(t, "Wait", c.Wait)
	if peak, spans := fast.Result(); peak != 2 || len(spans) != 4 {
		t.Errorf("fast host: %d pages, peak in flight %d; want 4, 2 (its rule)", len(spans), peak)
	}
	peak, spans := slow.Result()
	if peak != 1 || len(spans) != 4 {
		t.Errorf("ruled host with a Crawl-delay: %d pages, peak %d; want 4, 1", len(spans), peak)
	}
	if idle, _ := loadsite.MinIdle(spans); idle < 300*time.Millisecond-slack {
		t.Errorf("ruled host: shortest time after a response = %v, want ≥ its Crawl-delay 300ms despite Rate: rate.Inf", idle)
	}
}

// Jitter delays requests by up to a fraction of the interval, never
// sends one sooner.
func TestJitterNeverSooner(t *testing.T) {
	c := newFakeClock()
	g := fakeGuard(&Guard{Rate: 10, Jitter: 0.5}, c, 0.8)
	u := mustURL(t, "http://example.com/")
	h := g.host(u)
	var at []time.Time
	for i := 0; i < 4; i++ {
		if err := g.wait(context.Background(), h, u, time.Hour, false); err != nil {
			t.Fatal(err)
		}
		if err := g.gateEnded(context.Background(), h, u, time.Hour); err != nil {
			t.Fatal(err)
		}
		at = append(at, c.now())
	}
	for i := 1; i < len(at); i++ {
		if d := at[i].Sub(at[i-1]); d < 100*time.Millisecond || d > 140*time.Millisecond {
			t.Errorf("gap %d with Jitter 0.5 at 10/s = %v, want in [100ms, 140ms]", i, d)
		}
	}
}

// shortLeasePacer is a shared Pacer that gives the next lease it grants
// after short is set a TTL of ttl, and counts the leases given back
// unsent.
type shortLeasePacer struct {
	pace.Memory
	ttl    time.Duration
	short  atomic.Bool
	mu     sync.Mutex // guards unsent
	unsent int
}

func (p *shortLeasePacer) Reserve(ctx context.Context, host string, a pace.Ask) (pace.Slot, error) {
	short := !a.NoLease && p.short.Load()
	if short {
		a.Lease = p.ttl
	}
	s, err := p.Memory.Reserve(ctx, host, a)
	if short && s.Lease != 0 {
		p.short.Store(false)
	}
	return s, err
}

func (p *shortLeasePacer) Release(ctx context.Context, host string, r pace.Release) (pace.State, error) {
	if r.Unsent {
		p.mu.Lock()
		p.unsent++
		p.mu.Unlock()
	}
	return p.Memory.Release(ctx, host, r)
}

// A request whose process stalls between its gate and
// its send for longer than its lease of a shared Pacer lasts does not
// spend that lease late. Here the first member's request stalls after its
// gate (a callback of its own that sleeps, as a stopped process would),
// its lease runs out, and the second member's request takes the host;
// when the first wakes, it gives its lease back unsent and asks for the
// host again: the server never has two requests at once.
func TestStaleLeaseAsksAgain(t *testing.T) {
	const ttl = 200 * time.Millisecond
	site := newLoadSite(t, "User-agent: *\nAllow: /\n", func(string) time.Duration { return 3 * ttl })
	p := &shortLeasePacer{ttl: ttl}
	mk := func() *colly.Collector {
		g := &Guard{Rate: rate.Inf, Pacer: p, MaxWait: 10 * time.Second, FixedPace: true}
		return colly.NewCollector(g.Attach, colly.Async())
	}
	a, b := mk(), mk()
	// After the Guard's OnRequest (robots.txt fetched) and before its
	// gate: the gate's lease is the short one.
	a.OnRequest(func(*colly.Request) { p.short.Store(true) })
	var wg sync.WaitGroup
	a.OnRequestHeaders(func(r *colly.Request) {
		b.Visit(site.URL + "/b")
		wg.Add(1)
		go func() { defer wg.Done(); b.Wait() }()
		time.Sleep(3 * ttl)
	})
	a.Visit(site.URL + "/a")
	a.Wait()
	wg.Wait()
	peak, spans := site.Result()
	if len(spans) != 2 || peak != 1 {
		t.Errorf("server saw %d pages, peak in flight %d; want 2, 1", len(spans), peak)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.unsent != 1 {
		t.Errorf("leases given back unsent: %d, want 1 (the stalled request's)", p.unsent)
	}
}
