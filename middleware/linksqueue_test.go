package robotsmw

import (
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/gocolly/colly/v2"
	"github.com/gocolly/colly/v2/queue"
	"golang.org/x/time/rate"
)

// With Links.Queue, FollowLinks adds a page's links to the queue's
// storage, one level deeper, also when the page is one the Guard sent
// again after a deferral, after the queue's Run had returned (colly's
// Queue.AddRequest would block for ever there); the queue, run again,
// fetches them.
func TestFollowLinksToQueue(t *testing.T) {
	var mu sync.Mutex
	busy := true
	s := newSite(t, robots("", func(w http.ResponseWriter, r *http.Request) bool {
		w.Header().Set("Content-Type", "text/html")
		switch r.URL.Path {
		case "/":
			fmt.Fprint(w, `<a href="/a">a</a> <a href="http://elsewhere.example/">x</a>`)
		case "/a":
			mu.Lock()
			first := busy
			busy = false
			mu.Unlock()
			if first {
				w.Header().Set("Retry-After", "1")
				w.WriteHeader(http.StatusServiceUnavailable)
				return true
			}
			fmt.Fprint(w, `<a href="/b">b</a>`)
		case "/b":
			fmt.Fprint(w, `done`)
		default:
			return false
		}
		return true
	}))
	storage := &queue.InMemoryQueueStorage{MaxSize: 100}
	q, err := queue.New(2, storage)
	if err != nil {
		t.Fatal(err)
	}
	g := &Guard{Rate: rate.Inf, MaxWait: 100 * time.Millisecond, Links: Links{Queue: storage}}
	depth := map[string]int{}
	var dmu sync.Mutex
	c := colly.NewCollector(g.Attach, colly.AllowedDomains("127.0.0.1"))
	g.FollowLinks(c)
	c.OnResponse(func(r *colly.Response) {
		dmu.Lock()
		depth[r.Request.URL.Path] = r.Request.Depth
		dmu.Unlock()
	})
	q.AddURL(s.URL + "/")
	for i := 0; i < 10; i++ {
		if err := q.Run(c); err != nil {
			t.Fatal(err)
		}
		c.Wait()
		if q.IsEmpty() {
			break
		}
		q.Stop()
	}
	got := map[string]int{}
	for _, h := range s.log() {
		got[h.path]++
	}
	if got["/a"] != 2 || got["/b"] != 1 {
		t.Errorf("requests = %v; want /a twice (503, then the page) and /b once, from the queue", got)
	}
	if depth["/a"] != 1 || depth["/b"] != 2 {
		t.Errorf("depths = %v, want /a 1 and /b 2 (links carry their page's depth + 1)", depth)
	}
}
