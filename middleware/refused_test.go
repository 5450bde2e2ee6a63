package robotsmw

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocolly/colly/v2"
	"golang.org/x/time/rate"
)

// userErrors records what a collector's OnError callbacks receive.
type userErrors struct {
	mu   sync.Mutex // guards errs
	errs map[string][]error
}

func (u *userErrors) watch(c *colly.Collector) {
	c.OnError(func(r *colly.Response, err error) {
		u.mu.Lock()
		defer u.mu.Unlock()
		if u.errs == nil {
			u.errs = make(map[string][]error)
		}
		u.errs[r.Request.URL.Path] = append(u.errs[r.Request.URL.Path], err)
	})
}

func (u *userErrors) get(path string) []error {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]error(nil), u.errs[path]...)
}

func TestRefusedResendReachesOnError(t *testing.T) {
	// Colly refuses the re-send of a deferred request
	// (MaxRequests); OnError must still get one final outcome.
	var mu sync.Mutex
	failed := false
	s := newSite(t, robots("", func(w http.ResponseWriter, r *http.Request) bool {
		mu.Lock()
		defer mu.Unlock()
		if r.URL.Path == "/flaky" && !failed {
			failed = true
			w.WriteHeader(http.StatusServiceUnavailable)
			return true
		}
		return false
	}))
	// max is MaxRequests. An asynchronous collector counts /a before
	// /flaky's retry, which colly then refuses. A synchronous one retries
	// /flaky in place before it visits /a: each retry counts against
	// MaxRequests (inplace.go), so with 2 the retry goes and /a is
	// refused by colly itself, and with 1 the retry is refused.
	for _, tc := range []struct {
		async      bool
		max        uint32
		refusedTry bool // /flaky's retry is refused, rather than /a
	}{
		{async: true, max: 2, refusedTry: true},
		{async: false, max: 2},
		{async: false, max: 1, refusedTry: true},
	} {
		mu.Lock()
		failed = false
		mu.Unlock()
		name := fmt.Sprintf("async=%v, MaxRequests(%d)", tc.async, tc.max)
		var rep reports
		g := withReports(&Guard{Rate: rate.Inf, Backoff: 20 * time.Millisecond}, &rep)
		c := colly.NewCollector(g.Attach, colly.MaxRequests(tc.max), colly.Async(tc.async))
		var ue userErrors
		ue.watch(c)
		before := s.count("/flaky") + s.count("/a")
		visitErrs := map[string]error{}
		for _, p := range []string{"/flaky", "/a"} {
			visitErrs[p] = c.Visit(s.URL + p)
		}
		c.Wait()
		if sent := s.count("/flaky") + s.count("/a") - before; sent > int(tc.max) {
			t.Errorf("%s: %d pages sent, want at most %d", name, sent, tc.max)
		}
		errs := ue.get("/flaky")
		if !tc.refusedTry {
			if len(errs) != 1 || IsFinal(errs[0]) {
				t.Errorf("%s: OnError(/flaky) got %v; want one deferral (its retry fetched it)", name, errs)
			}
			if err := visitErrs["/flaky"]; err != nil {
				t.Errorf("%s: Visit(/flaky) = %v, want nil", name, err)
			}
			if err := visitErrs["/a"]; !errors.Is(err, colly.ErrMaxRequests) {
				t.Errorf("%s: Visit(/a) = %v, want colly.ErrMaxRequests", name, err)
			}
			if got := rep.get(s.URL + "/flaky"); len(got) != 0 {
				t.Errorf("%s: ErrorHandler(/flaky) = %v, want nothing", name, got)
			}
			continue
		}
		// An asynchronous collector's deferral was reported before colly
		// refused its retry; a synchronous one's retry in place is known
		// to be refused before the failed attempt is reported: only the
		// final outcome is. Neither counts as retried.
		if tc.async && (len(errs) != 2 || IsFinal(errs[0])) {
			t.Errorf("%s: OnError(/flaky) got %v; want a deferral, then a final ErrGaveUp wrapping colly.ErrMaxRequests", name, errs)
		}
		if !tc.async && len(errs) != 1 {
			t.Errorf("%s: OnError(/flaky) got %v; want only a final ErrGaveUp wrapping colly.ErrMaxRequests", name, errs)
		}
		if last := errs[len(errs)-1:]; len(last) == 0 || !IsFinal(last[0]) || !errors.Is(last[0], ErrGaveUp) || !errors.Is(last[0], colly.ErrMaxRequests) {
			t.Errorf("%s: OnError(/flaky) got %v; want it to end with a final ErrGaveUp wrapping colly.ErrMaxRequests", name, errs)
		}
		if st := g.Stats().Total; st.Retried != 0 || st.Backoffs != 1 {
			t.Errorf("%s: Stats().Total Retried %d, Backoffs %d; want 0 (the retry was not sent), 1", name, st.Retried, st.Backoffs)
		}
		if got := rep.get(s.URL + "/flaky"); len(got) != 1 || !errors.Is(got[0], colly.ErrMaxRequests) {
			t.Errorf("%s: ErrorHandler(/flaky) = %v, want one, wrapping colly.ErrMaxRequests", name, got)
		}
		if err := visitErrs["/flaky"]; !tc.async && (!IsFinal(err) || !errors.Is(err, colly.ErrMaxRequests)) {
			t.Errorf("%s: Visit(/flaky) = %v, want the final ErrGaveUp wrapping colly.ErrMaxRequests", name, err)
		}
	}
}

