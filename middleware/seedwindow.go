package robotsmw

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/gocolly/colly/v2"

	"github.com/robotsmw/robotsmw/sitemap"
)

// Seed bounds the requests it starts on an asynchronous collector, which
// would otherwise start a goroutine for every URL of the site at once. Each
// page gets a colly.Context of its own (colly makes one per Visit anyway),
// which holds the page's slot (a seedHold) from Seed's c.Request to the
// request's end, as the Guard's callbacks see it: OnScraped, or a final
// outcome in OnError. A request that an OnRequest callback aborts gets
// neither: Seed's first call on a collector adds an OnRequest callback,
// after the user's registered by then, that frees the slot of an aborted
// request. For the rest (an abort by a callback added later, a response
// colly cannot decode), the slot is freed once the garbage collector took
// the request's context (runtime.AddCleanup), which the Guard's record of
// the request keeps until its visit index drops it (request.go). No table
// is kept: the request's context carries its slot.

// seedSlotKey is the key of a seeded request's seedHold in its Ctx.
const seedSlotKey = "robotsmw.seed.slot"

// A seedRun is one Seed call on an asynchronous collector.
type seedRun struct {
	slots chan struct{} // a token per request in flight
}

// A seedHold is the slot of one request Seed started.
type seedHold struct {
	run    *seedRun
	active *atomic.Int32 // the Guard's count of holds not freed
	held   atomic.Bool
}

// free gives the slot back, once.
func (h *seedHold) free() {
	if h.held.CompareAndSwap(true, false) {
		h.active.Add(-1)
		<-h.run.slots
	}
}

// A seedTable is the Guard's part in Seed's windows: the count of slots
// held, and the collectors watched for aborted requests.
type seedTable struct {
	active atomic.Int32 // holds not freed; done skips its look-up when 0

	mu      sync.Mutex // guards watched
	watched map[*colly.Collector]bool
}

// watch adds, once per collector, the OnRequest callback that frees the
// slot of a request aborted by an earlier OnRequest callback.
func (s *seedTable) watch(c *colly.Collector) {
	s.mu.Lock()
	if s.watched == nil {
		s.watched = make(map[*colly.Collector]bool)
	}
	first := !s.watched[c]
	s.watched[c] = true
	s.mu.Unlock()
	if first {
		c.OnRequest(func(r *colly.Request) {
			if r.IsAbort() {
				s.done(r)
			}
		})
	}
}

func (s *seedTable) open(window int) *seedRun {
	return &seedRun{slots: make(chan struct{}, window)}
}

// request visits loc through c with a context of its own, once the run
// has a free slot, which the context holds until the request ends.
func (s *seedTable) request(ctx context.Context, run *seedRun, c *colly.Collector, e sitemap.Entry) error {
	select {
	case run.slots <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	hold := &seedHold{run: run, active: &s.active}
	hold.held.Store(true)
	s.active.Add(1)
	cctx := seedContext(colly.NewContext(), e)
	cctx.Put(seedSlotKey, hold)
	runtime.AddCleanup(cctx, (*seedHold).free, hold)
	err := c.Request("GET", e.Loc, nil, cctx, nil)
	if err != nil {
		hold.free()
	}
	return err
}

// done is called when request r ended for good: the slot of a request
// Seed started (depth 1; the links of its page share its context) is
// freed.
func (s *seedTable) done(r *colly.Request) {
	if r == nil || r.Ctx == nil || r.Depth != 1 || s.active.Load() == 0 {
		return
	}
	if h, ok := r.Ctx.GetAny(seedSlotKey).(*seedHold); ok {
		h.free()
	}
}
