package robotsmw

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// The Guard's own robots.txt fetches follow up to five redirects, each
// hop through its host's gate (pacedTransport). The time a hop waits at
// its gate is the host's politeness, not the server's slowness, so it does
// not count against the fetch's timeout; the time the hops are sent and
// read does, all of them together: a robots.txt that redirects slowly five
// times gets the timeout once, not five times (issue 21: a chain of five
// 25-second hops held a fetch slot for 155 s).
//
// The hops of one fetch are the requests that share its context (net/http
// sends each redirect with the context of the first request), one after
// the other: net/http closes a hop's body before it sends the next one.

// A chainTable keeps the time spent by each robots.txt fetch in progress,
// by its context. The zero value is ready; it is safe for concurrent use.
type chainTable struct {
	mu sync.Mutex // guards m
	m  map[context.Context]*chain
}

// A chain is the time the hops of one fetch have been sent and read.
type chain struct {
	mu    sync.Mutex // guards spent
	spent time.Duration
}

// A chainHop is one hop on its way: left is the time the fetch has left.
type chainHop struct {
	c     *chain
	start time.Time
	left  time.Duration
	once  sync.Once
}

// end adds the hop's time to its fetch once the hop is over (its body
// closed, or its error returned).
func (h *chainHop) end() {
	h.once.Do(func() {
		if h.c == nil {
			return
		}
		h.c.mu.Lock()
		h.c.spent += time.Since(h.start)
		h.c.mu.Unlock()
	})
}

// start begins a hop of the fetch whose context is ctx, which may take
// timeout in all; it fails when the earlier hops used that up. A context
// that cannot end is not tracked: its hop gets the whole timeout.
func (t *chainTable) start(ctx context.Context, timeout time.Duration) (*chainHop, error) {
	if ctx.Done() == nil {
		return &chainHop{start: time.Now(), left: timeout}, nil
	}
	t.mu.Lock()
	c, ok := t.m[ctx]
	if !ok {
		if t.m == nil {
			t.m = make(map[context.Context]*chain)
		}
		c = &chain{}
		t.m[ctx] = c
		context.AfterFunc(ctx, func() {
			forget := func() {
				t.mu.Lock()
				delete(t.m, ctx)
				t.mu.Unlock()
			}
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				// The deadline may pass while a hop waits for its host's
				// gate (not counted): the chain's later hops still spend
				// what is left of its budget.
				time.AfterFunc(timeout, forget)
				return
			}
			forget()
		})
	}
	t.mu.Unlock()
	c.mu.Lock()
	left := timeout - c.spent
	c.mu.Unlock()
	if left <= 0 {
		return nil, fmt.Errorf("robotsmw: robots.txt redirects took longer than %v: %w", timeout, context.DeadlineExceeded)
	}
	return &chainHop{c: c, start: time.Now(), left: left}, nil
}

// robotsFetchTimeout returns the bound of the own cache's robots.txt
// fetches: robotsTimeout, or a test's.
func (g *Guard) robotsFetchTimeout() time.Duration {
	if g.robotsLimit > 0 {
		return g.robotsLimit
	}
	return robotsTimeout
}
