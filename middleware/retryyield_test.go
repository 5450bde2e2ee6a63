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
// colly callback goes after that request: the yield of an asynchronous
// collector's deferral queue, which TestMayGo checks. A synchronous
// collector (colly's TestParseHTTPErrorResponse) has no request waiting
// beside a retry: it retries in place (inplace.go), so visit 1 of /500
// fails, is retried and gives up inside its own Request call, and visit 2,
// with ParseHTTPErrorResponse, then gets the error page from the Request
// that asked for it. Judged at the server: the order of arrivals.
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
	var gaveUp []error
	g := &Guard{Rate: rate.Inf, Backoff: 100 * time.Millisecond, MaxRetries: 1, MaxRobotsFailures: 1,
		ErrorHandler: func(_ *colly.Request, err error) { gaveUp = append(gaveUp, err) }}
	c := colly.NewCollector(g.Attach, colly.AllowURLRevisit())
	c.OnRequest(func(r *colly.Request) { r.Headers.Set("X-Visit", r.Ctx.Get("visit")) })
	var parsed []string
	c.OnHTML("p", func(e *colly.HTMLElement) { parsed = append(parsed, e.Request.Ctx.Get("visit")) })
	visit := func(n string) error {
		ctx := colly.NewContext()
		ctx.Put("visit", n)
		return c.Request("GET", s.URL+"/500", nil, ctx, nil)
	}

	if err := visit("1"); !IsFinal(err) || !errors.Is(err, ErrGaveUp) {
		t.Fatalf("Request(/500) (1) = %v, want the final ErrGaveUp after its retry in place", err)
	}
	c.ParseHTTPErrorResponse = true
	visit("2")
	if !slices.Equal(parsed, []string{"2"}) {
		t.Errorf("Request(/500) (2) with ParseHTTPErrorResponse: error page parsed for visits %q, want [2]", parsed)
	}
	waitOrFail(t, "Wait", c.Wait)

	mu.Lock()
	got := slices.Clone(arrivals)
	mu.Unlock()
	if !slices.Equal(got, []string{"1", "1", "2"}) {
		t.Errorf("the server saw visits %q, want 1, its retry, then 2", got)
	}
	if len(gaveUp) != 1 || !errors.Is(gaveUp[0], ErrGaveUp) {
		t.Errorf("ErrorHandler got %v, want one ErrGaveUp (visit 1)", gaveUp)
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
