package robotsmw

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/robotsmw/robotsmw/policy"
)

// Waiting constants (docs/politeness.md).
const (
	// defaultMaxWait is the longest a request waits for its host or its
	// robots.txt inside a colly callback when Guard.MaxWait is zero;
	// docs/politeness.md: 30 s.
	defaultMaxWait = 30 * time.Second
	// minDeferral is the shortest wait before robots.txt is asked again, in
	// case the cache reports a RetryAt that has already passed.
	minDeferral = 100 * time.Millisecond
	// robotsPending is how long a request is put off when its origin's
	// robots.txt fetch did not finish within the wait limit.
	robotsPending = 5 * time.Second
)

// maxAbandoned is how often one admission asks again for a robots.txt
// whose fetch was abandoned before it takes the abandonment as the fetch's
// failure.
const maxAbandoned = 3

// errRobotsPending is the cause of a deferral while robots.txt is still
// being fetched.
var errRobotsPending = errors.New("robotsmw: robots.txt still being fetched")

// admit decides whether a request or redirect hop to u may be sent, and
// waits until it may, but never longer than limit: robots.txt first, then
// the host's schedule (see Guard.schedule): its pause and the request's
// position, and, with gate set, the host's gate too (for redirect hops
// and requests the transport admits itself, where nothing runs between
// admission and sending): a lease of one of its in-flight places.
//
// It returns nil, and with gate the request's lease, when the request may
// go on, a *DeferredError when it would have to wait longer than limit
// (its position in the host's schedule is then kept for it), or a final
// error. reserved says that the request holds a position from an earlier
// deferral.
func (g *Guard) admit(ctx context.Context, cache *policy.Cache, u *url.URL, agent string, limit time.Duration, reserved, gate bool) (uint64, error) {
	if err := ctx.Err(); err != nil {
		return 0, g.ended(u, err)
	}
	lease, _, err := g.admitTo(ctx, cache, g.host(u), u, agent, limit, reserved, gate, time.Time{})
	return lease, err
}

// admitTo is admit for a request to h, the state of u's host, at now on
// the Guard's clock (zero: read it).
//
// It returns the lease (with gate), and when the request was given its
// slot.
func (g *Guard) admitTo(ctx context.Context, cache *policy.Cache, h *host, u *url.URL, agent string, limit time.Duration, reserved, gate bool, now time.Time) (uint64, time.Time, error) {
	if err := ctx.Err(); err != nil {
		return 0, time.Time{}, g.ended(u, err)
	}
	waited, err := g.check(ctx, cache, h, u, agent, limit, now)
	if err != nil {
		return 0, time.Time{}, err
	}
	if waited {
		now = time.Time{} // read the clock again
	}
	return g.schedule(ctx, h, u, limit, reserved, gate, now)
}

