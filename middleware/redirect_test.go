package robotsmw

import (
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gocolly/colly/v2"
	"golang.org/x/time/rate"
)

// A same-host redirect whose hop must wait for the host's spacing longer
// than the client's timeout allows is deferred and resumed at the hop, not
// sent late, struck as a network error and retried from the start.
//
// Deferring is for asynchronous collectors. A synchronous one waits in
// place (inplace.go): with the timeout set before Attach, the Guard's
// transport bounds each hop from its gate, and the hop waits for its
// host and is sent; set after Attach, net/http bounds the whole call, and
// the request ends at once with an error naming the client's timeout, the
// hop unsent.
func TestRedirectHopWaitBoundedByTimeout(t *testing.T) {
	s := newSite(t, robots("User-agent: *\nCrawl-delay: 1.5\n", func(w http.ResponseWriter, r *http.Request) bool {
		if strings.HasPrefix(r.URL.Path, "/a") {
			http.Redirect(w, r, "/b"+strings.TrimPrefix(r.URL.Path, "/a"), http.StatusFound)
			return true
		}
		return false
	}))
	for i, tc := range []struct {
		async, before bool
		fetched       bool // /b is fetched; else the request gives up
	}{
		{async: true, fetched: true},
		{async: false, before: true, fetched: true},
		{async: false},
	} {
		name := fmt.Sprintf("async=%v, timeout before Attach=%v", tc.async, tc.before)
		a, b := fmt.Sprintf("/a%d", i), fmt.Sprintf("/b%d", i)
		var rep reports
		g := withReports(&Guard{Rate: rate.Inf}, &rep)
		c := colly.NewCollector(colly.Async(tc.async))
		if tc.before {
			c.SetRequestTimeout(1 * time.Second)
		}
		g.Attach(c)
		if !tc.before {
			c.SetRequestTimeout(1 * time.Second)
		}
		var got []string
		c.OnResponse(func(r *colly.Response) { got = append(got, r.Request.URL.Path) })
		err := c.Visit(s.URL + a)
		c.Wait()
		if n := s.count(a); n != 1 {
			t.Errorf("%s: server received %s %d times, want 1", name, a, n)
		}
		hs := hostStats(g, "127.0.0.1")
		if !tc.fetched {
			if !IsFinal(err) || !errors.Is(err, ErrGaveUp) || !strings.Contains(err.Error(), "client's timeout") {
				t.Errorf("%s: Visit(%s) = %v, want a final ErrGaveUp naming the client's timeout", name, a, err)
			}
			if n := s.count(b); n != 0 {
				t.Errorf("%s: server received %s %d times, want 0", name, b, n)
			}
			if len(got) != 0 || rep.len() != 1 {
				t.Errorf("%s: OnResponse saw %v, ErrorHandler %v; want nothing and the final error", name, got, rep.errs)
			}
			if hs.Backoffs != 0 || hs.Sent != 2 {
				t.Errorf("%s: Stats = %+v, want Backoffs 0, Sent 2 (robots.txt, %s)", name, hs, a)
			}
			continue
		}
		if !tc.async && err != nil {
			t.Errorf("%s: Visit(%s) = %v, want nil", name, a, err)
		}
		if n := s.count(b); n != 1 {
			t.Errorf("%s: server received %s %d times, want 1", name, b, n)
		}
		if len(got) != 1 || got[0] != b {
			t.Errorf("%s: OnResponse saw %v, want [%s]", name, got, b)
		}
		if rep.len() != 0 {
			t.Errorf("%s: ErrorHandler got %v, want nothing", name, rep.errs)
		}
		if hs.Backoffs != 0 || hs.Sent != 3 {
			t.Errorf("%s: Stats = %+v, want Backoffs 0, Sent 3 (robots.txt, %s, %s)", name, hs, a, b)
		}
	}
}

// chainSite serves /loop/N, which redirects to /loop/N+1 without end,
// /two/X, which redirects to /one/two/X, which redirects to
// /filtered/one/two/X, and /r/X, which redirects to /ok/r/X.
func chainSite(t *testing.T) *site {
	return newSite(t, robots("", func(w http.ResponseWriter, r *http.Request) bool {
		p := r.URL.Path
		switch {
		case strings.HasPrefix(p, "/loop/"):
			n, _ := strconv.Atoi(strings.TrimPrefix(p, "/loop/"))
			http.Redirect(w, r, "/loop/"+strconv.Itoa(n+1), http.StatusFound)
		case strings.HasPrefix(p, "/two/"):
			http.Redirect(w, r, "/one"+p, http.StatusFound)
		case strings.HasPrefix(p, "/one/"):
			http.Redirect(w, r, "/filtered"+p, http.StatusFound)
		case strings.HasPrefix(p, "/r/"):
			http.Redirect(w, r, "/ok"+p, http.StatusFound)
		default:
			return false
		}
		return true
	}))
}

// visitCount returns the number of keys g's index of visits holds.
func visitCount(g *Guard) int { return g.visits.count() }

