package redisstore

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/gocolly/colly/v2"
	"github.com/gocolly/colly/v2/queue"
)

// Run's timing.
const (
	// memberTTL is how long a member's leases last after its last
	// heartbeat or pop: the requests of a member that crashed go back to
	// the others after it.
	memberTTL = 15 * time.Second
	// The heartbeat's period is a third of memberTTL; beatRetry replaces
	// it after a heartbeat failed.
	beatRetry = time.Second
	// beatTimeout bounds one heartbeat, and leaving the fleet.
	beatTimeout = 2 * time.Second
	// idleMin and idleMax bound the pause between two looks at the
	// shared queue while other members work: idleMin doubling to idleMax.
	idleMin = 200 * time.Millisecond
	idleMax = 2 * time.Second
)

// memberTTL returns how long a member counts as live after a heartbeat:
// memberTTL, or the test's.
func (f *Fleet) memberTTL() time.Duration {
	if f.ttl > 0 {
		return f.ttl
	}
	return memberTTL
}

// errRunning is returned by a Run that another Run of the same Fleet
// overlaps.
var errRunning = errors.New("redisstore: Run is already running on this fleet")

// Run runs colly's queue q with collector c until the fleet's shared
// queue is drained: until no request is queued and no member holds one
// (a page under way could add more). q must have been made with
// queue.New over f.Queue(), and c should use f.Storage(). It returns nil
// once the fleet's work is done.
//
// colly's Queue.Run alone returns as soon as the shared queue looks empty
// to this member, even while other members are still fetching pages
// whose links will fill it again. Run instead runs q whenever the queue
// has requests, waits for c's pending requests (c.Wait), and otherwise
// polls the fleet, every 200 ms to 2 s, until it is drained. Each member
// calls Run; every member may add its seeds to the shared queue before
// calling it (the frontier drops the duplicates).
//
// While it runs, Run renews this member's leases with a heartbeat every
// 5 s (a third of the 15 s TTL); a member silent for a TTL has its
// requests given back to the others. The number of live members sets the
// slow-down under Slow (Fleet.SlowFactor).
//
// Run stops with an error wrapping ErrCrawlLost (a *CrawlLostError) when
// the crawl's state in Redis vanished or was replaced, and with one
// wrapping ErrNotRedis when the server does not speak Redis's protocol.
// While Redis cannot be reached, Run and q wait for it. If ctx ends,
// during such a wait too, Run stops taking requests (the rest stay for
// the other members, and what this member held goes back to the front of
// its hosts' queues), waits for the requests under way, and returns
// ctx.Err(). Close the Fleet to give up as well: Run then returns an
// error wrapping ErrClosed, or ErrClosed at once if it was closed before.
//
// Run runs once at a time per Fleet (the Fleet is one member): a second
// call while one runs returns an error at once. Do not run q elsewhere
// while Run runs; q can be run again once Run returned.
func (f *Fleet) Run(ctx context.Context, q *queue.Queue, c *colly.Collector) error {
	f.init()
	select {
	case <-f.closed:
		return ErrClosed
	default:
	}
	if !f.queue.running.CompareAndSwap(false, true) {
		return errRunning
	}
	defer f.queue.running.Store(false)
	fr := &f.front
	if err := fr.failed(); err != nil {
		return err
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	fr.runCtx.Store(&ctx)
	defer fr.runCtx.Store(nil)
	f.watchEnds(c)

	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		f.heartbeat(ctx, cancel, stop, f.memberTTL()/3)
	}()
	go func() {
		defer wg.Done()
		f.stalls.run(stop)
	}()
	defer func() {
		close(stop)
		wg.Wait()
		fr.leave()
	}()

	idle := idleMin
	for {
		if err := fr.failed(); err != nil {
			return err
		}
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		if err := fr.commit(ctx, false); err != nil {
			return f.runErr(ctx, err)
		}
		st, err := fr.step(ctx)
		if err != nil {
			return f.runErr(ctx, err)
		}
		switch {
		case st.pending == 0 && st.held == 0:
			f.log(slog.LevelInfo, "fleet drained")
			return nil
		case st.pending == 0 || (st.wait > 0 && st.held > 0 && st.pending <= st.held):
			// Others work (their pages may add requests), or every host
			// with requests is pacing.
			wait := idle
			if st.pending > 0 && st.wait >= 0 {
				wait = min(idle, time.Duration(st.wait+1)*time.Millisecond)
			}
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
			}
			idle = min(2*idle, idleMax)
			continue
		}
		idle = idleMin
		err = f.runQueue(ctx, q, c)
		// Once ctx ended, what the member still holds are requests
		// cancelled or never started: leave gives them back to the
		// others instead of ending them as dropped.
		if ctx.Err() == nil {
			if err2 := f.dropOrphans(ctx); err == nil && err2 != nil {
				err = err2
			}
		}
		if err != nil {
			return f.runErr(ctx, err)
		}
	}
}

// runErr returns the error that ends a Run: the member's fatal error, or
// ctx's cause, or err.
func (f *Fleet) runErr(ctx context.Context, err error) error {
	if fatal := f.front.failed(); fatal != nil {
		return fatal
	}
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	return err
}

// runQueue runs q until it finds the shared queue empty, waits for c's
// pending requests and stops q, so that it can run again. If ctx ends
// meanwhile, it halts f's Queue, so that q.Run returns once the requests
// under way are done, and returns ctx.Err().
func (f *Fleet) runQueue(ctx context.Context, q *queue.Queue, c *colly.Collector) error {
	done := make(chan struct{})
	watched := make(chan struct{})
	halted := false
	go func() {
		defer close(watched)
		select {
		case <-done:
		case <-ctx.Done():
			f.queue.halts.Add(1)
			halted = true
		}
	}()
	err := q.Run(c)
	close(done)
	<-watched
	if halted {
		f.queue.halts.Add(-1)
	}
	c.Wait()
	q.Stop() // safe now that q.Run returned; lets it run again
	if err != nil {
		return err
	}
	return ctx.Err()
}

// heartbeat renews the member's leases on every shard every period until
// stop is closed, and gives back dead members' requests. A beat is tried
// once: after a failure, the next one comes after beatRetry if that is
// sooner. A beat that finds the crawl lost ends the Run.
func (f *Fleet) heartbeat(ctx context.Context, cancel context.CancelCauseFunc, stop <-chan struct{}, every time.Duration) {
	t := time.NewTimer(every)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		bctx, done := context.WithTimeout(ctx, beatTimeout)
		_ = f.front.commit(bctx, true) // ends a skipped commit left
		_, err := f.front.step(bctx)
		done()
		if fatal := f.front.failed(); fatal != nil {
			cancel(fatal)
			return
		}
		next := every
		if err != nil {
			next = min(every, beatRetry)
		}
		t.Reset(next)
	}
}
