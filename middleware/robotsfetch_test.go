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

	"github.com/gocolly/colly/v2"
	"golang.org/x/time/rate"

	"github.com/robotsmw/robotsmw/policy"
)

// Defect 4: robots.txt answering 503 with Retry-After: 1 is asked again
// after one second, not after RetryMin (1 min); the page waits for it (it
// is within MaxWait) and is fetched; the 503 strikes the host too.
func TestRobotsRetryAfterHonoured(t *testing.T) {
	var n atomic.Int32
	s := newSite(t, robots("User-agent: *\nDisallow: /private\n", nil))
	s.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.hits = append(s.hits, hit{r.Method, r.URL.Path, time.Now()})
		s.mu.Unlock()
		if r.URL.Path == "/robots.txt" && n.Add(1) == 1 {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.Write([]byte("User-agent: *\nDisallow: /private\n"))
	})
	clk := newFakeClock()
	g := fakeGuard(&Guard{Rate: rate.Inf}, clk, 0)
	c := colly.NewCollector(g.Attach)
	start := clk.now()
	if err := c.Visit(s.URL + "/page"); err != nil {
		t.Fatalf("Visit(/page) = %v, want nil", err)
	}
	if d := clk.now().Sub(start); d < time.Second || d > 2*time.Second {
		t.Errorf("the page waited %v for robots.txt, want the Retry-After of 1s", d)
	}
	if got := s.count("/robots.txt"); got != 2 {
		t.Errorf("robots.txt fetched %d times, want 2", got)
	}
	if got := s.count("/page"); got != 1 {
		t.Errorf("/page fetched %d times, want 1", got)
	}
	if hs := hostStats(g, "127.0.0.1"); hs.Backoffs != 1 {
		t.Errorf("Stats = %+v, want the robots.txt 503 as one back-off", hs)
	}
}

// scaledSleep makes g's sleeps on clk take a hundredth of their length in
// real time, so that real deadlines can run out during them.
func scaledSleep(g *Guard, clk *fakeClock) {
	g.sleep = func(ctx context.Context, d time.Duration) error {
		t := time.NewTimer(d / 100)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
			clk.advance(d)
			return nil
		}
	}
}

// Defect 10: a robots.txt refresh on a host with Crawl-delay: 35 right
// after a page was sent, through a same-host redirect: each hop waits for
// the host's spacing longer than the fetch's timeout. Each hop gets its
// own budget once it passes the gate, so robots.txt is read, not recorded
// as unreachable on every attempt (the second hop's budget used to be
// what was left of the fetch's deadline: nothing).
func TestRobotsRedirectHopOwnBudget(t *testing.T) {
	s := newSite(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			http.Redirect(w, r, "/real-robots.txt", http.StatusMovedPermanently)
		default:
			w.Write([]byte("User-agent: *\nDisallow: /private\nCrawl-delay: 35\n"))
		}
	})
	u := mustURL(t, s.URL+"/page")
	clk := newFakeClock()
	g := fakeGuard(&Guard{Rate: rate.Inf}, clk, 0)
	scaledSleep(g, clk)
	g.host(u).setCrawlDelay("x", 35*time.Second, g.rateFloor())
	if err := g.gateEnded(context.Background(), g.host(u), u, time.Minute); err != nil { // a page was just sent
		t.Fatal(err)
	}
	const timeout = 200 * time.Millisecond // the hop's wait takes 350 ms
	cache := &policy.Cache{
		Client:  &http.Client{Transport: &pacedTransport{g: g, next: http.DefaultTransport, timeout: timeout}},
		Timeout: timeout,
		Now:     clk.now,
	}
	e, err := cache.Get(context.Background(), u)
	if err != nil || e.State != policy.StateParsed {
		t.Fatalf("Get = %+v, %v; want StateParsed", e, err)
	}
	if n := s.count("/real-robots.txt"); n != 1 {
		t.Errorf("the second hop was sent %d times, want 1", n)
	}
}

// The hops of one robots.txt fetch share its timeout. A
// robots.txt that redirects five times, each hop answered after 150 ms,
// needs 900 ms; with 400 ms for the fetch the chain is cut after the third
// hop or so (each hop used to get the whole timeout: all six were sent).
func TestRobotsRedirectChainSharesTimeout(t *testing.T) {
	s := newSite(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(150 * time.Millisecond):
		case <-r.Context().Done():
			return
		}
		var n int
		if r.URL.Path != "/robots.txt" {
			fmt.Sscanf(r.URL.Path, "/hop%d", &n)
		}
		if n < 5 {
			http.Redirect(w, r, fmt.Sprintf("/hop%d", n+1), http.StatusFound)
			return
		}
		w.Write([]byte("User-agent: *\nDisallow: /private\n"))
	})
	g := &Guard{Rate: rate.Inf}
	const timeout = 400 * time.Millisecond
	cache := &policy.Cache{
		Client:  &http.Client{Transport: &pacedTransport{g: g, next: http.DefaultTransport, timeout: timeout}},
		Timeout: timeout,
	}
	e, err := cache.Get(context.Background(), mustURL(t, s.URL+"/page"))
	if err == nil || e.State != policy.StateUnreachable {
		t.Errorf("Get = state %v, %v; want unreachable: the chain needs more than its timeout", e.State, err)
	}
	if n := len(s.log()); n > 4 {
		t.Errorf("the server saw %d hops of the chain, want at most 4 in 400 ms of 150 ms hops", n)
	}
}

// 64 origins whose robots.txt stalls (as many as the
// Guard's robots.txt fetch slots) do not hold up the robots.txt of another
// origin: a stalled fetch gives its slot up after a quarter of its timeout,
// and the healthy origin's page is fetched while they still stall.
func TestHostileRobotsOriginsDoNotFreezeOthers(t *testing.T) {
	var mu sync.Mutex
	var healthyAt, firstStallEnd time.Time
	s := newSite(t, func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.HasPrefix(r.Host, "hostile"):
			<-r.Context().Done() // robots.txt never answers
			mu.Lock()
			if firstStallEnd.IsZero() {
				firstStallEnd = time.Now()
			}
			mu.Unlock()
		case r.URL.Path == "/robots.txt":
			w.Write([]byte("User-agent: *\nAllow: /\n"))
		default:
			mu.Lock()
			healthyAt = time.Now()
			mu.Unlock()
			w.Write([]byte("ok"))
		}
	})
	g := &Guard{Rate: rate.Inf, robotsLimit: 2 * time.Second}
	// The crawl ends once the healthy page was scraped: the hostile pages
	// would wait for their robots.txt to be tried again for minutes.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c := colly.NewCollector(colly.Async(), colly.StdlibContext(ctx))
	c.WithTransport(loopbackHosts(t, s))
	g.Attach(c)
	c.OnScraped(func(r *colly.Response) {
		if r.Request.URL.Host == "healthy.test" {
			cancel()
		}
	})
	for i := range defaultMaxRobotsFetches {
		c.Visit(fmt.Sprintf("http://hostile%d.test/page", i))
	}
	time.Sleep(50 * time.Millisecond) // the hostile fetches take every slot
	c.Visit("http://healthy.test/page")
	c.Wait()
	mu.Lock()
	defer mu.Unlock()
	if healthyAt.IsZero() || !firstStallEnd.IsZero() && !healthyAt.Before(firstStallEnd) {
		t.Errorf("healthy page fetched at %v, the first stalled robots.txt ended at %v; want the page first",
			healthyAt.Format("15:04:05.000"), firstStallEnd.Format("15:04:05.000"))
	}
}