// Redirect chains that end without the Guard's transport taking the last
// hop leave nothing that outlives the request: a chain cut after 10 hops
// and returned to OnResponse (ParseHTTPErrorResponse) leaves no visit, and
// neither does a hop that colly's URL filter refuses before the Guard's
// redirect handler runs (after a sweep, at the latest, once the request
// is gone).
func TestRedirectVisitsDoNotOutliveRequests(t *testing.T) {
	s := chainSite(t)
	for _, async := range []bool{false, true} {
		g := &Guard{Rate: rate.Inf, InFlight: 4}
		c := colly.NewCollector(g.Attach, colly.Async(async), colly.DisallowedURLFilters(regexp.MustCompile("/filtered")))
		c.ParseHTTPErrorResponse = true
		for i := 0; i < 5; i++ {
			c.Visit(fmt.Sprintf("%s/loop/%d000", s.URL, i))
		}
		waitOrFail(t, "Wait", c.Wait)
		if n := visitCount(g); n != 0 {
			t.Errorf("async=%v: Visit(/loop/…) ×5 left %d visits, want 0", async, n)
		}
		for i := 0; i < 5; i++ {
			c.Visit(fmt.Sprintf("%s/two/%d", s.URL, i))
		}
		waitOrFail(t, "Wait", c.Wait)
		c = nil
		runtime.GC()
		g.visits.mu.Lock()
		g.visits.sweep()
		g.visits.mu.Unlock()
		if n := visitCount(g); n != 0 {
			t.Errorf("async=%v: Visit(/two/…) ×5 left %d visits after a sweep, want 0", async, n)
		}
	}
}

// A WithTransport after Attach replaces the Guard's transport but not its
// redirect handler, which gives each hop a lease of its host's in-flight
// place: the lease of each hop is given back when the next hop or the
// chain's response arrives, so later redirects to the host are not held
// up (they were deferred for want of the leaked place).
func TestRedirectLeaseWithoutGuardTransport(t *testing.T) {
	s := chainSite(t)
	g := &Guard{Rate: rate.Inf, MaxWait: 300 * time.Millisecond}
	c := colly.NewCollector()
	g.Attach(c)
	c.WithTransport(&http.Transport{})
	for i := 0; i < 3; i++ {
		if err := c.Visit(fmt.Sprintf("%s/r/%d", s.URL, i)); err != nil {
			t.Errorf("Visit(/r/%d) = %v, want nil", i, err)
		}
	}
	for i := 0; i < 3; i++ { // two hops each
		if err := c.Visit(fmt.Sprintf("%s/two/%d", s.URL, i)); err != nil {
			t.Errorf("Visit(/two/%d) = %v, want nil", i, err)
		}
	}
	if n := visitCount(g); n != 0 {
		t.Errorf("%d visits left, want 0", n)
	}
	if st := g.Stats().Total; st.Deferred != 0 {
		t.Errorf("Stats = %+v, want Deferred 0", st)
	}
}

// A redirect colly does not follow is its request's final response, and
// counts as its page in Stats, as a 404 does: one its limit of 10 hops
// stops at (/loop/…), one whose next hop a URL filter refuses (/two/…),
// and one to a page visited already (/r/0 redirects to /ok/r/0, fetched
// before).
func TestRedirectNotFollowedCountsAPage(t *testing.T) {
	s := chainSite(t)
	for _, async := range []bool{false, true} {
		g := &Guard{Rate: rate.Inf, InFlight: 4}
		c := colly.NewCollector(g.Attach, colly.Async(async), colly.DisallowedURLFilters(regexp.MustCompile("/filtered")))
		var mu sync.Mutex
		errs := 0
		c.OnError(func(_ *colly.Response, err error) {
			mu.Lock()
			errs++
			mu.Unlock()
		})
		if err := c.Visit(s.URL + "/ok/r/0"); err != nil {
			t.Fatalf("async=%v: Visit(/ok/r/0): %v", async, err)
		}
		c.Wait()
		for _, p := range []string{"/loop/0", "/two/0", "/r/0"} {
			c.Visit(s.URL + p)
		}
		c.Wait()
		st := g.Stats()
		if st.Total.Pages != 4 || errs != 3 || st.Total.GaveUp != 0 || st.Total.Blocked != 0 {
			t.Errorf("async=%v: /ok/r/0, then /loop/0, /two/0 and /r/0 (redirects not followed): Stats.Total.Pages %d, GaveUp %d, Blocked %d, OnError %d times; want 4 pages and 3 errors",
				async, st.Total.Pages, st.Total.GaveUp, st.Total.Blocked, errs)
		}
		if b := st.Busiest; len(b) != 1 || b[0].Pages != 4 {
			t.Errorf("async=%v: Stats.Busiest = %+v, want one host with 4 pages", async, b)
		}
	}
}

// With the Guard's transport replaced after Attach, no page is counted
// (the Guard sees none of the responses), and neither is the last
// response of a chain colly's limit of 10 hops stops at.
func TestRedirectLimitUncountedWithoutGuardTransport(t *testing.T) {
	s := chainSite(t)
	g := &Guard{Rate: rate.Inf, InFlight: 4}
	c := colly.NewCollector(g.Attach)
	c.WithTransport(http.DefaultTransport)
	c.Visit(s.URL + "/loop/0")
	c.Wait()
	if n := g.Stats().Total.Pages; n != 0 {
		t.Errorf("Visit(/loop/0) through a transport other than the Guard's: Stats.Total.Pages = %d, want 0", n)
	}
}
