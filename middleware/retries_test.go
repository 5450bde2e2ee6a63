package robotsmw

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocolly/colly/v2"
	"golang.org/x/time/rate"
)

// A retried request that ends in a report (here: the collector's context
// ends during the pause before the retry) leaves no retry count behind.
func TestRetryCountDroppedOnReport(t *testing.T) {
	s := newSite(t, robots("", func(w http.ResponseWriter, r *http.Request) bool {
		if r.URL.Path == "/busy" {
			w.Header().Set("Retry-After", "3")
			w.WriteHeader(http.StatusServiceUnavailable)
			return true
		}
		return false
	}))
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	var rep reports
	g := withReports(&Guard{Rate: rate.Inf}, &rep)
	c := colly.NewCollector(g.Attach, colly.StdlibContext(ctx))
	c.Visit(s.URL + "/busy")
	c.Wait()
	if n := s.count("/busy"); n != 1 {
		t.Errorf("/busy fetched %d times, want 1", n)
	}
	if errs := rep.get(s.URL + "/busy"); len(errs) != 1 || !errors.Is(errs[0], context.DeadlineExceeded) {
		t.Errorf("ErrorHandler(/busy) = %v, want the context's error", errs)
	}
	if n := g.visits.count(); n != 0 {
		t.Errorf("after the final report: %d visits left, want 0", n)
	}
}

// A POST that fails in a way that leaves open whether the server acted on
// it (500, a body cut short) is not sent again; after 503, by which the
// server says it did not act on it, it is.
func TestRetryNotIdempotent(t *testing.T) {
	var busy atomic.Int32
	s := newSite(t, robots("", func(w http.ResponseWriter, r *http.Request) bool {
		switch r.URL.Path {
		case "/order":
			w.WriteHeader(http.StatusInternalServerError)
			return true
		case "/busy":
			if busy.Add(1) == 1 {
				w.Header().Set("Retry-After", "1")
				w.WriteHeader(http.StatusServiceUnavailable)
				return true
			}
		}
		return false
	}))
	for _, async := range []bool{false, true} {
		c := colly.NewCollector(colly.Async(async))
		g := &Guard{Rate: rate.Inf}
		g.Attach(c)
		var mu sync.Mutex
		var errs []error
		c.OnError(func(_ *colly.Response, err error) {
			mu.Lock()
			errs = append(errs, err)
			mu.Unlock()
		})
		c.Post(s.URL+"/order", map[string]string{"n": "1"})
		c.Wait()
		if len(errs) != 1 || !errors.Is(errs[0], ErrGaveUp) || !IsFinal(errs[0]) {
			t.Errorf("async=%v: OnError for a POST answered 500 = %v, want one final ErrGaveUp", async, errs)
		}
	}
	if n := s.count("/order"); n != 2 {
		t.Errorf("POST /order answered 500 sent %d times in two crawls, want once each", n)
	}
	c := colly.NewCollector()
	(&Guard{Rate: rate.Inf}).Attach(c)
	if err := c.Post(s.URL+"/busy", map[string]string{"n": "1"}); err != nil {
		t.Errorf("Post(/busy) answered 503 then 200 = %v, want nil", err)
	}
	if n := s.count("/busy"); n != 2 {
		t.Errorf("POST /busy answered 503 once sent %d times, want 2", n)
	}
}
