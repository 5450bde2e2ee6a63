package redisstore

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocolly/colly/v2"
	"github.com/gocolly/colly/v2/queue"
	"github.com/redis/go-redis/v9"
	"github.com/robotsmw/robotsmw/internal/redistest"
)

// runFrames are the functions of Run's goroutines.
var runFrames = []string{"redisstore.(*Fleet).heartbeat", "redisstore.(*Fleet).runQueue", "redisstore.(*Fleet).Run"}

// checkRunGone fails the test if a goroutine of Run is left after Run
// returned. It polls: a goroutine may still be on its way out.
func checkRunGone(t *testing.T) {
	t.Helper()
	var left string
	for range 200 {
		buf := make([]byte, 1<<20)
		stacks := string(buf[:runtime.Stack(buf, true)])
		left = ""
		for _, g := range strings.Split(stacks, "\n\n") {
			for _, fn := range runFrames {
				if strings.Contains(g, fn) {
					left = g
				}
			}
		}
		if left == "" {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Errorf("a goroutine of Run is left after it returned:\n%s", left)
}

// site serves pages /0 to /n-1, each linking to three others, and counts
// the fetches of each page.
type site struct {
	n  int
	mu sync.Mutex
	// hits counts the fetches of each path.
	hits map[string]int
}

func (s *site) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var i int
	if _, err := fmt.Sscanf(r.URL.Path, "/%d", &i); err != nil || i < 0 || i >= s.n {
		http.NotFound(w, r)
		return
	}
	s.mu.Lock()
	s.hits[r.URL.Path]++
	s.mu.Unlock()
	time.Sleep(10 * time.Millisecond) // so that both members get some pages
	w.Header().Set("Content-Type", "text/html")
	fmt.Fprintf(w, `<html><body><a href="/%d">a</a> <a href="/%d">b</a> <a href="/%d">c</a></body></html>`,
		(i+1)%s.n, (7*i+3)%s.n, (13*i+5)%s.n)
}

// TestRunCrawl crawls one site with two members: every page is fetched
// once by the whole fleet, and both Runs return once the fleet is done.
func TestRunCrawl(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) { testRunCrawl(t, b.start(t)) })
	}
}

func testRunCrawl(t *testing.T, newClient func() redis.UniversalClient) {
	s := &site{n: 50, hits: make(map[string]int)}
	ts := httptest.NewServer(s)
	defer ts.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	fleets := []*Fleet{New(newClient()), New(newClient())}
	for _, f := range fleets {
		defer f.Close()
	}
	errs := make([]error, len(fleets))
	fetched := make([]atomic.Int64, len(fleets))
	var wg sync.WaitGroup
	for i, f := range fleets {
		c := colly.NewCollector()
		if err := c.SetStorage(f.Storage()); err != nil {
			t.Fatalf("SetStorage: %v", err)
		}
		q, err := queue.New(2, f.Queue())
		if err != nil {
			t.Fatalf("queue.New: %v", err)
		}
		c.OnHTML("a[href]", func(e *colly.HTMLElement) {
			if err := q.AddURL(e.Request.AbsoluteURL(e.Attr("href"))); err != nil {
				t.Errorf("AddURL: %v", err)
			}
		})
		c.OnResponse(func(*colly.Response) { fetched[i].Add(1) })
		// Each member adds the seed; the visited set drops the second.
		if err := q.AddURL(ts.URL + "/0"); err != nil {
			t.Fatalf("AddURL(seed): %v", err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = f.Run(ctx, q, c)
		}()
	}
	wg.Wait()

	for i, err := range errs {
		if err != nil {
			t.Errorf("member %d: Run = %v, want nil", i, err)
		}
	}
	s.mu.Lock()
	for i := range s.n {
		p := fmt.Sprintf("/%d", i)
		if s.hits[p] != 1 {
			t.Errorf("%s fetched %d times, want once", p, s.hits[p])
		}
	}
	s.mu.Unlock()
	t.Logf("pages fetched by each member: %d, %d", fetched[0].Load(), fetched[1].Load())

	st, err := fleets[0].Stats(context.Background())
	if err != nil || st.Queued != 0 || st.InFlight != 0 || st.Fetched != int64(s.n) || st.Members != 0 {
		t.Errorf("Stats after the crawl = %+v, %v; want %d fetched, nothing queued or held", st, err, s.n)
	}
	for i, f := range fleets {
		if n := f.members.Load(); n < 1 || n > 2 {
			t.Errorf("member %d saw %d live members, want 1 or 2", i, n)
		}
	}
	checkRunGone(t)
}

// newRun returns a plain collector and a queue over f's shared queue.
func newRun(t *testing.T, f *Fleet) (*queue.Queue, *colly.Collector) {
	t.Helper()
	c := colly.NewCollector()
	if err := c.SetStorage(f.Storage()); err != nil {
		t.Fatalf("SetStorage: %v", err)
	}
	q, err := queue.New(1, f.Queue())
	if err != nil {
		t.Fatalf("queue.New: %v", err)
	}
	return q, c
}

// TestRunCancel checks that Run stops colly's queue and returns when ctx
// ends while it works.
func TestRunCancel(t *testing.T) {
	srv := redistest.Start(t)
	f := testFleet(t, srv)
	started := make(chan struct{}, 10)
	release := make(chan struct{})
	var once sync.Once
	unblock := func() { once.Do(func() { close(release) }) }
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		started <- struct{}{}
		<-release
	}))
	defer ts.Close()
	defer unblock()

	q, c := newRun(t, f)
	for i := range 5 {
		if err := q.AddURL(fmt.Sprintf("%s/%d", ts.URL, i)); err != nil {
			t.Fatalf("AddURL: %v", err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- f.Run(ctx, q, c) }()
	<-started
	if st, err := f.Stats(context.Background()); err != nil || st.InFlight < 1 || st.Members != 1 {
		t.Errorf("Stats while Run works = %+v, %v; want a member holding requests", st, err)
	}
	if err := f.Run(ctx, q, c); !errors.Is(err, errRunning) {
		t.Errorf("Run while Run runs = %v, want %v", err, errRunning)
	}
	cancel()
	unblock()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Run = %v, want context.Canceled", err)
	}
	checkRunGone(t)
	// What the member held went back to the queue.
	if st, err := f.Stats(context.Background()); err != nil || st.InFlight != 0 || st.Queued+st.Fetched != 5 || st.Members != 0 {
		t.Errorf("Stats after Run was cancelled = %+v, %v; want nothing held, 5 requests queued or fetched", st, err)
	}
}
