package redisstore

import (
	"errors"
	"sync"
	"testing"

	"github.com/gocolly/colly/v2"
	"github.com/robotsmw/robotsmw/internal/redistest"
)

func TestQueueOrder(t *testing.T) {
	srv := redistest.Start(t)
	a := testFleet(t, srv).Queue()
	b := testFleet(t, srv).Queue()

	if r, err := b.GetRequest(); r != nil || err != nil {
		t.Errorf("GetRequest() on an empty queue = %q, %v, want nil, nil", r, err)
	}
	for i, r := range []string{"first", "second", "third"} {
		q := a
		if i%2 == 1 {
			q = b
		}
		if err := q.AddRequest([]byte(r)); err != nil {
			t.Fatalf("AddRequest(%q): %v", r, err)
		}
	}
	if n, err := a.QueueSize(); n != 3 || err != nil {
		t.Errorf("QueueSize() = %d, %v, want 3, nil", n, err)
	}
	// Both members pop from the one queue, oldest first.
	for i, want := range []string{"first", "second", "third"} {
		q := b
		if i%2 == 1 {
			q = a
		}
		if r, err := q.GetRequest(); string(r) != want || err != nil {
			t.Errorf("GetRequest() #%d = %q, %v, want %q, nil", i+1, r, err, want)
		}
	}
	if r, err := a.GetRequest(); r != nil || err != nil {
		t.Errorf("GetRequest() on the drained queue = %q, %v, want nil, nil", r, err)
	}
	if n, err := b.QueueSize(); n != 0 || err != nil {
		t.Errorf("QueueSize() on the drained queue = %d, %v, want 0, nil", n, err)
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
		{add: "a"},
		{add: "b"},
		{add: "c", wantErr: colly.ErrQueueFull},
		{},
		{add: "d"},
		{add: "e", wantErr: colly.ErrQueueFull},
	} {
		if tt.add == "" {
			if _, err := q.GetRequest(); err != nil {
				t.Errorf("GetRequest() = %v", err)
			}
			continue
		}
		if err := q.AddRequest([]byte(tt.add)); !errors.Is(err, tt.wantErr) {
			t.Errorf("AddRequest(%q) with MaxQueue 2 = %v, want %v", tt.add, err, tt.wantErr)
		}
	}
	for _, want := range []string{"b", "d"} {
		if r, err := q.GetRequest(); string(r) != want || err != nil {
			t.Errorf("GetRequest() = %q, %v, want %q, nil", r, err, want)
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
		{"AddRequest", func(f *Fleet) error { return f.Queue().AddRequest([]byte("r")) }},
		{"QueueSize", func(f *Fleet) error { _, err := f.Queue().QueueSize(); return err }},
		{"GetRequest", func(f *Fleet) error { _, err := f.Queue().GetRequest(); return err }},
		{"IsVisited", func(f *Fleet) error { _, err := f.Storage().IsVisited(1); return err }},
		{"Visited", func(f *Fleet) error { return f.Storage().Visited(1) }},
	} {
		t.Run(tt.call, func(t *testing.T) {
			t.Parallel() // each has its own server; waits are long
			srv := redistest.Start(t)
			f := testFleet(t, srv)
			d := newDownRecorder(f)
			if _, err := f.Queue().QueueSize(); err != nil { // connects
				t.Fatalf("QueueSize(): %v", err)
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
		_, err := f.Queue().QueueSize()
		done <- err
	}()
	<-d.down
	f.Close()
	if err := <-done; !errors.Is(err, ErrClosed) {
		t.Errorf("QueueSize() with Redis down, after Close = %v, want ErrClosed", err)
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
	if err := q.AddRequest([]byte("before")); err != nil {
		t.Fatalf("AddRequest(%q): %v", "before", err)
	}
	srv.Stop()
	done := make(chan error, 1)
	go func() { done <- q.AddRequest([]byte("during")) }()
	<-d.down
	srv.Restart()
	if err := <-done; err != nil {
		t.Fatalf("AddRequest(%q) across an outage = %v, want nil", "during", err)
	}
	for _, want := range []string{"before", "during"} {
		if r, err := q.GetRequest(); string(r) != want || err != nil {
			t.Errorf("GetRequest() after the outage = %q, %v, want %q, nil", r, err, want)
		}
	}
	d.check(t, "AddRequest")
}
