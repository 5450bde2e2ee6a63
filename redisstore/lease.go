package redisstore

import (
	"context"
	"errors"
	"time"

	"github.com/gocolly/colly/v2"

	robotsmw "github.com/robotsmw/robotsmw/middleware"
)

// Leases. A request a member pops is held in the shard's set of the
// member's requests until it ends: its page was scraped, it failed for
// good, or it was blocked. The end goes in one round trip with the links
// the page added (commit), so a page's links are in Redis before its end
// is: a member that dies before that has its page fetched again, links
// and all. It goes with the member's next pop, or on its own within
// commitFlush, tried once; while Redis cannot be reached (or is full) it
// waits in memory for the next commit (the next pop, the heartbeat, Run's
// loop), so no colly thread waits for Redis. The member's heartbeat renews its deadline on
// every shard; once the deadline passes, any member's next pop or
// heartbeat gives the requests back, to the front of their hosts'
// queues: within a TTL of the last heartbeat, two TTLs at most.
//
// A member that was silent that long (stopped, or cut off) learns it at
// its next renewal, and drops the requests it held then before sending
// them: other members have them now. Which those are, Redis says: a
// request popped after the renewal that found the member gone (another
// thread's pop, which renewed it first) is the member's, and is kept, or
// no one would ever end it and the fleet would never be drained.

// Outcomes counted in the shards' meta hashes.
const (
	outFetched = "fetched"
	outBlocked = "blocked"
	outGaveUp  = "gaveup"
	outRefused = "dropped"
)

// watchEnds makes the ends of c's requests end their leases, once per
// collector.
func (f *Fleet) watchEnds(c *colly.Collector) {
	f.endsMu.Lock()
	defer f.endsMu.Unlock()
	if f.ends == nil {
		f.ends = map[*colly.Collector]bool{}
	}
	if f.ends[c] {
		return
	}
	f.ends[c] = true
	// Before the Guard's checks and after its gate (the wait for the
	// host's slot, in OnRequestHeaders), so that a request that slept
	// through a stop of the process is not sent once others have it.
	c.OnRequest(func(r *colly.Request) {
		f.checkLease(r)
		if !r.IsAbort() && r.Ctx.Get(ctxReturned) == "1" {
			// Given back by a dead member: its lease, asked for next,
			// goes before the host's schedule (see memberPacer.front).
			r.Ctx.Put(ctxReturned, "2")
			f.member.front(r.URL)
		}
	})
	c.OnRequestHeaders(func(r *colly.Request) { f.checkLease(r) })
	c.OnScraped(func(r *colly.Response) { f.end(r.Request, outFetched) })
	c.OnError(func(r *colly.Response, err error) {
		var de *robotsmw.DeferredError
		var dis *robotsmw.DisallowedError
		switch {
		case errors.As(err, &de):
			f.deferred(r.Request, de)
		case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) && f.front.ctx().Err() != nil:
			// The crawl stops: the request stays held and is given back
			// when the member leaves.
		case errors.As(err, &dis):
			f.end(r.Request, outBlocked)
		case !robotsmw.IsFinal(err):
		case r.StatusCode != 0:
			f.end(r.Request, outFetched)
		default:
			f.end(r.Request, outGaveUp)
		}
	})
}

// leaseOf returns the lease entry a popped request carries, or "".
func leaseOf(r *colly.Request) string {
	if r == nil || r.Ctx == nil {
		return ""
	}
	return r.Ctx.Get(ctxLease)
}

// end ends r's lease with outcome: the end, with the links the page
// added, goes with the member's next pop, in the same round trip, or
// after commitFlush at the latest.
func (f *Fleet) end(r *colly.Request, outcome string) {
	if e := leaseOf(r); e != "" && f.front.end(e, outcome) {
		f.front.flushSoon()
	}
}

// deferred tells the fleet that r's host may not go before de.Until, so
// that members stop popping its requests meanwhile.
func (f *Fleet) deferred(r *colly.Request, de *robotsmw.DeferredError) {
	if leaseOf(r) == "" {
		return
	}
	if d := time.Until(de.Until); d > f.hostGap() {
		_ = f.front.deferHost(f.front.ctx(), r.URL.Host, d)
	}
}

// checkLease runs right before a popped request is sent: if the member
// has not renewed its leases for a TTL (it was stopped, or cut off), it
// renews them first, and a request given to other members meanwhile is
// not sent (they send it).
func (f *Fleet) checkLease(r *colly.Request) {
	e := leaseOf(r)
	if e == "" || r.IsAbort() {
		return
	}
	fr := &f.front
	if time.Since(time.Unix(0, fr.tended.Load())) > f.memberTTL() && !f.down.Load() {
		ctx, cancel := context.WithTimeout(fr.ctx(), beatTimeout)
		_, err := fr.step(ctx)
		cancel()
		if err != nil && fr.failed() != nil {
			r.Abort()
			return
		}
	}
	if fr.stale(e) && !fr.stillHeld(e) {
		fr.forget(e)
		r.Abort()
	}
}

// dropOrphans ends the leases of requests colly refused before any
// callback ran (a filter, MaxDepth): after c.Wait, the member holds
// nothing that is still under way.
func (f *Fleet) dropOrphans(ctx context.Context) error {
	for _, e := range f.front.heldEntries() {
		f.front.end(e, outRefused)
	}
	return f.front.commit(ctx, false)
}
