package redisstore

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocolly/colly/v2"
	"github.com/gocolly/colly/v2/queue"
	"github.com/redis/go-redis/v9"
	"golang.org/x/time/rate"

	"github.com/robotsmw/robotsmw/internal/redistest"
	robotsmw "github.com/robotsmw/robotsmw/middleware"
)

// arrivalJitter is how much closer together than their slots the server
// may see two requests of different members: each member sleeps its
// wait from Redis's answer, and loopback connections and goroutine
// scheduling under -race shift the send by some milliseconds.
const arrivalJitter = 30 * time.Millisecond

// A fleetSite is a site of pages p0…p(n-1), each linking to two more (a
// binary tree), to p0, and to a page robots.txt disallows. Its p7 answers
// 503 with Retry-After: 1 the first time. It records every request.
type fleetSite struct {
	*httptest.Server
	n int

	mu   sync.Mutex // guards hits and busy
	hits []fleetHit
	busy bool // p7 has answered 503
}

type fleetHit struct {
	path   string
	at     time.Time
	status int
}

func newFleetSite(t *testing.T, n int) *fleetSite {
	s := &fleetSite{n: n}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		status := http.StatusOK
		s.mu.Lock()
		if r.URL.Path == "/p7" && !s.busy {
			s.busy = true
			status = http.StatusServiceUnavailable
		}
		s.hits = append(s.hits, fleetHit{r.URL.Path, time.Now(), status})
		s.mu.Unlock()
		switch {
		case r.URL.Path == "/robots.txt":
			fmt.Fprint(w, "User-agent: *\nDisallow: /private/\n")
		case status != http.StatusOK:
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(status)
		case strings.HasPrefix(r.URL.Path, "/p"):
			var i int
			fmt.Sscanf(r.URL.Path, "/p%d", &i)
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, "<html><body>")
			for _, j := range []int{2*i + 1, 2*i + 2, 0} {
				if j < s.n {
					fmt.Fprintf(w, `<a href="/p%d">p%d</a> `, j, j)
				}
			}
			fmt.Fprintf(w, `<a href="/private/%d">private</a></body></html>`, i)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *fleetSite) log() []fleetHit {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := append([]fleetHit(nil), s.hits...)
	sort.Slice(out, func(i, j int) bool { return out[i].at.Before(out[j].at) })
	return out
}

// busiest returns the most requests the site received within any window
// of one second less arrivalJitter.
func busiest(hits []fleetHit) int {
	most := 0
	for i := range hits {
		n := 0
		for j := i; j < len(hits) && hits[j].at.Sub(hits[i].at) < time.Second-arrivalJitter; j++ {
			n++
		}
		most = max(most, n)
	}
	return most
}

// crawler is one crawler process of a fleet: its own Redis client, Fleet,
// Guard, collector and queue.
type crawler struct {
	t     *testing.T
	fleet *Fleet
	guard *robotsmw.Guard
	pages atomic.Int64
	downs atomic.Int64
}

func newMember(t *testing.T, client redis.UniversalClient, prefix string, r rate.Limit) *crawler {
	m := &crawler{t: t, fleet: New(client)}
	m.fleet.Prefix = prefix
	m.fleet.OnDown = func(err error) {
		if err != nil {
			m.downs.Add(1)
		}
	}
	m.guard = &robotsmw.Guard{Agent: "FleetTest", Rate: r, MaxWait: 2 * time.Second,
		ErrorHandler: func(r *colly.Request, err error) {
			if !errors.Is(err, robotsmw.ErrDisallowed) {
				t.Logf("final outcome of %s: %v", r.URL, err)
			}
		},
	}
	m.fleet.Attach(m.guard)
	return m
}

// crawl runs the member on the site from start until the fleet's queue is
// drained.
func (m *crawler) crawl(ctx context.Context, start string) error {
	defer m.fleet.Close()
	q, err := queue.New(2, m.fleet.Queue())
	if err != nil {
		return err
	}
	m.guard.Links.Queue = m.fleet.Queue()
	u, _ := url.Parse(start)
	c := colly.NewCollector(colly.AllowedDomains(u.Hostname()), colly.StdlibContext(ctx), m.guard.Attach)
	if err := c.SetStorage(m.fleet.Storage()); err != nil {
		return err
	}
	m.guard.FollowLinks(c)
	c.OnResponse(func(*colly.Response) { m.pages.Add(1) })
	c.OnError(func(r *colly.Response, err error) {
		if robotsmw.IsFinal(err) && r.StatusCode == 0 && !errors.Is(err, robotsmw.ErrDisallowed) {
			m.t.Logf("OnError %s: %v", r.Request.URL, err)
		}
	})
	if err := q.AddURL(start); err != nil {
		return err
	}
	return m.fleet.Run(ctx, q, c)
}

