package robotsmw

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocolly/colly/v2"
	"golang.org/x/time/rate"
)

// failsafe only keeps a broken test from hanging; no test asserts speed.
const failsafe = 10 * time.Second

// blockingSleep makes g's sleeps on clk wait until their context ends or a
// value arrives on release, and tells waiting how long each one asked for.
func blockingSleep(g *Guard, clk *fakeClock) (waiting chan time.Duration, release chan struct{}) {
	waiting, release = make(chan time.Duration, 8), make(chan struct{})
	g.sleep = func(ctx context.Context, d time.Duration) error {
		waiting <- d
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-release:
			clk.advance(d)
			return nil
		}
	}
	return waiting, release
}

// settleGoroutines waits (up to failsafe) until no more goroutines run
// than before, and reports it if that never happens.
func settleGoroutines(t *testing.T, before int) {
	t.Helper()
	deadline := time.Now().Add(failsafe)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Errorf("%d goroutines left, %d before", n, before)
	}
}

// A robots.txt fetch waiting for its host's long pause ends when the crawl
// is cancelled: when the request's own context is cancelled, and when the
// crawl carried in it ends, also behind the policy.Cache's WithoutCancel
// and deadline. Nothing is sent and no goroutine is left.
func TestPacedTransportCancelEndsPause(t *testing.T) {
	errStop := errors.New("stop")
	tests := []struct {
		name string
		// reqCtx returns the fetch's context and the function that
		// cancels the crawl.
		reqCtx func() (context.Context, func())
	}{
		{"request context cancelled", func() (context.Context, func()) {
			ctx, cancel := context.WithCancel(context.Background())
			ctx, cancelT := context.WithTimeout(ctx, time.Hour)
			return ctx, func() { cancel(); cancelT() }
		}},
		{"request context cancelled with cause", func() (context.Context, func()) {
			ctx, cancel := context.WithCancelCause(context.Background())
			return ctx, func() { cancel(errStop) }
		}},
		{"crawl behind the cache's WithoutCancel", func() (context.Context, func()) {
			crawl, cancel := context.WithCancel(context.Background())
			c := colly.NewCollector(colly.StdlibContext(crawl))
			ctx, cancelT := context.WithTimeout(context.WithoutCancel(withCrawl(crawl, c)), time.Hour)
			return ctx, func() { cancel(); cancelT() }
		}},
	}
	for _, tt := range tests {
		before := runtime.NumGoroutine()
		clk := newFakeClock()
		g := fakeGuard(&Guard{Rate: rate.Inf}, clk, 0)
		waiting, _ := blockingSleep(g, clk)
		u := &url.URL{Scheme: "http", Host: "example.test", Path: "/robots.txt"}
		g.host(u).strike(clk.now(), hard, 2*time.Hour, true, time.Second, time.Hour, 0, 0)
		var sent atomic.Int64
		rt := &pacedTransport{g: g, next: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			sent.Add(1)
			return emptyRobots(r), nil
		})}
		ctx, cancel := tt.reqCtx()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
		if err != nil {
			t.Fatal(err)
		}
		done := roundTripAsync(rt, req)
		select {
		case d := <-waiting:
			if d != 2*time.Hour {
				t.Errorf("%s: RoundTrip waited for %v, want the host's pause of 2h", tt.name, d)
			}
		case <-time.After(failsafe):
			t.Fatalf("%s: RoundTrip never waited for the host's pause", tt.name)
		}
		cancel()
		select {
		case err := <-done:
			if !errors.Is(err, context.Canceled) {
				t.Errorf("%s: RoundTrip = %v, want an error wrapping context.Canceled", tt.name, err)
			}
		case <-time.After(failsafe):
			t.Fatalf("%s: RoundTrip did not return after the crawl was cancelled", tt.name)
		}
		if n := sent.Load(); n != 0 {
			t.Errorf("%s: %d requests sent, want 0", tt.name, n)
		}
		settleGoroutines(t, before)
	}
}