// check applies robots.txt to u for agent (RFC 9309 §2.2.2; only
// /robots.txt itself is exempt) and applies the Crawl-delay to the host.
// now is the time on the Guard's clock (zero: read it); waited reports
// that check may have waited (for robots.txt), so that now is stale.
//
// While robots.txt is unreachable (RFC 9309 §2.3.1.4: complete disallow,
// which is temporary; docs/politeness.md) the request waits until the
// cache's RetryAt if that is within limit, and is deferred until then
// otherwise. Once robots.txt has failed MaxRobotsFailures times in a row, or asks
// for a Retry-After beyond 24 hours, the request fails at once with
// ErrRobotsUnreachable: pages of such an origin fail fast.
func (g *Guard) check(ctx context.Context, cache *policy.Cache, h *host, u *url.URL, agent string, limit time.Duration, now time.Time) (waited bool, err error) {
	// The path as the server reads it: a net/http caller of Guard.Transport
	// may send "/public/../private/x", which the server serves as
	// /private/x (colly's URLs have no dot segments).
	target := policy.ResolveDots(u)
	if target.Path == "/robots.txt" {
		return false, nil
	}
	if now.IsZero() {
		now = g.clock() // read here rather than in robots: the asks' start
	}
	abandoned, begun := 0, now
	for ; ; now, waited = (time.Time{}), true {
		e, m, err := g.robots(ctx, cache, h, u, agent, limit, now) // e: read only
		if m == nil {
			waited = true // asked the cache, which may have fetched
		}
		if err != nil {
			var fe *policy.FetchError
			switch {
			case errors.Is(err, ErrDeferred), errors.Is(err, ErrGaveUp):
				return waited, err
			case errors.Is(err, context.Canceled) && ctx.Err() == nil:
				// The fetch this request waited for was abandoned (the
				// crawl that started it ended; see crawlEnded): ask again,
				// which fetches it for this crawl.
				if abandoned++; abandoned > maxAbandoned {
					return waited, unsent(ErrRobotsUnreachable, u, fmt.Sprintf("robots.txt's fetch was abandoned %d times in a row", abandoned), err)
				}
				if limit != maxDuration {
					// The asks together wait at most limit.
					t := g.clock()
					limit, begun = max(limit-t.Sub(begun), 0), t
				}
				continue
			case errors.As(err, &fe):
				now := g.clock()
				wait := e.RetryAt.Sub(now)
				switch {
				case ctx.Value(noDeferral{}) != nil:
					// Guard.Transport: a net/http caller cannot be sent
					// again later, and waiting for robots.txt's next try
					// (a minute or more) would only run out its timeout.
					return waited, unsent(ErrRobotsUnreachable, u, "robots.txt is unreachable, next try at "+e.RetryAt.UTC().Format(time.RFC3339), err)
				case e.Failures >= g.maxRobotsFailures():
					failed := fmt.Sprintf("failed %d times in a row", e.Failures)
					if e.Failures == 1 {
						failed = "failed"
					}
					return waited, unsent(ErrRobotsUnreachable, u, fmt.Sprintf("robots.txt %s, next try at %s",
						failed, e.RetryAt.UTC().Format(time.RFC3339)), err)
				case forbidden(err):
					// robots.txt's address was refused (netguard): so
					// would the page's be; waiting cannot help.
					return waited, unsent(ErrRobotsUnreachable, u, "robots.txt's address is refused", err)
				case wait > maxRetryAfter:
					return waited, unsent(ErrRobotsUnreachable, u, fmt.Sprintf("robots.txt asked for a pause until %s, more than %v away",
						e.RetryAt.UTC().Format(time.RFC3339), maxRetryAfter), err)
				case wait > limit:
					return waited, &DeferredError{url: u, Until: e.RetryAt, Err: err}
				}
				if err := g.pause(ctx, max(wait, minDeferral), nil); err != nil {
					return waited, g.ended(u, err)
				}
				continue
			case ctx.Err() != nil:
				return waited, g.ended(u, ctx.Err())
			case errors.Is(err, context.DeadlineExceeded):
				// The fetch of robots.txt outlasted limit (it may be queued
				// behind others; Cache.MaxFetches): come back later.
				return waited, &DeferredError{url: u, Until: g.clock().Add(min(limit+minDeferral, robotsPending)), Err: errRobotsPending}
			case errors.Is(err, policy.ErrStore):
				// A shared store that cannot be read now: come back later,
				// without a verdict (nothing is lost, nothing sent).
				return waited, &DeferredError{url: u, Until: g.clock().Add(robotsPending), Err: err}
			}
			// No origin: fail closed.
			return waited, unsent(ErrGaveUp, u, "", err)
		}
		if !m.allowed(e.Robots, agent, target) {
			return waited, disallowed(u, agent, e.Robots.Explain(agent, target))
		}
		if _, ok := m.delayFor(agent); ok {
			// Applied to the host under this entry for this agent already.
			return waited, nil
		}
		d, _ := e.Robots.CrawlDelay(agent)
		if d > policy.MaxCrawlDelay {
			if !g.ClampCrawlDelay {
				return waited, crawlDelayTooLong(u, e.Origin, d)
			}
			d = policy.MaxCrawlDelay
		}
		h.setCrawlDelay(e.Origin, d, h.base)
		h.applied(m, agent, d)
		return waited, nil
	}
}

// checkInPlace is check for a request of a synchronous collector, at now
// on the Guard's clock (zero: read it): with no bound on its wait, and
// any deferral waited out in place (inplace.go; robots.txt's store cannot
// be read, say). It returns when the request was admitted.
func (g *Guard) checkInPlace(ctx context.Context, cache *policy.Cache, h *host, u *url.URL, agent string, now time.Time) (time.Time, error) {
	err := g.untilAdmitted(ctx, u, func(bool) error {
		if err := ctx.Err(); err != nil {
			return g.ended(u, err)
		}
		waited, err := g.check(ctx, cache, h, u, agent, maxDuration, now)
		if waited || err != nil {
			now = time.Time{} // read the clock again
		}
		return err
	})
	if now.IsZero() {
		now = g.clock()
	}
	return now, err
}

