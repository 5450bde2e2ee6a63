package robotsmw

import (
	"errors"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/gocolly/colly/v2"
	"golang.org/x/time/rate"
)

// A retry that comes due while a new request waits for its host in a
// colly callback goes after that request (colly's TestParseHTTPErrorResponse
// with one request in flight): visit 1 of /500 fails and is deferred to the
// end of its host's pause; visit 2, with ParseHTTPErrorResponse, waits for
// that end in its callback and is sent first, so the user gets the error
// page from the Visit that asked for it, and the retry's own failure cannot
// push visit 2 past MaxWait. Judged at the server: the order of arrivals.
func TestRetryGoesAfterWaitingRequest(t *testing.T) {
	var mu sync.Mutex // guards arrivals
	var arrivals []string
	s := newSite(t, robots("", func(w http.ResponseWriter, r *http.Request) bool {
		if r.URL.Path != "/500" {
			return false
		}
		mu.Lock()
		arrivals = append(arrivals, r.Header.Get("X-Visit"))
		mu.Unlock()
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusInternalServerError)
		w.Write([]byte("<p>error</p>"))
		return true
	}))
	for i := range 8 {
		mu.Lock()
		arrivals = nil
		mu.Unlock()
		var gaveUp []error
		g := &Guard{Rate: rate.Inf, Backoff: 600 * time.Millisecond, MaxRetries: 1, MaxRobotsFailures: 1,
			ErrorHandler: func(_ *colly.Request, err error) {
				mu.Lock()
				gaveUp = append(gaveUp, err)
				mu.Unlock()
			}}
		c := colly.NewCollector(g.Attach, colly.AllowURLRevisit())
		c.OnRequest(func(r *colly.Request) { r.Headers.Set("X-Visit", r.Ctx.Get("visit")) })
		var parsed []string
		c.OnHTML("p", func(e *colly.HTMLElement) { parsed = append(parsed, e.Request.Ctx.Get("visit")) })
		visit := func(n string) error {
			ctx := colly.NewContext()
			ctx.Put("visit", n)
			return c.Request("GET", s.URL+"/500", nil, ctx, nil)
		}

		err1 := visit("1")
		if !errors.Is(err1, ErrDeferred) {
			t.Fatalf("run %d: Request(/500) #1 = %v, want a *DeferredError", i, err1)
		}
		c.ParseHTTPErrorResponse = true
		visit("2")
		if !slices.Equal(parsed, []string{"2"}) {
			t.Errorf("run %d: Request(/500) #2 with ParseHTTPErrorResponse: error page parsed for visits %q, want [2]", i, parsed)
		}
		waitOrFail(t, "Wait", c.Wait)

		mu.Lock()
		got, n := slices.Clone(arrivals), len(gaveUp)
		mu.Unlock()
		if len(got) < 3 || !slices.Equal(got[:2], []string{"1", "2"}) || slices.Contains(got[2:], "2") {
			t.Errorf("run %d: the server saw visits %q, want 1, 2, then the retries of visit 1", i, got)
		}
		if n != 1 || !errors.Is(gaveUp[0], ErrGaveUp) {
			t.Errorf("run %d: ErrorHandler got %v, want one ErrGaveUp (the retry of visit 1)", i, gaveUp)
		}
	}
}

// mayGo: a due retry waits while requests wait for its host, goes after
// two looks that found none, and stops yielding at its yieldEnd (MaxWait
// after its first look) even if requests keep waiting.
func TestMayGo(t *testing.T) {
	g := &Guard{}
	u := mustURL(t, "http://yield.test/p")
	unknown := &laterItem{r: &colly.Request{URL: mustURL(t, "http://other.test/p")}}
	if !g.mayGo(unknown) {
		t.Error("mayGo(retry to a host not kept) = false, want true")
	}
	h := g.host(u)
	it := &laterItem{r: &colly.Request{URL: u}}
	for i, step := range []struct {
		queued int32
		ended  bool // yieldEnd moved to the past before the look
		want   bool
	}{
		{1, false, false}, // requests wait: yield
		{0, false, false}, // first look with none: look once more
		{1, false, false}, // one came: yield again
		{0, false, false},
		{0, false, true}, // two looks with none: go
		{1, true, true},  // still waiting, but MaxWait has passed
	} {
		h.queued.Store(step.queued)
		if step.ended {
			it.yieldEnd = time.Now().Add(-time.Millisecond)
		}
		if got := g.mayGo(it); got != step.want {
			t.Errorf("look %d: mayGo with %d waiting = %v, want %v", i+1, step.queued, got, step.want)
		}
	}
	if it.yieldEnd.IsZero() {
		t.Error("mayGo set no yieldEnd")
	}
}