// runFleet crawls site with n members and returns them once all are done.
func runFleet(t *testing.T, newClient func() redis.UniversalClient, site *fleetSite, n int, r rate.Limit) []*crawler {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	prefix := "test:" + t.Name()
	ms := make([]*crawler, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range ms {
		ms[i] = newMember(t, newClient(), prefix, r)
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = ms[i].crawl(ctx, site.URL+"/p0")
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("member %d: Run = %v", i, err)
		}
	}
	return ms
}

// checkOnce checks that robots.txt and every page were fetched once, the
// page that answered 503 twice, and nothing disallowed.
func checkOnce(t *testing.T, site *fleetSite, hits []fleetHit) {
	t.Helper()
	count := map[string]int{}
	for _, h := range hits {
		count[h.path]++
		if strings.HasPrefix(h.path, "/private/") {
			t.Errorf("disallowed %s was fetched", h.path)
		}
	}
	if count["/robots.txt"] != 1 {
		t.Errorf("robots.txt fetched %d times by the fleet, want 1", count["/robots.txt"])
	}
	for i := 0; i < site.n; i++ {
		want := 1
		if i == 7 {
			want = 2 // 503, then the page
		}
		if got := count[fmt.Sprintf("/p%d", i)]; got != want {
			t.Errorf("/p%d fetched %d times by the fleet, want %d", i, got, want)
		}
	}
}

// Three members with Guards, Redis clients and Fleets of their own crawl
// one site as one polite crawler: robots.txt once, each page once, never
// more than the rate in any second, and one member's 503 + Retry-After
// pauses them all.
func TestFleetCrawlsAsOne(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) { testFleetCrawlsAsOne(t, b.start(t)) })
	}
}

func testFleetCrawlsAsOne(t *testing.T, newClient func() redis.UniversalClient) {
	site := newFleetSite(t, 40)
	const perSecond = 10
	ms := runFleet(t, newClient, site, 3, perSecond)
	hits := site.log()
	checkOnce(t, site, hits)
	if got := busiest(hits); got > perSecond {
		t.Errorf("busiest second had %d requests, want ≤ %d (the fleet's rate)", got, perSecond)
	}
	for _, h := range hits {
		if h.status != http.StatusServiceUnavailable {
			continue
		}
		// A request whose slot came before the 503 was answered may be
		// on its way (its slot is at most one interval after the 503's,
		// and may reach the server late); after that, no member sends
		// until the Retry-After has passed.
		from, to := h.at.Add(time.Second/perSecond+arrivalJitter), h.at.Add(time.Second-arrivalJitter)
		for _, o := range hits {
			if o.at.After(from) && o.at.Before(to) {
				t.Errorf("%s sent %v after a 503 with Retry-After: 1, want none before 1s", o.path, o.at.Sub(h.at))
			}
		}
	}
	working := 0
	for _, m := range ms {
		if m.pages.Load() > 0 {
			working++
		}
	}
	if working < 2 {
		t.Errorf("%d of 3 members fetched pages, want the work spread", working)
	}
}

// Redis stops in the middle of a crawl: the members pause (no burst, no
// request without a slot), and when it is back they finish the crawl, with
// nothing lost and nothing fetched twice.
func TestFleetSurvivesRedisOutage(t *testing.T) {
	srv := redistest.Start(t)
	site := newFleetSite(t, 50)
	const perSecond = 20
	done := make(chan struct{})
	var outage [2]time.Time
	go func() {
		defer close(done)
		for len(site.log()) < 15 {
			time.Sleep(5 * time.Millisecond)
		}
		outage[0] = time.Now()
		srv.Stop()
		time.Sleep(4 * time.Second)
		outage[1] = time.Now()
		srv.Restart()
	}()
	ms := runFleet(t, func() redis.UniversalClient { return srv.Client() }, site, 3, perSecond)
	<-done
	hits := site.log()
	checkOnce(t, site, hits)
	if got := busiest(hits); got > perSecond {
		t.Errorf("busiest second had %d requests, want ≤ %d (the fleet's rate)", got, perSecond)
	}
	during := 0
	for _, h := range hits {
		// Slots reserved before Redis stopped may still be used: they
		// are at most MaxWait (2s) away. No slot is taken while it is
		// down, so nothing arrives after those until it is back.
		if h.at.After(outage[0].Add(2*time.Second+arrivalJitter)) && h.at.Before(outage[1]) {
			during++
		}
	}
	if during > 0 {
		t.Errorf("%d requests sent while Redis was down, beyond the slots taken before", during)
	}
	downs := int64(0)
	for _, m := range ms {
		downs += m.downs.Load()
	}
	if downs == 0 {
		t.Errorf("no member reported Redis down through OnDown")
	}
}
