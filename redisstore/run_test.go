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
var runFrames = []string{"redisstore.(*member).heartbeat", "redisstore.(*Fleet).runQueue", "redisstore.(*Fleet).Run"}

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

// checkGoroutines fails the test unless the number of goroutines falls
// back to at most n. It polls: goroutines may still be on their way out.
func checkGoroutines(t *testing.T, n int) {
	t.Helper()
	for range 200 {
		if runtime.NumGoroutine() <= n {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	buf := make([]byte, 1<<20)
	t.Errorf("%d goroutines after Run returned, want at most %d:\n%s",
		runtime.NumGoroutine(), n, buf[:runtime.Stack(buf, true)])
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
	srv := redistest.Start(t)
	s := &site{n: 50, hits: make(map[string]int)}
	ts := httptest.NewServer(s)
	defer ts.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	fleets := []*Fleet{testFleet(t, srv), testFleet(t, srv)}
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

	rdb := srv.Client()
	for _, k := range []string{"queue", "busy", "members"} {
		key := fleets[0].crawlKey(k)
		if n, err := rdb.Exists(context.Background(), key).Result(); err != nil || n != 0 {
			t.Errorf("EXISTS %s after the crawl = %d, %v, want 0", key, n, err)
		}
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

// TestRunOthers checks when Run finds the fleet done, given other members
// in the busy set (scores are ms of Redis's clock).
func TestRunOthers(t *testing.T) {
	for _, tt := range []struct {
		name  string
		score string // of another member in the busy set, or "" for none
		done  bool   // Run returns nil without ctx ending
	}{
		{"alone", "", true},
		{"other busy", "+inf", false},
		{"other expired", "1", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := redistest.Start(t)
			f := testFleet(t, srv)
			rdb := srv.Client()
			bg := context.Background()
			if tt.score != "" {
				if err := rdb.Do(bg, "ZADD", f.crawlKey("busy"), tt.score, "other").Err(); err != nil {
					t.Fatal(err)
				}
			}
			q, c := newRun(t, f)
			before := runtime.NumGoroutine()
			ctx, cancel := context.WithCancel(bg)
			defer cancel()
			done := make(chan error, 1)
			go func() { done <- f.Run(ctx, q, c) }()

			if !tt.done {
				// Let Run join the fleet, then give up.
				for {
					if err := rdb.ZScore(bg, f.crawlKey("members"), f.ID()).Err(); err == nil {
						break
					}
					time.Sleep(5 * time.Millisecond)
				}
				cancel()
			}
			want := error(nil)
			if !tt.done {
				want = context.Canceled
			}
			if err := <-done; !errors.Is(err, want) {
				t.Errorf("Run = %v, want %v", err, want)
			}
			if err := rdb.ZScore(bg, f.crawlKey("members"), f.ID()).Err(); !errors.Is(err, redis.Nil) {
				t.Errorf("ZSCORE members %s after Run = %v, want redis.Nil (left the fleet)", f.ID(), err)
			}
			checkGoroutines(t, before)
			checkRunGone(t)
		})
	}
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
	if n, err := srv.Client().ZCard(context.Background(), f.crawlKey("busy")).Result(); err != nil || n != 1 {
		t.Errorf("ZCARD busy while Run works = %d, %v, want 1, nil", n, err)
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
}

// TestMemberStep checks the states runStep reports, and the member
// counts.
func TestMemberStep(t *testing.T) {
	srv := redistest.Start(t)
	a := &member{f: testFleet(t, srv)}
	b := &member{f: testFleet(t, srv)}
	rdb := srv.Client()
	bg := context.Background()
	busy := func(m *member) bool {
		err := rdb.ZScore(bg, m.f.crawlKey("busy"), m.f.id).Err()
		return err == nil
	}

	// The calls run in order, each on the state the earlier ones left.
	for _, tt := range []struct {
		name        string
		m           *member
		add         bool // push a request first
		pop         bool // pop a request first
		want        int64
		wantMembers int64
	}{
		{name: "a", m: a, want: stepDrained, wantMembers: 1},
		{name: "b", m: b, add: true, want: stepWork, wantMembers: 2},
		{name: "a", m: a, want: stepWork, wantMembers: 2},
		{name: "b", m: b, pop: true, want: stepIdle, wantMembers: 2}, // a is busy
		{name: "a", m: a, want: stepDrained, wantMembers: 2},
		{name: "b", m: b, want: stepDrained, wantMembers: 2},
	} {
		if tt.add {
			if err := tt.m.f.Queue().AddRequest([]byte("r")); err != nil {
				t.Fatalf("AddRequest: %v", err)
			}
		}
		if tt.pop {
			if _, err := tt.m.f.Queue().GetRequest(); err != nil {
				t.Fatalf("GetRequest: %v", err)
			}
		}
		got, err := tt.m.step()
		if err != nil || got != tt.want {
			t.Errorf("%s.step() = %d, %v, want %d, nil", tt.name, got, err, tt.want)
		}
		if n := tt.m.f.members.Load(); n != tt.wantMembers {
			t.Errorf("after %s.step(), %s saw %d members, want %d", tt.name, tt.name, n, tt.wantMembers)
		}
		if b := busy(tt.m); b != (tt.want == stepWork) {
			t.Errorf("after %s.step() = %d, %s busy = %v, want %v", tt.name, got, tt.name, b, !b)
		}
	}
}

// TestMemberHeartbeat checks that the heartbeat renews the member in the
// live set, and in the busy set only while it is busy.
func TestMemberHeartbeat(t *testing.T) {
	srv := redistest.Start(t)
	f := testFleet(t, srv)
	m := &member{f: f}
	rdb := srv.Client()
	bg := context.Background()
	score := func(set string) float64 {
		s, err := rdb.ZScore(bg, f.crawlKey(set), f.id).Result()
		if errors.Is(err, redis.Nil) {
			return 0
		}
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	// waitRenewed waits until set's score for m rises above old.
	waitRenewed := func(set string, old float64) float64 {
		for {
			if s := score(set); s > old {
				return s
			}
			time.Sleep(5 * time.Millisecond)
		}
	}

	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		m.heartbeat(stop, 5*time.Millisecond)
	}()

	live := waitRenewed("members", 0)
	if s := score("busy"); s != 0 {
		t.Errorf("busy score of an idle member = %v, want none", s)
	}
	m.setBusy(true)
	waitRenewed("busy", 0)
	live = waitRenewed("members", live)
	m.setBusy(false)
	if err := rdb.ZRem(bg, f.crawlKey("busy"), f.id).Err(); err != nil {
		t.Fatal(err)
	}
	waitRenewed("members", live)
	close(stop)
	wg.Wait()
	if s := score("busy"); s != 0 {
		t.Errorf("busy score after the member went idle = %v, want none", s)
	}
	if n := f.members.Load(); n != 1 {
		t.Errorf("members after heartbeats = %d, want 1", n)
	}
}
