package robotsmw

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/gocolly/colly/v2"
	"golang.org/x/time/rate"
)

// A request deferred in OnRequest that reaches colly's OnError only after
// the crawl's context ended (it waited for colly's LimitRule slot
// meanwhile) gets its final outcome in OnError too, after the deferral and
// before Wait returns: a user filtering OnError with IsFinal learns it was
// never sent.
func TestDeferredAtCrawlEndGetsFinal(t *testing.T) {
	release := make(chan struct{})
	s := newSite(t, robots("", func(w http.ResponseWriter, r *http.Request) bool {
		if r.URL.Path == "/slow" {
			select {
			case <-release:
			case <-r.Context().Done():
			}
			return true
		}
		return false
	}))
	defer close(release)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	g := &Guard{Rate: rate.Every(time.Second), MaxWait: 50 * time.Millisecond}
	c := colly.NewCollector(g.Attach, colly.Async(), colly.StdlibContext(ctx))
	if err := c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: 1}); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex // guards seen
	seen := map[string][]bool{}
	c.OnError(func(r *colly.Response, err error) {
		mu.Lock()
		seen[r.Request.URL.Path] = append(seen[r.Request.URL.Path], IsFinal(err))
		mu.Unlock()
	})
	c.Visit(s.URL + "/slow")
	for s.count("/slow") == 0 {
		time.Sleep(time.Millisecond)
	}
	c.Visit(s.URL + "/next") // deferred in OnRequest: its position is a second away
	time.Sleep(100 * time.Millisecond)
	cancel()
	waitOrFail(t, "Wait", c.Wait)
	time.Sleep(100 * time.Millisecond) // a late callback would show here
	mu.Lock()
	defer mu.Unlock()
	next := seen["/next"]
	if len(next) == 0 || !next[len(next)-1] || len(next) > 2 {
		t.Errorf("OnError for /next saw finals %v, want a deferral then one final outcome", next)
	}
	if n := s.count("/next"); n != 0 {
		t.Errorf("server saw /next %d times, want 0", n)
	}
	if hs := hostStats(g, "127.0.0.1"); hs.GaveUp == 0 {
		t.Errorf("Stats = %+v, want /next given up", hs)
	}
}
