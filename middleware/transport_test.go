package robotsmw

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gocolly/colly/v2"
	"golang.org/x/time/rate"

	"github.com/robotsmw/robotsmw/policy"
)

// The Guard's own robots.txt fetch of a new origin on a busy host waits
// for its slot in the host's schedule, and that wait does not count
// against the fetch's timeout: with 2.4 s of pages of another origin of
// the host waiting and a cache Timeout of 1 s, robots.txt is fetched once
// and not recorded as unreachable, and every page of both origins is
// fetched once. The test waits until the pages hold their places before
// it visits the new origin, and asserts only what the server saw, not in
// which order requests that wait at once pass the gate (which depends on
// which goroutine wakes first).
func TestRobotsFetchNotStarvedByPages(t *testing.T) {
	a := newSite(t, robots("", nil))
	b := newSite(t, robots("", nil))
	var rep reports
	g := withReports(&Guard{Rate: rate.Every(150 * time.Millisecond)}, &rep)
	g.Cache = &policy.Cache{
		Client:  &http.Client{Transport: &pacedTransport{g: g, next: http.DefaultTransport}},
		Timeout: time.Second,
	}
	c := colly.NewCollector(g.Attach, colly.Async())
	const pages = 16 // 2.4 s of slots, beyond the cache's 1 s timeout
	for i := 0; i < pages; i++ {
		c.Visit(fmt.Sprintf("%s/p%d", a.URL, i))
	}
	// A's pages hold their places in the host's schedule (both sites are
	// on 127.0.0.1, one host): all of them but the one sent are waiting.
	sent := func() int {
		n := 0
		for _, h := range a.log() {
			if strings.HasPrefix(h.path, "/p") {
				n++
			}
		}
		return n
	}
	host := strings.ToLower(mustURL(t, a.URL).Hostname())
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if h := g.hosts.lookup(host); h != nil && int(h.queued.Load())+sent() >= pages-1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("A's pages never took their places in the host's schedule")
		}
	}
	c.Visit(b.URL + "/page")
	c.Wait()

	if rep.len() != 0 {
		t.Errorf("ErrorHandler got %v, want nothing", rep.errs)
	}
	if n := b.count("/robots.txt"); n != 1 {
		t.Fatalf("server B received robots.txt %d times, want 1", n)
	}
	if n := b.count("/page"); n != 1 {
		t.Errorf("server B received /page %d times, want 1", n)
	}
	if n := sent(); n != pages {
		t.Errorf("server A received %d pages, want %d", n, pages)
	}
}

// sendsAsIs: a robots.txt hop goes on its fetch's context as it is only
// when that context's deadline is the hop's budget's end, or at most
// hopSlack before it, and no crawl that can end is carried.
func TestSendsAsIs(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	const left = 30 * time.Second
	crawl, stop := context.WithCancel(context.Background())
	defer stop()
	tests := []struct {
		name     string
		deadline time.Duration // from now; 0: none
		crawl    bool
		want     bool
	}{
		{"no deadline", 0, false, false},
		{"the budget's end", left, false, true},
		{"a few ms before it (the fetch started then)", left - 3*time.Millisecond, false, true},
		{"hopSlack before it", left - hopSlack, false, true},
		{"more than hopSlack before it (a wait at the gate)", left - hopSlack - time.Millisecond, false, false},
		{"after it", left + time.Millisecond, false, false},
		{"the budget's end, in a crawl that can end", left, true, false},
	}
	for _, tt := range tests {
		ctx := context.Background()
		if tt.crawl {
			ctx = context.WithValue(ctx, crawlKey{}, crawl)
		}
		if tt.deadline != 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithDeadline(ctx, now.Add(tt.deadline))
			defer cancel()
		}
		if got := sendsAsIs(ctx, now, left); got != tt.want {
			t.Errorf("sendsAsIs(%s) = %v, want %v", tt.name, got, tt.want)
		}
	}
}

// A robots.txt hop that passes its gate at once, on a context whose
// deadline is its budget's end, is sent on that context as it is; one
// whose fetch's deadline came much earlier (time spent waiting at a gate)
// goes on a context of its own, bounded by its budget.
func TestPacedTransportSendsAsIs(t *testing.T) {
	g := &Guard{Rate: rate.Inf}
	var sent context.Context
	rt := &pacedTransport{g: g, timeout: time.Hour, next: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		sent = r.Context()
		return emptyRobots(r), nil
	})}
	for _, tt := range []struct {
		name     string
		deadline time.Duration
		asIs     bool
	}{
		{"deadline at the budget's end", time.Hour, true},
		{"deadline a minute before it", time.Hour - time.Minute, false},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), tt.deadline)
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://example.test/robots.txt", nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := rt.RoundTrip(req)
		if err != nil {
			t.Fatalf("%s: RoundTrip = %v", tt.name, err)
		}
		resp.Body.Close()
		if asIs := sent == ctx; asIs != tt.asIs {
			t.Errorf("%s: sent on the fetch's context as it is: %v, want %v", tt.name, asIs, tt.asIs)
		}
		if !tt.asIs {
			if dl, ok := sent.Deadline(); !ok || dl.Before(time.Now().Add(time.Hour-time.Minute)) {
				t.Errorf("%s: sent with deadline %v (%v), want the hop's budget of an hour", tt.name, dl, ok)
			}
			if sent.Err() == nil {
				t.Errorf("%s: the hop's context lives on after its body was closed", tt.name)
			}
		}
		cancel()
	}
}
