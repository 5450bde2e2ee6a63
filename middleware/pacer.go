package robotsmw

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"sync/atomic"
	"time"
)

// A Pacer is the home of the per-host schedule: where each host's next
// request may start, how many requests are in flight to it, when its last
// response ended, how fast it answers, its pause and its rate cut. A Guard
// keeps nothing of it but a copy: with Guard.Pacer nil it has a
// [MemoryPacer] of its own; one MemoryPacer shared by several Guards paces
// them as one; package redisstore keeps it in Redis, so that a fleet of
// crawler processes behaves as one polite crawler, and a pause that one of
// them is asked for (Retry-After, back-off) holds for every one.
//
// A request goes through the schedule in two steps (Reserve): it takes a
// position, at least the host's interval after the one before
// (politeness.md §5.2 B: a rate of starts), and, once its position has
// come, a lease: one of the host's in-flight places (Ask.InFlight, 1 by
// default, as Nutch, StormCrawler and Heritrix keep one request per host in
// flight), granted only when the previous response ended at least the gap
// before (Crawl-delay, which seeds/003 counts "after loading one page,
// before starting to load another", or more if the host slows down; see
// Ask.Latency). When the response has been read to its end, has failed or
// timed out, the Guard gives the lease back (Release) with the response
// time. A lease that is never given back (its member died) runs out.
//
// A Pacer keeps a host's state while the host holds anything — a lease,
// a pause, a cut interval, a position ahead — and for an idle horizon
// after its last response ended, then forgets it (its smoothed response
// time is then unknown again), so the memory it takes is bounded by the
// hosts being crawled: MemoryPacer.Idle (1 min by default) in memory,
// redisstore's Fleet.PacerIdle (10 min) in Redis.
//
// Only durations cross the interface: a Pacer measures time on its own
// clock (Redis's TIME, say) and the Guard sleeps the durations it is
// given, so the clocks of the fleet's machines need not agree.
//
// The Guard calls Strike after each 429, 503, 500, 502, 504 or network
// failure, and Recover when a host whose rate was cut has answered well
// long enough to speed up one step. A Pacer must be safe for concurrent
// use by multiple goroutines.
type Pacer interface {
	// Reserve takes, for one request to host, its position in the host's
	// schedule and then its lease. A position comes at least the host's
	// interval (a.Floor, or a cut above it) after the one before, or the
	// host's expected time per request (its smoothed response time plus
	// the gap, over a.InFlight) if that is longer, and never in a pause;
	// burst 1: a host first seen, or idle, gives its position now. A
	// position further away than a.Limit is not taken: Slot.Reserved is
	// false and Slot.Wait says when asking again makes sense. A position
	// that comes later, or any position with a.NoLease, is taken
	// (Reserved, Wait until it): the request asks again then, with
	// a.Positioned. Once the position has come, the lease is granted
	// (Slot.Lease not 0, Wait 0) if fewer than a.InFlight leases are held,
	// the last lease started at least the interval ago and the last
	// response ended at least the gap ago; otherwise Slot.Wait says when
	// to ask again, keeping the position (Pace.InFlight tells a busy host).
	Reserve(ctx context.Context, host string, a Ask) (Slot, error)

	// Release gives a lease back: the request's response ended (read to
	// its end, failed or timed out) r.Latency after it started. The end
	// starts the gap before the next lease. The smoothed response time
	// grows with slower responses and shrinks with faster ones, except
	// failures (r.Failed), which never shrink it. With r.Unsent the
	// request was not sent: nothing ended.
	Release(ctx context.Context, host string, r Release) (Pace, error)

	// Strike records a failure seen by one member: the host is paused for
	// s.Pause from now, merged with any pause in force by taking the later
	// end, and its schedule is voided (no position falls before the
	// pause's end). A failure that comes while the host is not paused
	// starts an incident, and cuts the rate once per incident: the
	// interval is multiplied by s.Factor if the last cut is at least one
	// interval old, however many members report the same incident.
	Strike(ctx context.Context, host string, s Strike) (Pace, error)

	// Recover lowers the host's interval to interval, never below floor
	// nor above its current value: one step of a cut host's recovery. It
	// does nothing while the host is paused or within one interval of its
	// last cut, so a step computed before another member's cut cannot
	// undo it.
	Recover(ctx context.Context, host string, interval, floor time.Duration) (Pace, error)

	// Watch calls fn whenever a member's Strike changes a host's pause or
	// interval, so that requests already waiting for a slot learn of it at
	// once. fn may be called concurrently and must not block. stop ends
	// the calls.
	Watch(fn func(host string, p Pace)) (stop func())
}