// robots returns the cache's entry for u's origin. A fresh cached entry is
// read without a timer, and the host's memo of it (robotsMemo, which keeps
// agent's Matcher) without the cache. Otherwise robots.txt may have to be
// fetched, which goes through the host's gate: while the host is paused
// beyond limit the request is deferred to the pause's end without starting
// a fetch that would only wait for it. The look-up, which may wait for a
// fetch, is bounded by limit (on the real clock, like the fetch).
// now is the time on the Guard's clock (zero: read it).
//
// It returns the memo the entry came from or went to, if any.
func (g *Guard) robots(ctx context.Context, cache *policy.Cache, h *host, u *url.URL, agent string, limit time.Duration, now time.Time) (*policy.Entry, *robotsMemo, error) {
	if now.IsZero() {
		now = g.clock()
	}
	if m, ok := h.memo(cache, u, now); ok {
		return &m.e, m, nil // no copy: a memo does not change
	}
	pe, peeked := cache.Peek(u)
	if peeked && freshEntry(pe, now) {
		m := h.remember(cache, u, pe, agent)
		return &m.e, m, nil
	}
	h.mu.Lock()
	pauseUntil := h.pauseUntil
	excluded := h.t != nil && h.t.excluded
	if excluded {
		h.t.asked = now.UnixNano()
	}
	h.mu.Unlock()
	if n := now.UnixNano(); pauseUntil-n > int64(limit) {
		if excluded {
			return &policy.Entry{}, nil, excludedError(u, h, pauseUntil)
		}
		// An unreachable robots.txt not due again yet is answered by
		// the cache at once, without a fetch: its failure decides
		// (check), not the host's pause, which that very failure may
		// have started.
		if !peeked || !now.Before(pe.Expires) {
			return &policy.Entry{}, nil, g.deferred(h, u, pauseUntil, pauseUntil, n, false)
		}
	}
	lctx, cancel := context.WithTimeout(ctx, max(limit, minDeferral))
	defer cancel()
	// A request waiting for robots.txt waits for its host: the host is
	// not forgotten meanwhile (host.quiet), however long the fetch takes.
	h.mu.Lock()
	h.waiters++
	h.mu.Unlock()
	e, err := cache.Get(lctx, u)
	h.mu.Lock()
	h.waiters--
	h.mu.Unlock()
	return &e, nil, err
}

// ended returns the final error of a request whose wait ctx cut short.
func (g *Guard) ended(u *url.URL, err error) error {
	return unsent(ErrGaveUp, u, "", err)
}

// excludedError returns the final error of a request to a host excluded
// until until (a Retry-After beyond maxRetryAfter).
func excludedError(u *url.URL, h *host, until int64) error {
	return unsent(ErrGaveUp, u, fmt.Sprintf("asked for a pause more than %v away", maxRetryAfter), pausedError(h.name, time.Unix(0, until)))
}

// deferred returns the deferral of a request to h that would have to wait
// until start (counted as it is delivered: Guard.outcome). Its cause is h's pause while one holds at
// now (the wait then ends no sooner than pauseUntil), else the host's
// rate.
func (g *Guard) deferred(h *host, u *url.URL, start, pauseUntil, now int64, reserved bool) *DeferredError {
	var cause error = errHostBusy
	if start <= pauseUntil || now < pauseUntil {
		cause = pausedError(h.name, time.Unix(0, pauseUntil))
	}
	return &DeferredError{url: u, Until: time.Unix(0, start), Err: cause, reserved: reserved}
}

// lockOpen locks h and returns now, or the time on the Guard's clock if
// now is zero, unless the host is excluded (a Retry-After beyond
// maxRetryAfter): then h.mu is not held and the error is final.
func (g *Guard) lockOpen(h *host, u *url.URL, now time.Time) (time.Time, error) {
	h.mu.Lock()
	if now.IsZero() {
		now = g.clock()
	}
	if err := h.refuseExcluded(u, now.UnixNano()); err != nil {
		return time.Time{}, err
	}
	return now, nil
}

// refuseExcluded returns the final error of a request for u at n while h is
// excluded (a Retry-After beyond maxRetryAfter holds), noting that a
// request asked for it (see host.quiet), and releases h.mu; otherwise it
// returns nil with h.mu still held.
func (h *host) refuseExcluded(u *url.URL, n int64) error {
	if h.t == nil || !h.t.excluded || n >= h.pauseUntil {
		return nil
	}
	h.t.asked = n
	until := h.pauseUntil
	h.mu.Unlock()
	return excludedError(u, h, until)
}