// The wait for the host is not bounded by the fetch's deadline: once the
// pause is over the request is sent, with the deadline's budget.
func TestPacedTransportDeadlineDoesNotEndWait(t *testing.T) {
	clk := newFakeClock()
	g := fakeGuard(&Guard{Rate: rate.Inf}, clk, 0)
	waiting, release := blockingSleep(g, clk)
	u := &url.URL{Scheme: "http", Host: "example.test", Path: "/robots.txt"}
	g.host(u).strike(clk.now(), hard, 2*time.Hour, true, time.Second, time.Hour, 0, 0)
	var sendDeadline atomic.Bool
	rt := &pacedTransport{g: g, next: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		_, ok := r.Context().Deadline()
		sendDeadline.Store(ok)
		return emptyRobots(r), r.Context().Err()
	})}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		t.Fatal(err)
	}
	done := roundTripAsync(rt, req)
	<-waiting
	<-ctx.Done() // the fetch's deadline passes while it waits
	select {
	case err := <-done:
		t.Fatalf("RoundTrip = %v when its deadline passed, want it still waiting", err)
	default:
	}
	close(release)
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("RoundTrip after the pause = %v, want nil", err)
		}
	case <-time.After(failsafe):
		t.Fatal("RoundTrip did not return after the pause")
	}
	if !sendDeadline.Load() {
		t.Errorf("request sent without a deadline, want the fetch's budget")
	}
}

