package robotsmw

import (
	"context"
	"errors"
	"net/http"
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
	if n := g.visits.len(); n != 0 {
		t.Errorf("after the final report: %d visits left, want 0", n)
	}
}
