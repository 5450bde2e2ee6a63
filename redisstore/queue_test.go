package redisstore

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gocolly/colly/v2"

	"github.com/robotsmw/robotsmw/internal/redistest"
)

// serial returns colly's serialised GET of u at depth 1, as FollowLinks
// queues it.
func serial(t testing.TB, u string) []byte {
	t.Helper()
	r, err := http.NewRequest("GET", u, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := (&colly.Request{URL: r.URL, Method: "GET", Depth: 1}).Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// urlOf returns the URL of a serialised request, "" for nil.
func urlOf(t testing.TB, r []byte) string {
	t.Helper()
	if r == nil {
		return ""
	}
	var s serialRequest
	if err := json.Unmarshal(r, &s); err != nil {
		t.Fatalf("popped request %q: %v", r, err)
	}
	return s.URL
}

func TestQueueDedupeAndOrder(t *testing.T) {
	srv := redistest.Start(t)
	a := testFleet(t, srv).Queue()
	b := testFleet(t, srv).Queue()

	if r, err := b.GetRequest(); r != nil || err != nil {
		t.Errorf("GetRequest() on an empty queue = %q, %v, want nil, nil", r, err)
	}
	adds := []string{"http://x.test/1", "http://y.test/1", "http://x.test/2", "http://x.test/1", "http://x.test/1#frag", "http://y.test/1"}
	for i, u := range adds {
		q := a
		if i%2 == 1 {
			q = b
		}
		if err := q.AddRequest(serial(t, u)); err != nil {
			t.Fatalf("AddRequest(%q): %v", u, err)
		}
	}
	st, err := a.f.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// x.test/1#frag is another URL to colly (its id includes the
	// fragment); the two repeats are dropped at enqueue.
	if st.Queued != 4 || st.Duplicates != 2 {
		t.Errorf("Stats after 6 adds = queued %d, duplicates %d; want 4, 2", st.Queued, st.Duplicates)
	}
	// Each host's requests come in order; every host is ready at once.
	var got []string
	for i := 0; i < 4; i++ {
		r, err := a.GetRequest()
		if err != nil {
			t.Fatalf("GetRequest() #%d: %v", i+1, err)
		}
		got = append(got, urlOf(t, r))
	}
	var xs []string
	for _, u := range got {
		if strings.HasPrefix(u, "http://x.test/") {
			xs = append(xs, u)
		}
	}
	if strings.Join(xs, " ") != "http://x.test/1 http://x.test/2 http://x.test/1#frag" {
		t.Errorf("GetRequest() order of x.test = %v, want the order added", xs)
	}
	if r, err := b.GetRequest(); r != nil || err != nil {
		t.Errorf("GetRequest() on the drained queue = %q, %v, want nil, nil", r, err)
	}
	if err := a.AddRequest(serial(t, "http://x.test/2")); err != nil {
		t.Fatal(err)
	}
	if n, err := b.QueueSize(); n != 0 || err != nil {
		t.Errorf("QueueSize() after a popped URL was added again = %d, %v, want 0, nil", n, err)
	}
}

// TestQueueHostReady checks that a host is popped at most once per gap:
// GetRequest returns another host's request, or waits.
func TestQueueHostReady(t *testing.T) {
	srv := redistest.Start(t)
	f := testFleet(t, srv)
	q := f.Queue()
	ctx := context.Background()
	for _, u := range []string{"http://x.test/1", "http://x.test/2", "http://y.test/1"} {
		if err := q.AddRequest(serial(t, u)); err != nil {
			t.Fatal(err)
		}
	}
	p1, err := f.front.pop(ctx, 0, time.Hour)
	if err != nil || p1.entry != "x.test\n1h1 /1" {
		t.Fatalf("pop() = %+v, %v; want x.test/1", p1, err)
	}
	p2, err := f.front.pop(ctx, 0, time.Hour)
	if err != nil || p2.entry != "y.test\n1h1 /1" {
		t.Fatalf("pop() = %+v, %v; want y.test/1 (x.test waits an hour)", p2, err)
	}
	p3, err := f.front.pop(ctx, 0, time.Hour)
	if err != nil || p3.entry != "" || p3.wait < 59*60*1000 {
		t.Fatalf("pop() = %+v, %v; want nothing, wait about an hour", p3, err)
	}
}

func TestQueueFull(t *testing.T) {
	srv := redistest.Start(t)
	f := testFleet(t, srv)
	f.MaxQueue = 2
	q := f.Queue()

	// The calls run in order, each on the state the earlier ones left.
	for _, tt := range []struct {
		add     string // AddRequest(add), or GetRequest if ""
		wantErr error
	}{
		{add: "http://a.test/a"},
		{add: "http://a.test/a"}, // a duplicate does not count
		{add: "http://a.test/b"},
		{add: "http://a.test/c", wantErr: colly.ErrQueueFull},
		{},
		{add: "http://a.test/d"},
		{add: "http://a.test/e", wantErr: colly.ErrQueueFull},
	} {
		if tt.add == "" {
			if _, err := q.GetRequest(); err != nil {
				t.Errorf("GetRequest() = %v", err)
			}
			continue
		}
		if err := q.AddRequest(serial(t, tt.add)); !errors.Is(err, tt.wantErr) {
			t.Errorf("AddRequest(%q) with MaxQueue 2 = %v, want %v", tt.add, err, tt.wantErr)
		}
	}
	for _, want := range []string{"http://a.test/b", "http://a.test/d"} {
		if r, err := q.GetRequest(); urlOf(t, r) != want || err != nil {
			t.Errorf("GetRequest() = %q, %v, want %q, nil", urlOf(t, r), err, want)
		}
	}
}

// downRecorder records a Fleet's OnDown calls.
type downRecorder struct {
	mu    sync.Mutex
	calls []error
	down  chan struct{} // closed at the first call with an error
}

func newDownRecorder(f *Fleet) *downRecorder {
	d := &downRecorder{down: make(chan struct{})}
	f.OnDown = func(err error) {
		d.mu.Lock()
		defer d.mu.Unlock()
		if err != nil && len(d.calls) == 0 {
			close(d.down)
		}
		d.calls = append(d.calls, err)
	}
	return d
}

func (d *downRecorder) check(t *testing.T, call string) {
	t.Helper()
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.calls) != 2 || d.calls[0] == nil || d.calls[1] != nil {
		t.Errorf("OnDown calls during %s = %v, want an error, then nil", call, d.calls)
	}
}

// TestQueueOutage checks that the queue's calls (and the visited set's)
// wait while Redis is down and go on once it is back.
func TestQueueOutage(t *testing.T) {
	for _, tt := range []struct {
		call string
		run  func(f *Fleet) error
	}{
		{"AddRequest", func(f *Fleet) error { return f.Queue().AddRequest(serial(t, "http://a.test/")) }},
		{"GetRequest", func(f *Fleet) error { _, err := f.Queue().GetRequest(); return err }},
		{"IsVisited", func(f *Fleet) error { _, err := f.Storage().IsVisited(1); return err }},
		{"Visited", func(f *Fleet) error { return f.Storage().Visited(1) }},
	} {
		t.Run(tt.call, func(t *testing.T) {
			t.Parallel() // each has its own server; waits are long
			srv := redistest.Start(t)
			f := testFleet(t, srv)
			d := newDownRecorder(f)
			if _, err := f.Epoch(context.Background()); err != nil { // connects
				t.Fatalf("Epoch(): %v", err)
			}

			srv.Stop()
			done := make(chan error, 1)
			go func() { done <- tt.run(f) }()
			<-d.down
			select {
			case err := <-done:
				t.Fatalf("%s returned %v while Redis was down, want it to wait", tt.call, err)
			default:
			}
			srv.Restart()
			if err := <-done; err != nil {
				t.Errorf("%s after Redis came back = %v, want nil", tt.call, err)
			}
			d.check(t, tt.call)
		})
	}
}

// TestQueueOutageClosed checks that a call waiting for Redis gives up
// when the Fleet is closed.
func TestQueueOutageClosed(t *testing.T) {
	srv := redistest.Start(t)
	f := testFleet(t, srv)
	d := newDownRecorder(f)
	srv.Stop()
	done := make(chan error, 1)
	go func() {
		_, err := f.Queue().GetRequest()
		done <- err
	}()
	<-d.down
	f.Close()
	if err := <-done; !errors.Is(err, ErrClosed) {
		t.Errorf("GetRequest() with Redis down, after Close = %v, want ErrClosed", err)
	}
}

// TestQueueOutageAdd checks that no request is lost across an outage:
// the one added before is kept by Redis, and the one added during it is
// added once Redis is back.
func TestQueueOutageAdd(t *testing.T) {
	srv := redistest.Start(t)
	f := testFleet(t, srv)
	d := newDownRecorder(f)
	q := f.Queue()
	if err := q.AddRequest(serial(t, "http://a.test/before")); err != nil {
		t.Fatal(err)
	}
	srv.Stop()
	done := make(chan error, 1)
	go func() { done <- q.AddRequest(serial(t, "http://a.test/during")) }()
	<-d.down
	srv.Restart()
	if err := <-done; err != nil {
		t.Fatalf("AddRequest across an outage = %v, want nil", err)
	}
	for _, want := range []string{"http://a.test/before", "http://a.test/during"} {
		if r, err := q.GetRequest(); urlOf(t, r) != want || err != nil {
			t.Errorf("GetRequest() after the outage = %q, %v, want %q, nil", urlOf(t, r), err, want)
		}
	}
	d.check(t, "AddRequest")
}

// TestNotRedis checks that a server that does not speak Redis ends every
// call at once with ErrNotRedis, rather than being waited for as down.
func TestNotRedis(t *testing.T) {
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer web.Close()
	f := New(redisClient(strings.TrimPrefix(web.URL, "http://")))
	defer f.Close()
	for _, tt := range []struct {
		call string
		run  func() error
	}{
		{"AddRequest", func() error { return f.Queue().AddRequest(serial(t, "http://a.test/")) }},
		{"GetRequest", func() error { _, err := f.Queue().GetRequest(); return err }},
		{"Run", func() error { return runOnce(t, f) }},
	} {
		done := make(chan error, 1)
		go func() { done <- tt.run() }()
		select {
		case err := <-done:
			if !errors.Is(err, ErrNotRedis) {
				t.Errorf("%s against an HTTP server = %v, want ErrNotRedis", tt.call, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s against an HTTP server still runs after 10 s", tt.call)
		}
	}
}

// TestQueuePriority checks the order of one host's requests: lower depth
// first (breadth first), a request's own priority (PriorityKey) before
// its depth, AddFront before the others of its level.
func TestQueuePriority(t *testing.T) {
	srv := redistest.Start(t)
	f := testFleet(t, srv)
	q := f.Queue()
	add := func(u string, depth int, priority any, front bool) { addPriority(t, q, u, depth, priority, front) }
	add("http://x.test/deep", 3, nil, false)
	add("http://x.test/shallow", 1, nil, false)
	add("http://x.test/shallow2", 1, nil, false)
	add("http://x.test/urgent", 5, 0, false)
	add("http://x.test/first", 1, nil, true)
	var got []string
	for range 5 {
		r, err := q.GetRequest()
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, strings.TrimPrefix(urlOf(t, r), "http://x.test/"))
	}
	if want := "urgent first shallow shallow2 deep"; strings.Join(got, " ") != want {
		t.Errorf("GetRequest order = %v, want %s", got, want)
	}
	r, _ := http.NewRequest("GET", "http://x.test/bad", nil)
	ctx := colly.NewContext()
	ctx.Put(PriorityKey, 16)
	b, _ := (&colly.Request{URL: r.URL, Method: "GET", Ctx: ctx}).Marshal()
	if err := q.AddRequest(b); err == nil {
		t.Error("AddRequest with priority 16 = nil, want an error")
	}
}

// Priorities hold across hosts too: of the hosts that may go now, the one
// with the most urgent request goes first, even if another host has been
// ready for longer.
func TestQueuePriorityAcrossHosts(t *testing.T) {
	srv := redistest.Start(t)
	f := testFleet(t, srv)
	q := f.Queue()
	add := func(u string, depth int, priority any) { addPriority(t, q, u, depth, priority, false) }
	add("http://a.test/deep", 4, nil)
	add("http://b.test/shallow", 2, nil)
	add("http://c.test/urgent", 9, 0)
	var got []string
	for range 3 {
		r, err := q.GetRequest()
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, urlOf(t, r))
	}
	if want := "http://c.test/urgent http://b.test/shallow http://a.test/deep"; strings.Join(got, " ") != want {
		t.Errorf("GetRequest order = %v, want %s", got, want)
	}
}

// addPriority adds a GET of u at depth to q, with a PriorityKey of
// priority unless it is nil, at the front of its level if front.
func addPriority(t *testing.T, q *Queue, u string, depth int, priority any, front bool) {
	t.Helper()
	r, _ := http.NewRequest("GET", u, nil)
	ctx := colly.NewContext()
	if priority != nil {
		ctx.Put(PriorityKey, priority)
	}
	b, err := (&colly.Request{URL: r.URL, Method: "GET", Depth: depth, Ctx: ctx}).Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if front {
		err = q.AddFront(b)
	} else {
		err = q.AddRequest(b)
	}
	if err != nil {
		t.Fatalf("adding %s: %v", u, err)
	}
}