// An Ask is what one request asks of its host's schedule (see
// Pacer.Reserve).
type Ask struct {
	// Floor is the least interval between the starts of two requests: the
	// slowest of the Guard's Rate and the host's Crawl-delays.
	Floor time.Duration
	// Gap is the least time between the end of a response and the start
	// of the next request: the host's Crawl-delay (seeds/003), 0 if none.
	Gap time.Duration
	// Latency, if not 0, makes the gap at least Latency times the host's
	// smoothed response time, up to MaxLatencyGap: a host that slows down
	// is given more time between requests (see Guard.FixedPace).
	Latency float64
	// Limit is how far ahead a position may be taken.
	Limit time.Duration
	// InFlight is the most leases the host may have at once; below 1
	// means 1.
	InFlight int
	// Lease is how long a lease lasts if it is never given back; 0 means
	// DefaultLease.
	Lease time.Duration
	// Positioned says the request holds its position already.
	Positioned bool
	// NoLease asks for the position only: the lease is asked for when
	// the request is about to be sent (a colly request's OnRequest takes
	// its position, its gate the lease, once no later callback of the
	// user can abort it).
	NoLease bool
}

// A Release gives a lease back (see Pacer.Release).
type Release struct {
	// Lease is the lease given back.
	Lease uint64
	// Latency is how long the response took, from the start of the
	// request to the end of its body, failure or timeout.
	Latency time.Duration
	// Failed says the request failed (a 429 or 5xx, a network error, a
	// timeout, a body cut short): its latency may raise the smoothed
	// response time, never lower it.
	Failed bool
	// Unsent says the request was not sent after all.
	Unsent bool
	// Floor is the host's floor, for the Pace returned.
	Floor time.Duration
}

// A Strike is what a failure asks of a host's shared state (see
// Pacer.Strike).
type Strike struct {
	// Pause is how long the host is paused from now: the Retry-After, or
	// the back-off step.
	Pause time.Duration
	// Factor multiplies the interval when the failure starts an incident:
	// 2 after a 429 or 503, 1.25 after a 500, 502, 504 or network error.
	Factor float64
	// Floor is the slowest of the Guard's Rate and the host's
	// Crawl-delays; Ceiling is where cuts stop, unless Floor is slower.
	Floor, Ceiling time.Duration
	// From is the interval a cut starts from when the host has none (it is
	// paced by nothing but back-off).
	From time.Duration
}

// A Pace is a host's shared state as a Pacer reports it.
type Pace struct {
	// Interval is the spacing of starts in force: the floor, or a cut
	// above it.
	Interval time.Duration
	// Paused is how much longer the host is paused; 0 if it is not.
	Paused time.Duration
	// Latency is the host's smoothed response time; 0 if not known.
	Latency time.Duration
	// InFlight is how many leases the host has.
	InFlight int
}

// A Slot is the answer of Pacer.Reserve.
type Slot struct {
	// Reserved reports whether the request has its position.
	Reserved bool
	// Lease, if not 0, is the request's lease: it is sent now.
	Lease uint64
	// LeaseTTL is how long Lease lasts unless it is given back (or the
	// Pacer renews it while its holder lives); 0 means DefaultLease. A
	// request that has not been sent within half of it, because its
	// process stalled, asks for its host again (see guardTransport).
	LeaseTTL time.Duration
	// Wait is how long from now until asking again makes sense: until the
	// position, or until the host is likely free.
	Wait time.Duration
	Pace
}

// Schedule constants (politeness.md §5.2 B and J).
const (
	// DefaultLease is how long a lease lasts if its request never gives
	// it back (its member died): longer than any sane request timeout.
	DefaultLease = 2 * time.Minute
	// MaxLatencyGap caps the gap latency-aware pacing adds after each
	// response (Heritrix's maxDelayMs is 30 s); Crawl-delay is not capped
	// by it.
	MaxLatencyGap = 30 * time.Second
	// busyPoll is how long a request waits for a busy host before asking
	// again when the host's response time is not known yet; minBusyWait is
	// the least wait.
	busyPoll    = 250 * time.Millisecond
	minBusyWait = 10 * time.Millisecond
)

// leaseTTL returns how long a lease asked for with d lasts.
func leaseTTL(d time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return DefaultLease
}

