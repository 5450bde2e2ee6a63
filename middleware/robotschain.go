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
// times gets the timeout once, not five times (a chain of five
// 25-second hops held a fetch slot for 155 s). A hop that did not wait
// at its gate, nor any hop before it, may be sent under the fetch's own
// deadline instead, which then comes at most hopSlack (10 ms: the time
// from the fetch's start to the hop) before its budget's end (see
// pacedTransport.RoundTrip).
//
// The hops of one fetch are the requests that share its context (net/http
// sends each redirect with the context of the first request), one after
// the other: net/http closes a hop's body before it sends the next one.

// A chainTable keeps the time spent by each robots.txt fetch in progress
// that has redirected, by its context. A fetch is entered when one of its
// hops answers with a redirect, so that the next hop finds what the
// earlier ones spent; a fetch whose first hop is its last (most are)
// enters nothing. The zero value is ready; it is safe for concurrent use.
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
// The zero chainHop is not in use.
type chainHop struct {
	ctx   context.Context // the fetch's
	c     *chain          // nil until the fetch redirected (see redirected)
	start time.Time
	left  time.Duration
	once  sync.Once
}

// end adds the hop's time to its fetch once the hop is over (its body
// closed, or its error returned), if the fetch is tracked.
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

// start begins, in *hop, a hop of the fetch whose context is ctx, which
// may take timeout in all; it fails when the earlier hops used that up.
func (t *chainTable) start(hop *chainHop, ctx context.Context, timeout time.Duration) error {
	var c *chain
	if ctx.Done() != nil {
		t.mu.Lock()
		c = t.m[ctx]
		t.mu.Unlock()
	}
	left := timeout
	if c != nil {
		c.mu.Lock()
		left -= c.spent
		c.mu.Unlock()
		if left <= 0 {
			return fmt.Errorf("robotsmw: robots.txt redirects took longer than %v: %w", timeout, context.DeadlineExceeded)
		}
	}
	hop.ctx, hop.c, hop.start, hop.left = ctx, c, time.Now(), left
	return nil
}

// redirected enters the fetch of hop, whose response is a redirect, so
// that its next hop, which the client sends once this one's body is
// closed, spends what is left of the timeout. A context that cannot end
// is not tracked: each of its hops gets the whole timeout. The entry goes
// when the fetch's context ends.
func (t *chainTable) redirected(hop *chainHop, timeout time.Duration) {
	ctx := hop.ctx
	if hop.c != nil || ctx.Done() == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if c, ok := t.m[ctx]; ok {
		hop.c = c
		return
	}
	if t.m == nil {
		t.m = make(map[context.Context]*chain)
	}
	c := &chain{}
	t.m[ctx] = c
	hop.c = c
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

// robotsFetchTimeout returns the bound of the own cache's robots.txt
// fetches: robotsTimeout, or a test's.
func (g *Guard) robotsFetchTimeout() time.Duration {
	if g.robotsLimit > 0 {
		return g.robotsLimit
	}
	return robotsTimeout
}