// A page of a host paused for hours is deferred to the pause's end without
// starting a robots.txt fetch that would only wait for it (and hold one of
// the Cache's MaxFetches slots). Cancelling the collector's context
// reports the page with context.Canceled at once, sends nothing, caches
// no verdict and leaves no goroutine.
func TestCrawlCancelEndsDeferredPage(t *testing.T) {
	s := newSite(t, robots("", nil))
	u, err := url.Parse(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	before := runtime.NumGoroutine()
	clk := newFakeClock()
	var rep reports
	g := fakeGuard(withReports(&Guard{Rate: rate.Inf}, &rep), clk, 0)
	waiting, _ := blockingSleep(g, clk)
	g.host(u).strike(clk.now(), hard, 2*time.Hour, true, time.Second, time.Hour, 0, 0)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := colly.NewCollector(g.Attach, colly.Async(), colly.StdlibContext(ctx))
	var userErrs []error
	var mu sync.Mutex
	c.OnError(func(_ *colly.Response, err error) {
		mu.Lock()
		userErrs = append(userErrs, err)
		mu.Unlock()
	})
	if err := c.Visit(s.URL + "/page"); err != nil {
		t.Fatalf("Visit(/page) = %v", err)
	}
	select {
	case d := <-waiting:
		if d < time.Hour {
			t.Errorf("the deferred page waits %v, want the pause (2h)", d)
		}
	case <-time.After(failsafe):
		t.Fatal("the page was never deferred")
	}
	if st := g.Stats(); st.Waiting != 1 || st.Total.Deferred != 1 {
		t.Errorf("Stats() Waiting, Deferred = %d, %d; want 1, 1", st.Waiting, st.Total.Deferred)
	}
	cancel()
	c.Wait()
	if errs := rep.get(s.URL + "/page"); len(errs) != 1 || !errors.Is(errs[0], context.Canceled) || !errors.Is(errs[0], ErrGaveUp) {
		t.Errorf("ErrorHandler(/page) = %v, want ErrGaveUp with context.Canceled", errs)
	}
	mu.Lock()
	if len(userErrs) != 2 || !errors.Is(userErrs[0], ErrDeferred) || !IsFinal(userErrs[1]) || !errors.Is(userErrs[1], context.Canceled) {
		t.Errorf("OnError got %v, want a deferral, then the final context.Canceled", userErrs)
	}
	mu.Unlock()
	settleGoroutines(t, before)
	if n := len(s.log()); n != 0 {
		t.Errorf("server received %d requests, want 0", n)
	}
	if e, ok := g.cacheFor(c, nil).Peek(u); ok {
		t.Errorf("Peek(%s) = %+v, want nothing cached", u, e)
	}
}

// roundTripAsync sends req through rt on its own goroutine and delivers the
// error, closing any response body.
func roundTripAsync(rt http.RoundTripper, req *http.Request) <-chan error {
	done := make(chan error, 1)
	go func() {
		resp, err := rt.RoundTrip(req)
		if resp != nil {
			resp.Body.Close()
		}
		done <- err
	}()
	return done
}

// The end of one crawl (its deadline, or a cancel) cuts a robots.txt fetch
// it started without making that robots.txt the site's failure: the Guard
// is shared by crawls that did not end. Another collector waiting for the
// same fetch, and one that starts after the crawl ended, fetch robots.txt
// again and get their pages at once: nothing is deferred, no host is
// struck, no robots.txt failure is counted.
func TestCrawlEndAbandonsRobotsFetch(t *testing.T) {
	for _, end := range []string{"deadline", "cancel"} {
		var fetches atomic.Int32
		requested, release := make(chan struct{}, 8), make(chan struct{})
		s := newSite(t, func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/robots.txt" {
				if fetches.Add(1) == 1 {
					requested <- struct{}{}
					select { // until the crawl's end cuts it, or the test lets it go
					case <-r.Context().Done():
						return
					case <-release:
					}
				}
				w.Write([]byte("User-agent: *\nDisallow: /private\n"))
				return
			}
			w.Write([]byte("ok"))
		})
		g := &Guard{Rate: rate.Inf}
		ctx1, cancel1 := context.WithCancel(context.Background())
		if end == "deadline" {
			ctx1, cancel1 = context.WithTimeout(context.Background(), 200*time.Millisecond)
		}
		var mu sync.Mutex
		var errs2 []error
		var pages []string
		collect := func(c *colly.Collector) {
			c.OnError(func(r *colly.Response, err error) {
				mu.Lock()
				errs2 = append(errs2, err)
				mu.Unlock()
			})
			c.OnResponse(func(r *colly.Response) {
				mu.Lock()
				pages = append(pages, r.Request.URL.Path)
				mu.Unlock()
			})
		}
		c1 := colly.NewCollector(g.Attach, colly.Async(), colly.StdlibContext(ctx1))
		c2 := colly.NewCollector(g.Attach, colly.Async())
		collect(c2)
		if err := c1.Visit(s.URL + "/p1"); err != nil {
			t.Fatalf("%s: c1.Visit(/p1) = %v", end, err)
		}
		select {
		case <-requested:
		case <-time.After(failsafe):
			t.Fatalf("%s: robots.txt was never asked for", end)
		}
		if err := c2.Visit(s.URL + "/p2"); err != nil { // waits for the same fetch
			t.Fatalf("%s: c2.Visit(/p2) = %v", end, err)
		}
		if end == "cancel" {
			cancel1()
		}
		<-ctx1.Done()
		c1.Wait()
		close(release) // robots.txt answers whoever still asks
		c2.Wait()
		c3 := colly.NewCollector(g.Attach, colly.Async()) // a later crawl on the same Guard
		collect(c3)
		if err := c3.Visit(s.URL + "/p3"); err != nil {
			t.Fatalf("%s: c3.Visit(/p3) = %v", end, err)
		}
		c3.Wait()
		cancel1()
		mu.Lock()
		if len(errs2) != 0 || !slices.Contains(pages, "/p2") || !slices.Contains(pages, "/p3") {
			t.Errorf("%s: the crawls that did not end got errors %v and pages %v, want /p2 and /p3 and no error", end, errs2, pages)
		}
		mu.Unlock()
		st := g.Stats()
		if st.Robots.Unreachable != 0 || st.Robots.Timeout != 0 || st.Total.Backoffs != 0 || st.Total.Deferred != 0 || st.PausedHosts != 0 {
			t.Errorf("%s: Stats() = Robots %+v, Backoffs %d, Deferred %d, PausedHosts %d; want no robots.txt failure, back-off or deferral",
				end, st.Robots, st.Total.Backoffs, st.Total.Deferred, st.PausedHosts)
		}
	}
}