// spacing returns how far apart positions are: the interval, or the
// expected time per request of a host with inFlight places whose
// responses take latency and are followed by gap, if that is longer. So
// requests reach a busy host's gate about when it is free, rather than
// all waiting there.
func spacing(interval, latency, gap time.Duration, inFlight int) time.Duration {
	return max(interval, (latency+gap)/time.Duration(max(inFlight, 1)))
}

// endGap returns the least time from the end of a response to the start
// of the next request: gap (Crawl-delay), or factor times the smoothed
// response time latency, capped at MaxLatencyGap, if that is longer.
func endGap(gap, latency time.Duration, factor float64) time.Duration {
	if factor <= 0 || latency <= 0 {
		return gap
	}
	return max(gap, min(time.Duration(float64(latency)*factor), MaxLatencyGap))
}

// smoothLatency returns the smoothed response time after a response that
// took sample. A slower response raises it to its own time at once (a
// host that slows down is eased off from its very next request); faster
// ones lower it by a quarter of the difference each, an exponentially
// weighted mean as in TCP's RTT estimate and Scrapy's AutoThrottle, so a
// host recovers over a few responses. A failed response never lowers it
// (AutoThrottle: error responses never shorten the delay).
func smoothLatency(old, sample time.Duration, failed bool) time.Duration {
	switch {
	case sample <= 0:
		return old
	case sample >= old:
		return sample
	case failed:
		return old
	}
	return old - (old-sample)/4
}

// Retries of an unreachable Pacer (politeness.md §3.6 point 7: pause
// rather than run every member at full speed).
const (
	pacerRetryMin = time.Second
	pacerRetryMax = 30 * time.Second
)

// ErrPacerUnavailable is wrapped by the cause of a deferral while the
// Guard's Pacer cannot be reached: the request is sent again once it can.
var ErrPacerUnavailable = fmt.Errorf("robotsmw: pacer unavailable")

// A pacerState is what a Guard keeps about its Pacer.
type pacerState struct {
	watchOnce atomic.Bool
	// leaseTTL is the LeaseTTL of the last lease a shared Pacer gave, in
	// nanoseconds (see guardTransport.stale); 0 until one did.
	leaseTTL atomic.Int64
	// failures counts the failed Pacer calls in a row; it sets how long
	// requests are put off while the Pacer is down.
	failures atomic.Int32
}

// watch registers the Guard with its Pacer, once.
func (g *Guard) watch(p Pacer) {
	if g.pacer.watchOnce.Load() || !g.pacer.watchOnce.CompareAndSwap(false, true) {
		return
	}
	p.Watch(func(name string, pc Pace) {
		if h := g.hosts.lookup(name); h != nil {
			h.mu.Lock()
			h.apply(g.clock().UnixNano(), pc, h.base)
			h.mu.Unlock()
		}
	})
}

// apply merges what the Pacer said of the host at now into its local
// copy: the pause's later end, the interval and the smoothed response
// time. A pause that ends later than the one known voids the local waits,
// which take new positions. h.mu must be held.
func (h *host) apply(now int64, p Pace, rateFloor time.Duration) {
	if p.Latency > 0 {
		h.latency = p.Latency
	}
	if p.Paused > 0 {
		if end := addNanos(now, p.Paused); end > h.pauseUntil {
			h.pauseUntil = end
			if p.Paused > maxRetryAfter {
				h.troubled(rateFloor).excluded = true
			}
			h.wake()
		}
	}
	floor := h.floor(rateFloor)
	iv := max(p.Interval, floor)
	if iv == h.interval {
		return
	}
	h.interval = iv
	if iv > floor {
		h.troubled(rateFloor).cut = true
	} else if h.t != nil {
		h.t.cut = false
	}
}

// pacerOf returns the home of the Guard's schedule: Guard.Pacer, or the
// Guard's own MemoryPacer on the Guard's clock.
func (g *Guard) pacerOf() Pacer {
	if g.Pacer != nil {
		return g.Pacer
	}
	g.memOnce.Do(func() { g.mem.Now = g.clock })
	return &g.mem
}

// ask returns what a request to h asks of the schedule, within horizon;
// h.mu must be held.
func (g *Guard) ask(h *host, horizon time.Duration) Ask {
	a := Ask{
		Floor:    h.floor(h.base),
		Gap:      h.crawlDelay(),
		Limit:    horizon,
		InFlight: h.inFlight,
	}
	if !g.FixedPace {
		a.Latency = latencyFactor
	}
	return a
}