// sleepFor sleeps d waiting for h, or until a strike voids h's schedule
// (voided), or until ctx ends. h.mu must be held; it is released.
func (g *Guard) sleepFor(ctx context.Context, h *host, u *url.URL, d time.Duration) (voided bool, err error) {
	return g.waitOn(h, u, func(woken <-chan struct{}) error { return g.pause(ctx, d, woken) })
}

// waitOn runs wait with the channel h's next change closes, counting it as
// a waiter of h, and reports whether a strike voided h's schedule
// meanwhile; wait's error ends the request. h.mu must be held; it is
// released.
func (g *Guard) waitOn(h *host, u *url.URL, wait func(woken <-chan struct{}) error) (voided bool, err error) {
	gen, ch := h.gen, h.changes()
	h.waiters++
	h.mu.Unlock()
	err = wait(ch)
	h.mu.Lock()
	h.waiters--
	voided = h.gen != gen
	h.mu.Unlock()
	if err != nil {
		return false, g.ended(u, err)
	}
	return voided, nil
}

// changes returns the channel the next strike closes; h.mu must be held.
func (h *host) changes() chan struct{} {
	if h.changed == nil {
		h.changed = make(chan struct{})
	}
	return h.changed
}

// gate is the last step before bytes go to the host, right before the
// HTTP client sends them (after any LimitRule slot was taken, and after
// every OnRequest callback, so no callback can abort the request any
// more): it takes the request's lease of one of the host's in-flight
// places (Guard.InFlight), once the host's pause is over, the start
// spacing is kept and the previous response ended at least the gap
// (Crawl-delay, latency) before, waiting at most limit. The position an
// asynchronous collector's request took in OnRequest orders the requests
// without holding colly's LimitRule slots, spaced by the host's expected
// time per request, so a request mostly finds its host free here. A wait
// longer than limit defers the request. It counts the request as fetched,
// and returns the lease it is sent under and when it passed.
//
// positioned says that the request holds its position already (an
// asynchronous collector's took it in OnRequest); otherwise the gate takes
// it first, as for a synchronous collector's requests, which run one at a
// time on their caller's goroutine and hold nothing another of them needs
// while they wait here.
//
// now is the time on the Guard's clock (zero: read it). Once ctx has
// ended nothing passes: the request would not be sent, and must neither
// take a lease nor count as sent.
func (g *Guard) gate(ctx context.Context, h *host, u *url.URL, limit time.Duration, positioned bool, now time.Time) (uint64, time.Time, error) {
	if err := ctx.Err(); err != nil {
		return 0, time.Time{}, g.ended(u, err)
	}
	return g.schedule(ctx, h, u, limit, positioned, true, now)
}

// passed tells the test seam that a request passed h's gate in the slot at.
func (g *Guard) passed(h *host, at time.Time) {
	if g.onPass != nil {
		g.onPass(h.name, at)
	}
}

// waitLimit returns how long an admission on ctx may wait: MaxWait, or
// less if ctx's deadline comes sooner.
func (g *Guard) waitLimit(ctx context.Context) time.Duration {
	return untilDeadline(ctx, g.maxWait())
}

// untilDeadline returns limit, or less if ctx's deadline comes sooner.
func untilDeadline(ctx context.Context, limit time.Duration) time.Duration {
	if dl, ok := ctx.Deadline(); ok {
		limit = min(limit, time.Until(dl))
	}
	return max(limit, 0)
}

// clock returns the current time of the Guard's clock.
func (g *Guard) clock() time.Time {
	if g.now != nil {
		return g.now()
	}
	return time.Now()
}

// pause sleeps for d, until ctx ends or until woken is closed, whichever
// comes first; woken may be nil. It returns ctx's error if ctx ended.
func (g *Guard) pause(ctx context.Context, d time.Duration, woken <-chan struct{}) error {
	if g.sleep != nil {
		if woken != nil {
			wctx, cancel := context.WithCancel(ctx)
			defer cancel()
			go func() {
				select {
				case <-woken:
					cancel()
				case <-wctx.Done():
				}
			}()
			if err := g.sleep(wctx, d); err != nil && ctx.Err() != nil {
				return err
			}
			return nil
		}
		return g.sleep(ctx, d)
	}
	return realPause(ctx, d, woken)
}

// realPause is pause on the real clock.
func realPause(ctx context.Context, d time.Duration, woken <-chan struct{}) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-woken:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