func TestDeferredAfterCrawlEndReachesOnErrorBeforeWait(t *testing.T) {
	// A request deferred when the crawl's context
	// ends gets one final outcome in OnError, and no callback runs after
	// Wait returned.
	s := newSite(t, robots("", func(w http.ResponseWriter, r *http.Request) bool {
		if r.URL.Path == "/busy" {
			w.Header().Set("Retry-After", "3600")
			w.WriteHeader(http.StatusServiceUnavailable)
			return true
		}
		return false
	}))
	ctx, cancel := context.WithCancel(context.Background())
	var rep reports
	g := withReports(&Guard{Rate: rate.Inf}, &rep)
	c := colly.NewCollector(g.Attach, colly.StdlibContext(ctx), colly.Async(true))
	var mu sync.Mutex
	waited := false
	var late, finals int
	c.OnError(func(r *colly.Response, err error) {
		mu.Lock()
		defer mu.Unlock()
		if waited {
			late++
		}
		if IsFinal(err) {
			finals++
		}
		if !IsFinal(err) {
			go cancel() // deferred for an hour: end the crawl
		}
	})
	c.Visit(s.URL + "/busy")
	c.Wait()
	mu.Lock()
	waited = true
	gotFinals := finals
	mu.Unlock()
	time.Sleep(100 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	if gotFinals != 1 || late != 0 {
		t.Errorf("OnError: %d final outcomes before Wait returned, %d callbacks after; want 1 and 0", gotFinals, late)
	}
	if n := s.count("/busy"); n != 1 {
		t.Errorf("/busy fetched %d times, want 1", n)
	}
}

func TestCrawlDeadlineIsFinalAndNotTheHosts(t *testing.T) {
	// The crawl's deadline
	// passes while the body is read. OnError and Visit get colly's own
	// error, the host is not struck, nothing is sent again.
	s := newSite(t, robots("", func(w http.ResponseWriter, r *http.Request) bool {
		if r.URL.Path == "/slow" {
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			select {
			case <-time.After(2 * time.Second):
			case <-r.Context().Done():
			}
			return true
		}
		return false
	}))
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	var rep reports
	g := withReports(&Guard{Rate: rate.Inf}, &rep)
	c := colly.NewCollector(g.Attach, colly.StdlibContext(ctx))
	var mu sync.Mutex
	var errs []error
	waited := false
	late := 0
	c.OnError(func(_ *colly.Response, err error) {
		mu.Lock()
		defer mu.Unlock()
		errs = append(errs, err)
		if waited {
			late++
		}
	})
	err := c.Visit(s.URL + "/slow")
	c.Wait()
	mu.Lock()
	waited = true
	mu.Unlock()
	if err != context.DeadlineExceeded {
		t.Errorf("Visit(/slow) = %#v, want context.DeadlineExceeded", err)
	}
	time.Sleep(100 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	if len(errs) != 1 || errs[0] != context.DeadlineExceeded || late != 0 {
		t.Errorf("OnError got %v (%d after Wait), want context.DeadlineExceeded once", errs, late)
	}
	st := g.Stats().Total
	if st.Retried != 0 || st.Backoffs != 0 || st.Deferred != 0 {
		t.Errorf("Stats: Retried %d, Backoffs %d, Deferred %d; want 0: the crawl's end is not the host's failure", st.Retried, st.Backoffs, st.Deferred)
	}
	// The ErrorHandler's final outcome says the request was sent.
	if got := rep.get(s.URL + "/slow"); len(got) != 1 || !errors.Is(got[0], ErrGaveUp) ||
		strings.Contains(got[0].Error(), "not sent") || !strings.Contains(got[0].Error(), "GET "+s.URL+"/slow") {
		t.Errorf("ErrorHandler(/slow) = %v, want one ErrGaveUp naming GET %s/slow, not \"not sent\"", got, s.URL)
	}
	if n := s.count("/slow"); n != 1 {
		t.Errorf("/slow fetched %d times, want 1", n)
	}
}

func TestDisallowedMatchesCollyRobotsTxtBlocked(t *testing.T) {
	// Code written for colly's own check keeps working.
	s := newSite(t, robots("User-agent: *\nDisallow: /private\n", nil))
	c := colly.NewCollector((&Guard{Rate: rate.Inf}).Attach)
	err := c.Visit(s.URL + "/private/x")
	if !errors.Is(err, colly.ErrRobotsTxtBlocked) || !errors.Is(err, ErrDisallowed) {
		t.Errorf("Visit(/private/x) = %v, want it to match colly.ErrRobotsTxtBlocked and ErrDisallowed", err)
	}
}

func TestRefusedResendUnseekableReachesOnError(t *testing.T) {
	// Colly refuses the re-send of a POST whose body
	// cannot be read again (colly.ErrRetryBodyUnseekable).
	s := newSite(t, robots("", func(w http.ResponseWriter, r *http.Request) bool {
		if r.URL.Path == "/busy" {
			w.WriteHeader(http.StatusServiceUnavailable)
			return true
		}
		return false
	}))
	var rep reports
	g := withReports(&Guard{Rate: rate.Inf, Backoff: 50 * time.Millisecond}, &rep)
	c := colly.NewCollector(g.Attach, colly.Async())
	var ue userErrors
	ue.watch(c)
	body := io.MultiReader(strings.NewReader("q=1")) // not an io.Seeker
	c.Request(http.MethodPost, s.URL+"/busy", body, nil, nil)
	c.Wait()
	errs := ue.get("/busy")
	if len(errs) != 2 || IsFinal(errs[0]) || !IsFinal(errs[1]) || !errors.Is(errs[1], colly.ErrRetryBodyUnseekable) {
		t.Errorf("OnError(/busy) got %v; want a deferral, then a final error wrapping colly.ErrRetryBodyUnseekable", errs)
	}
}

// A failed attempt counts as retried only if its retry is sent: not one
// that the crawl's end cuts off while it waits in place (a synchronous
// collector), nor one that colly refuses after a redirect to another
// host.
func TestRetriedOnlyIfSent(t *testing.T) {
	var onFlaky atomic.Pointer[func()]
	s := newSite(t, robots("", func(w http.ResponseWriter, r *http.Request) bool {
		if f := onFlaky.Load(); f != nil && r.URL.Path == "/flaky" {
			(*f)()
		}
		switch {
		case r.Host == "a.test" && r.URL.Path == "/start":
			http.Redirect(w, r, "http://b.test/page", http.StatusFound)
			return true
		case r.URL.Path == "/flaky" || r.Host == "b.test":
			w.Header().Set("Retry-After", "3")
			w.WriteHeader(http.StatusServiceUnavailable)
			return true
		}
		return false
	}))

	t.Run("sync, crawl ends while the retry waits", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		g := &Guard{Rate: rate.Inf}
		c := colly.NewCollector(g.Attach, colly.StdlibContext(ctx))
		// The crawl ends 100 ms after the server answered 503 with a
		// Retry-After of 3 s: while the retry waits in place.
		end := func() { time.AfterFunc(100*time.Millisecond, cancel) }
		onFlaky.Store(&end)
		defer onFlaky.Store(nil)
		if err := c.Visit(s.URL + "/flaky"); !IsFinal(err) {
			t.Errorf("Visit(/flaky) = %v, want a final error", err)
		}
		if st := g.Stats().Total; st.Retried != 0 {
			t.Errorf("Stats().Total.Retried = %d, want 0: the retry was never sent", st.Retried)
		}
		if hs := hostStats(g, "127.0.0.1"); hs.Retried != 0 {
			t.Errorf("Host(127.0.0.1).Retried = %d, want 0", hs.Retried)
		}
	})

	t.Run("async, colly refuses the retry of a redirected request", func(t *testing.T) {
		g := &Guard{Rate: rate.Inf, Backoff: 20 * time.Millisecond}
		c := colly.NewCollector(colly.Async(true), colly.MaxRequests(1))
		c.WithTransport(loopbackHosts(t, s))
		g.Attach(c)
		c.Visit("http://a.test/start")
		c.Wait()
		if st := g.Stats().Total; st.Retried != 0 {
			t.Errorf("Stats().Total.Retried = %d, want 0: colly refused the retry", st.Retried)
		}
		for _, name := range []string{"a.test", "b.test"} {
			if hs := hostStats(g, name); hs.Retried != 0 {
				t.Errorf("Host(%s).Retried = %d, want 0", name, hs.Retried)
			}
		}
	})
}