// schedule takes u's position in h's schedule and, with lease set, then
// its lease (see Pacer), and sleeps until they have come, but no longer
// than limit in all. It returns the lease: the request may be sent now,
// and the lease must be given back when its response ends (see flight).
//
// A wait longer than limit defers the request: to its position, which it
// keeps (the deferral is reserved: when the request comes back it goes
// without taking a new one, so deferred requests come back one by one
// rather than together), or to when the host is likely free. A position
// further away than sharedHorizon times MaxWait is not taken (with a
// shared Pacer). A pause learned meanwhile (a strike of this Guard, or
// Watch) voids the position: the request waits for the pause's end and
// takes a new one. A lease given back wakes the requests waiting for the
// host. positioned says the request holds its position from an earlier
// deferral.
//
// now is the time on the Guard's clock (zero: read it); schedule returns
// the time its request was given its slot at.
func (g *Guard) schedule(ctx context.Context, h *host, u *url.URL, limit time.Duration, positioned, lease bool, now time.Time) (uint64, time.Time, error) {
	p := g.pacerOf()
	g.watch(p)
	h.queued.Add(1)
	defer h.queued.Add(-1)
	var deadline int64 // set on the first turn, from lockOpen's clock read
	first := true
	horizon := limit
	switch {
	case g.Pacer == nil:
		// The Guard's own schedule dies with it: no position is lost.
		horizon = maxDuration
	case limit != maxDuration && ctx.Value(noDeferral{}) == nil:
		horizon = max(limit, sharedHorizon*g.maxWait())
	}
	for ; ; now = (time.Time{}) { // each turn after the first reads the clock
		var err error
		if now, err = g.lockOpen(h, u, now); err != nil {
			return 0, time.Time{}, err
		}
		n := now.UnixNano()
		if first {
			deadline, first = addNanos(n, limit), false
		}
		if pu := h.pauseUntil; pu > n {
			positioned = false // a pause since the position was taken voids it
			switch {
			case time.Duration(pu-n) > horizon:
				// No position that far ahead: come back at the pause's end.
				h.mu.Unlock()
				return 0, time.Time{}, g.deferred(h, u, pu, pu, false)
			case pu <= deadline:
				if _, err := g.sleepFor(ctx, h, u, time.Duration(pu-n)); err != nil {
					return 0, time.Time{}, err
				}
				continue
			}
			// Deferred beyond the pause: the Pacer gives the request its
			// position after it, so deferred requests come back one by
			// one rather than together at its end.
		}
		a := g.ask(h, horizon)
		jitter := g.Jitter > 0 && !positioned
		a.Positioned, a.NoLease = positioned, !lease || jitter
		var s Slot
		if p == Pacer(&g.mem) {
			// The Guard's own MemoryPacer answers at once and calls
			// nothing back with its lock held: asked with h.mu held
			// (h.mu before its mu), which spares a round of h.mu.
			s, err = g.mem.reserve(h.name, a, &h.pace, now)
		} else {
			h.waiters++ // not evicted during the call
			h.mu.Unlock()
			s, err = p.Reserve(ctx, h.name, a)
			h.mu.Lock()
			h.waiters--
		}
		if err != nil {
			h.mu.Unlock()
			if ctx.Err() != nil {
				return 0, time.Time{}, g.ended(u, ctx.Err())
			}
			if limit == maxDuration {
				// The Guard's own robots.txt fetch, on its own goroutine:
				// wait for the Pacer rather than fail robots.txt.
				if err := g.pause(ctx, g.pacerRetry(), nil); err != nil {
					return 0, time.Time{}, g.ended(u, err)
				}
				continue
			}
			return 0, time.Time{}, g.pacerDown(h, u, err)
		}
		if g.pacer.failures.Load() != 0 {
			// Written only when set: a store per request would bounce
			// the line between cores.
			g.pacer.failures.Store(0)
		}
		if s.Wait > 0 || s.Pace.Paused > 0 || p != Pacer(&g.mem) {
			// A wait or a pause is counted from the Pacer's answer (a
			// shared one's took a round trip): read the clock again. The
			// Guard's own MemoryPacer, on the Guard's clock, granted a
			// slot at once at now: one clock read per turn on the fast
			// path.
			now = g.clock()
			n = now.UnixNano()
		}
		h.apply(n, s.Pace, h.base)
		if jitter && s.Reserved {
			// A random delay after the position, never before it.
			s.Wait += time.Duration(g.random() * min(g.Jitter, 1) * float64(s.Interval))
		}
		if s.Lease != 0 && p != Pacer(&g.mem) {
			ttl := int64(leaseTTL(s.LeaseTTL))
			if g.pacer.leaseTTL.Load() != ttl {
				// Written only when it changes: a store per request
				// would bounce the line between cores.
				g.pacer.leaseTTL.Store(ttl)
			}
		}
		if s.Lease != 0 {
			// Sent now: counted here, with h.mu held.
			h.sent++
			h.lastSend = max(h.lastSend, now.UnixNano())
			h.mu.Unlock()
			g.totals[cSent].Add(1)
			g.passed(h, now)
			return s.Lease, now, nil
		}
		if !lease && s.Reserved && s.Wait <= 0 {
			h.mu.Unlock()
			return 0, now, nil
		}
		positioned = s.Reserved
		at := addNanos(n, s.Wait)
		if !s.Reserved || at > deadline {
			pu := h.pauseUntil
			h.mu.Unlock()
			return 0, time.Time{}, g.deferred(h, u, at, pu, s.Reserved)
		}
		var voided bool
		if s.Reserved && s.InFlight >= a.InFlight {
			// Busy: the wait is for a lease to come back, an event rather
			// than a time; s.Wait only bounds it.
			voided, err = g.awaitFree(ctx, h, u, s.Wait)
		} else {
			voided, err = g.sleepFor(ctx, h, u, s.Wait)
		}
		if err != nil {
			return 0, time.Time{}, err
		}
		if voided {
			positioned = false
		}
	}
}

