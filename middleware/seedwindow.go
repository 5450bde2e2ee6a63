package robotsmw

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
	"weak"

	"github.com/gocolly/colly/v2"

	"github.com/robotsmw/robotsmw/sitemap"
)

// Seed bounds the requests it starts on an asynchronous collector, which
// would otherwise start a goroutine for every URL of the site at once. Each
// page gets a colly.Context of its own (colly makes one per Visit anyway);
// the request's end is seen by the Guard's callbacks: OnScraped, or a final
// outcome in OnError. A request that an OnRequest callback aborts gets
// neither: Seed's first call on a collector adds an OnRequest callback,
// after the user's registered by then, that frees the slot of an aborted
// request. For the rest (an abort by a callback added later, a response
// colly cannot decode), the table keys the contexts weakly, and a Seed
// that has waited for a slot for sweepEvery frees the slots of contexts
// the garbage collector took.
const sweepEvery = time.Second

// A seedRun is one Seed call on an asynchronous collector.
type seedRun struct {
	slots chan struct{} // a token per request in flight
}

// A seedTable maps the contexts of the requests Seed started to their run.
type seedTable struct {
	active atomic.Int32 // entries in m; callbacks skip the lock when 0

	mu      sync.Mutex // guards m and watched
	m       map[weak.Pointer[colly.Context]]*seedRun
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
// has a free slot, and tracks it until it ends.
func (s *seedTable) request(ctx context.Context, run *seedRun, c *colly.Collector, e sitemap.Entry) error {
	if err := s.acquire(ctx, run); err != nil {
		return err
	}
	cctx := seedContext(colly.NewContext(), e)
	key := weak.Make(cctx)
	s.mu.Lock()
	if s.m == nil {
		s.m = make(map[weak.Pointer[colly.Context]]*seedRun)
	}
	s.m[key] = run
	s.active.Add(1)
	s.mu.Unlock()
	err := c.Request("GET", e.Loc, nil, cctx, nil)
	if err != nil {
		s.release(key)
	}
	return err
}

// acquire takes a slot of run, waiting for one until ctx ends.
func (s *seedTable) acquire(ctx context.Context, run *seedRun) error {
	select {
	case run.slots <- struct{}{}:
		return nil
	default:
	}
	tick := time.NewTicker(sweepEvery)
	defer tick.Stop()
	for {
		select {
		case run.slots <- struct{}{}:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
			s.sweep(run)
		}
	}
}

// done is called when request r ended for good.
func (s *seedTable) done(r *colly.Request) {
	if r == nil || r.Ctx == nil || r.Depth != 1 || s.active.Load() == 0 {
		return
	}
	s.release(weak.Make(r.Ctx))
}

// release frees the slot of the request with context key, once.
func (s *seedTable) release(key weak.Pointer[colly.Context]) {
	s.mu.Lock()
	run, ok := s.m[key]
	if ok {
		delete(s.m, key)
		s.active.Add(-1)
	}
	s.mu.Unlock()
	if ok {
		<-run.slots
	}
}

// sweep frees the slots of run's requests whose context is gone.
func (s *seedTable) sweep(run *seedRun) {
	var gone []weak.Pointer[colly.Context]
	s.mu.Lock()
	for k, r := range s.m {
		if r == run && k.Value() == nil {
			gone = append(gone, k)
		}
	}
	s.mu.Unlock()
	for _, k := range gone {
		s.release(k)
	}
}