// giveBack gives a lease of h back to the Guard's Pacer at now; the
// Guard's own MemoryPacer is told with h's hint (see MemoryPacer.hinted).
func (g *Guard) giveBack(h *host, r Release, now time.Time) (Pace, error) {
	if p := g.pacerOf(); p != Pacer(&g.mem) {
		return p.Release(context.Background(), h.name, r)
	}
	return g.mem.release(h.name, r, &h.pace, now)
}

// awaitFree waits up to d, on the real clock (a lease comes back when a
// response ends, not at a time a test clock can skip to), for a lease of
// h to come back, a strike to void h's schedule (voided), or ctx to end.
// h.mu must be held; it is released.
func (g *Guard) awaitFree(ctx context.Context, h *host, u *url.URL, d time.Duration) (voided bool, err error) {
	return g.waitOn(h, u, func(woken <-chan struct{}) error { return realPause(ctx, d, woken) })
}

// sharedHorizon, times MaxWait, is how far ahead a deferred request takes
// its position: a member that dies with deferred requests leaves their
// positions unused for at most that long.
const sharedHorizon = 10

// latencyFactor times a host's smoothed response time is the least gap
// between the end of one of its responses and the next request, unless
// FixedPace is set: a host that takes 2 s to answer waits 2 s before the
// next request, so a crawler never keeps it busy more than half the time,
// and a host that slows down under load is given time to recover.
// Heritrix waits 5 times the last fetch's duration (delayFactor); Scrapy's
// AutoThrottle aims at its latency divided by the target concurrency. We
// take 1 with one request in flight: Heritrix's factor of 5 would slow a
// healthy 50 ms host with no Crawl-delay and a high Rate to 4 pages a
// second, and Rate and Crawl-delay remain floors either way.
const latencyFactor = 1.0

// release gives back, at now (zero: read the clock), the lease of a
// request to h whose response ended (or that was not sent, unsent)
// latency after it started, and wakes the requests waiting for the host.
// A Pacer that cannot be reached lets the lease run out.
//
// With page set, the response was a colly request's page, read to its end
// (or as far as colly wanted): it is counted in Stats.
func (g *Guard) release(h *host, lease uint64, latency time.Duration, failed, unsent bool, now time.Time, page bool) {
	var floor time.Duration
	if g.Pacer != nil {
		// For the Pace a shared Pacer returns; apply takes the floor into
		// account either way, so the Guard's own MemoryPacer goes without.
		h.mu.Lock()
		floor = h.floor(h.base)
		h.mu.Unlock()
	}
	pc, err := g.giveBack(h, Release{Lease: lease, Latency: latency, Failed: failed, Unsent: unsent, Floor: floor}, now)
	var n int64
	if err == nil && pc.Paused > 0 {
		n = g.clock().UnixNano() // apply reads the time only for a pause
	}
	h.mu.Lock()
	if err == nil {
		h.apply(n, pc, h.base)
	}
	h.notify()
	if page {
		h.add(cPages)
	}
	h.mu.Unlock()
	if page {
		g.totals[cPages].Add(1)
	}
}

// A flight is a request sent under a lease of its host: its end gives
// the lease back once, with the time the response took.
type flight struct {
	g     *Guard
	h     *host
	lease uint64
	start time.Time
	done  atomic.Bool
	page  bool // a colly request's: a clean end counts a page (see release)
}

// newFlight returns the flight of a request to h sent under lease at
// start (zero: now).
func (g *Guard) newFlight(h *host, lease uint64, start time.Time) *flight {
	f := new(flight)
	g.startFlight(f, h, lease, start)
	return f
}

// startFlight makes *f the flight of a request to h sent under lease at
// start (zero: now).
func (g *Guard) startFlight(f *flight, h *host, lease uint64, start time.Time) {
	if start.IsZero() {
		start = g.clock()
	}
	f.g, f.h, f.lease, f.start = g, h, lease, start
}

// end records the end of f's response (read to its end, failed or timed
// out), once; a nil flight has nothing to give back.
func (f *flight) end(failed bool) {
	if f == nil || f.done.Swap(true) {
		return
	}
	page := f.page && !failed
	if f.lease == 0 {
		if page {
			f.g.count(f.h, cPages)
		}
		return
	}
	now := f.g.clock()
	f.g.release(f.h, f.lease, now.Sub(f.start), failed, false, now, page)
}

// unsent gives f's lease back for a request that never reached the host
// (its dial was refused), and takes it out of the requests sent.
func (f *flight) unsent() {
	if f == nil || f.done.Swap(true) {
		return
	}
	f.h.mu.Lock()
	f.h.sent--
	f.h.mu.Unlock()
	f.g.totals[cSent].Add(-1)
	if f.lease != 0 {
		f.g.release(f.h, f.lease, 0, false, true, time.Time{}, false)
	}
}

// A flightBody ends its request's flight when the body is read to its
// end, fails or is closed.
type flightBody struct {
	io.ReadCloser
	f      *flight
	failed bool // a failed response: its latency never lowers the estimate
}

func (b *flightBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil {
		b.f.end(b.failed || err != io.EOF)
	}
	return n, err
}

func (b *flightBody) Close() error {
	err := b.ReadCloser.Close()
	b.f.end(b.failed)
	return err
}

// pacerDown returns the deferral of a request whose slot the Pacer could
// not give: it is sent again after a pause that doubles with each failed
// call in a row, from pacerRetryMin up to pacerRetryMax.
func (g *Guard) pacerDown(h *host, u *url.URL, err error) error {
	d := g.pacerRetry()
	g.count(h, cDeferred)
	return &DeferredError{URL: u, Until: g.clock().Add(d), Err: fmt.Errorf("%w: %w", ErrPacerUnavailable, err)}
}

// pacerRetry counts a failed Pacer call and returns how long to wait
// before the next.
func (g *Guard) pacerRetry() time.Duration {
	n := g.pacer.failures.Add(1)
	d := pacerRetryMin
	for i := int32(1); i < n && d < pacerRetryMax; i++ {
		d *= 2
	}
	return min(d, pacerRetryMax)
}

// sharedStrike reports a strike of h, which paused it for pause, to the
// Pacer and merges the answer. A failed call leaves the local pause in
// force (the next Reserve fails too, and defers).
func (g *Guard) sharedStrike(ctx context.Context, p Pacer, h *host, c class, pause time.Duration) {
	g.watch(p)
	factor := 1.25
	if c == hard {
		factor = 2
	}
	h.mu.Lock()
	floor := h.floor(h.base)
	h.mu.Unlock()
	pc, err := p.Strike(ctx, h.name, Strike{
		Pause:   pause,
		Factor:  factor,
		Floor:   floor,
		Ceiling: min(maxInterval, g.maxBackoff()),
		From:    minCutInterval,
	})
	if err != nil {
		return
	}
	h.mu.Lock()
	h.apply(g.clock().UnixNano(), pc, h.base)
	h.mu.Unlock()
}

// sharedRecover reports one step of h's recovery to the Pacer.
func (g *Guard) sharedRecover(ctx context.Context, p Pacer, h *host, interval, floor time.Duration) {
	pc, err := p.Recover(ctx, h.name, interval, floor)
	if err != nil {
		return
	}
	h.mu.Lock()
	h.apply(g.clock().UnixNano(), pc, h.base)
	h.mu.Unlock()
}
