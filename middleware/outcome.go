package robotsmw

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"net/url"
	"sync"
	"time"

	"github.com/gocolly/colly/v2"
	"github.com/robotsmw/robotsmw/policy"
)

// The last step of a request's way: what its attempt's outcome means.
// outcome sorts it — a deferral goes to the Guard's queue and comes back
// as the next attempt; anything else is final — and deliver, the one place
// a final outcome the Guard decided goes out, counts it, logs it, hands it
// to ErrorHandler (and to OnError, when colly will not), and drops the
// request's visit.

// outcome acts on err, the outcome of an attempt of r (visit v; nil if the
// Guard has none), as the Guard's OnError callback sees it: before the
// user's, which get the same err from colly.
func (g *Guard) outcome(c *colly.Collector, r *colly.Request, v *visit, err error) {
	var de *DeferredError
	crawl := collectorContext(c).Err()
	switch {
	case errors.As(err, &de) && inPlace(c):
		// A synchronous collector's requests wait and are retried in
		// place (inplace.go), and are never sent from the Guard's
		// goroutines: a deferral that reaches OnError all the same ends
		// the request, rather than run its callbacks elsewhere.
		g.deliver(c, r, v, fmt.Errorf("%w: %s %s: deferred, and a synchronous collector's request is not sent again later: %v",
			ErrGaveUp, r.Method, r.URL.Redacted(), de), false)
	case errors.As(err, &de):
		if hop := de.hop; hop != nil && crawl == nil {
			// Resume at the hop: the requests before it were answered.
			if hop.method != r.Method || !hop.body {
				r.Body = nil
			}
			h := hop.header
			r.URL, r.Method, r.Headers = hop.url, hop.method, &h
			if v != nil {
				// The hop's header map is the retry's: the visit goes
				// under its key.
				g.visits.rekey(v, keyOf(h))
			}
		}
		if de.Attempt == 0 {
			// Counted as it is delivered, as a final outcome is
			// (account): one that nothing reports is counted nowhere.
			u := de.url
			if u == nil {
				u = r.URL
			}
			g.count(g.host(u), cDeferred)
		}
		if crawl == nil {
			g.logDeferred(r, de)
		}
		// Once the crawl is over nothing is sent again: the user's
		// OnError callbacks, which run after this one, get de; the final
		// outcome follows from the Guard's queue (reissue), before
		// colly's Wait returns.
		g.deferRequest(c, r, v, de)
	case guardFinal(err):
		g.deliver(c, r, v, err, false)
	case crawl != nil && v != nil && v.taken:
		// The crawl ended while the request was in flight: sent, and cut
		// short.
		g.deliver(c, r, v, gaveUp(r.Method, r.URL, "", err), false)
	case crawl != nil:
		// The crawl is over: colly failed the request before the Guard's
		// transport saw it.
		g.deliver(c, r, v, g.ended(r.URL, err), false)
	default:
		// Not the Guard's outcome: colly's own (a status ≥ 203, a URL
		// filter on a redirect, a callback's abort). Final either way.
		if v != nil {
			if v.redirectedBy != nil {
				// colly refused to follow the redirect that was the
				// request's last response: that response is its page,
				// as one its redirect limit stops at is.
				g.count(v.redirectedBy, cPages)
			}
			g.visits.drop(v)
		}
		g.seeds.done(r)
	}
}

// The final errors the Guard decides are built here, and nowhere else:
// each wraps exactly one outcome sentinel (errors.go) and names the
// request; deliver hands them out.

// unsent returns the final error kind of a request to u that is not sent:
// why, if not empty, and cause.
func unsent(kind error, u *url.URL, why string, cause error) error {
	if why == "" {
		return fmt.Errorf("%w: %s not sent: %w", kind, u.Redacted(), cause)
	}
	return fmt.Errorf("%w: %s not sent: %s: %w", kind, u.Redacted(), why, cause)
}

// gaveUp returns the ErrGaveUp of a request (method, u) that was sent and
// failed, or cannot be sent again: why, if not empty, and cause.
func gaveUp(method string, u *url.URL, why string, cause error) error {
	if why == "" {
		return fmt.Errorf("%w: %s %s: %w", ErrGaveUp, method, u.Redacted(), cause)
	}
	return fmt.Errorf("%w: %s %s %s: %w", ErrGaveUp, method, u.Redacted(), why, cause)
}

// disallowed returns the outcome of a request, or hop, to u that robots.txt
// disallows for agent, with the verdict d.
func disallowed(u *url.URL, agent string, d policy.Decision) *DisallowedError {
	return &DisallowedError{URL: u, Agent: agent, Decision: d}
}

// crawlDelayTooLong returns the outcome of a request to u, whose origin's
// Crawl-delay d is above policy.MaxCrawlDelay.
func crawlDelayTooLong(u *url.URL, origin string, d time.Duration) error {
	return &crawlDelayError{url: u, origin: origin, delay: d}
}

// A crawlDelayError is the outcome of a request whose origin asks for a
// Crawl-delay above policy.MaxCrawlDelay; it wraps ErrCrawlDelayTooLong.
type crawlDelayError struct {
	url    *url.URL
	origin string
	delay  time.Duration
}

func (e *crawlDelayError) Error() string {
	return fmt.Sprintf("%v: %s asks for %v, more than %v", ErrCrawlDelayTooLong, e.origin, e.delay, policy.MaxCrawlDelay)
}

func (e *crawlDelayError) Unwrap() error { return ErrCrawlDelayTooLong }

// duplicateError returns the outcome of request u, not sent because its
// canonical form canon was requested before (see ErrDuplicate).
func duplicateError(u, canon *url.URL) error {
	if u.String() == canon.String() {
		// The canonical form itself, after a variant of it was sent.
		return fmt.Errorf("%w: %s not sent: a URL differing only in robots.txt's clean-param parameters was sent already", ErrDuplicate, u.Redacted())
	}
	return fmt.Errorf("%w: %s not sent: same page as %s under robots.txt's clean-param", ErrDuplicate, u.Redacted(), canon.Redacted())
}

// guardFinal reports whether err is a final outcome the Guard decided.
func guardFinal(err error) bool {
	return errors.Is(err, ErrDisallowed) || errors.Is(err, ErrGaveUp) ||
		errors.Is(err, ErrRobotsUnreachable) || errors.Is(err, ErrCrawlDelayTooLong) ||
		errors.Is(err, ErrDuplicate)
}

// deliver is where every final outcome the Guard decided for a colly
// request goes out, once: it drops the request's visit v (nil if the
// Guard kept none), ends Seed's hold on the request, counts the outcome
// in Stats and logs it (account), and calls ErrorHandler. colly hands err
// to the collector's OnError callbacks and to a synchronous Visit itself
// when the attempt that ended is colly's; when it is not (own: a deferred
// request colly refused to send again, or that the crawl's end left
// unsent), deliver calls them, with err wrapped so that the Guard's own
// OnError callback passes it by. A link FollowLinks did not follow is
// delivered too, as the request that was not made (v nil, not own: no
// OnError).
func (g *Guard) deliver(c *colly.Collector, r *colly.Request, v *visit, err error, own bool) {
	if v != nil && !g.visits.finish(v) {
		return // delivered already
	}
	if v != nil {
		// A retry that was never sent (colly refused it, the crawl
		// ended, or its outcome turned final first) is not counted.
		v.retryOn = nil
	}
	g.seeds.done(r)
	g.account(r.URL, err)
	if g.ErrorHandler != nil {
		g.ErrorHandler(r, err)
	}
	if own {
		final := &reportedError{err: err}
		resp := &colly.Response{Request: r, Ctx: r.Ctx}
		for _, f := range collyErrorCallbacks(c) {
			f(resp, final)
		}
	}
}

// account counts err, the final outcome of a request to u, in Stats and
// logs it: robots.txt's verdicts (ErrDisallowed, ErrCrawlDelayTooLong) as
// Blocked, under the host of the URL they refused (a redirect hop's,
// say), a link FollowLinks did not follow as NotFollowed under its page's
// host, and failures as GaveUp. deliver calls it for every colly request;
// a request no colly callback will report (one through Guard.Transport, or
// a clone's the Guard was not attached to) is accounted for where the
// transport returns its outcome.
func (g *Guard) account(u *url.URL, err error) {
	var de *DisallowedError
	var ce *crawlDelayError
	var nf *NotFollowedError
	var later *DeferredError
	switch {
	case errors.As(err, &later):
		// A deferral handed to a net/http caller of Guard.Transport (its
		// robots.txt store or shared Pacer cannot be reached now).
		g.count(g.host(u), cDeferred)
	case errors.As(err, &de):
		h := g.host(de.URL)
		g.count(h, cBlocked)
		g.logBlocked(h, de.URL, de.Agent, de.Decision)
	case errors.As(err, &ce):
		h := g.host(ce.url)
		g.count(h, cBlocked)
		g.logCrawlDelay(h, ce.url, ce.origin, ce.delay)
	case errors.As(err, &nf):
		g.count(g.host(nf.Page), cNotFollowed)
		g.logNotFollowed(nf.URL, nf.Page, nf.Reason)
	case errors.Is(err, ErrDuplicate):
		// Not sent, and no failure: the same page was.
	default:
		g.count(g.host(u), cGaveUp)
		g.logGaveUp(u, err)
	}
}

// fetched ends visit v of a request whose response was read to its end (or
// as far as colly wanted): its final outcome is the response itself,
// which colly delivers to OnResponse.
//
// A synchronous collector's visit with attempts to tell stays indexed for
// the Guard's OnResponse (onResponse), which drops it; should colly call
// no callback for the response after all (a charset it cannot decode:
// colly returns that error from Visit alone), the attempts are never told,
// and the index's sweep drops the visit once its request is collected.
func (g *Guard) fetched(v *visit) {
	if len(v.reports) > 0 {
		v.passed.Store(false) // held weakly from the next sweep on (visit.loosen)
		return
	}
	g.visits.drop(v)
}

// A reportedError is an outcome the Guard hands to a collector's OnError
// callbacks itself, rather than through colly: a final outcome colly will
// not report (deliver), or a synchronous collector's failed attempt that
// was sent again in place (tellAttempts). The Guard's own OnError callback
// passes it by.
type reportedError struct{ err error }

func (e *reportedError) Error() string { return e.err.Error() }
func (e *reportedError) Unwrap() error { return e.err }

// isReported reports whether err is a reportedError.
func isReported(err error) bool {
	var re *reportedError
	return errors.As(err, &re)
}

// Deferred requests wait in the Guard's own queue, not in a colly callback:
// a request that would have to wait longer than MaxWait, or whose attempt
// failed, leaves its colly thread at once (its attempt ends with a
// *DeferredError), and the Guard sends it again with Request.Retry when it
// is due; its visit goes with it, so the retry's OnRequest finds it by its
// key. One goroutine serves the queue while it holds anything and exits
// when it is empty. The queue holds requests of asynchronous collectors
// only: a synchronous collector's wait and are retried in place
// (inplace.go). Should one come all the same, its Retry, which runs the
// whole request, gets a goroutine of its own, at most maxReissuing at a
// time.
//
// colly's Wait must not return while a request waits here, so the queue
// holds the collector's WaitGroup (see collyWaitGroup) from the moment the
// request is deferred, inside the failed attempt's OnError, until its retry
// has been issued, which adds to the WaitGroup itself. When the collector's
// context ends, its waiting requests are sent at once, and fail with the
// context's error.

// minReissue is the shortest time, on the real clock, between the Guard's
// OnError callback for an attempt and the Guard's next attempt of the same
// request, so that the attempts of one request reach OnError in order
// while OnError callbacks return within it.
const minReissue = 50 * time.Millisecond

// maxReissuing bounds the retries of synchronous collectors that would run at
// once on the Guard's goroutines.
const maxReissuing = 16

// A laterItem is one deferred request.
type laterItem struct {
	due int64 // Unix nanoseconds on the Guard's clock
	// settled is when, in real time, the failed attempt's OnError
	// callbacks are taken to have returned (minReissue after the Guard's
	// callback). It is read on the real clock, not the Guard's: it orders
	// callbacks running on other goroutines, it does not pace a host.
	settled time.Time
	r       *colly.Request
	v       *visit // r's visit; nil if the Guard kept none
	c       *colly.Collector
	wg      interface{ Done() } // the collector's WaitGroup, held for r; may be nil
	// retry says an attempt of r failed: r yields to the requests waiting
	// for its host when it comes due (see mayGo). yieldEnd is when it stops
	// yielding, on the real clock (zero until its first look); calm says
	// its last look found none waiting.
	retry    bool
	reserved bool // r holds a position in its host's schedule
	calm     bool
	yieldEnd time.Time
	index    int
}

// A laterQueue holds deferred requests, earliest first.
type laterQueue struct {
	// mu guards every field below.
	mu      sync.Mutex
	items   laterHeap
	running bool                      // the serving goroutine runs
	wake    chan struct{}             // closed when an earlier item arrives
	watched map[*colly.Collector]bool // collectors whose context end is watched
	sem     chan struct{}             // slots for synchronous retries
	// yielding holds due retries that wait for the requests waiting for
	// their hosts (see mayGo); they are looked at every retryStep, on the
	// real clock, from nextLook.
	yielding []*laterItem
	nextLook time.Time
}

func (q *laterQueue) len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.items) + len(q.yielding)
}

// deferRequest queues r (visit v), deferred with de, on collector c. It
// runs in r's OnError, before colly's fetch of the failed attempt returns.
// The visit keeps what the next attempt needs: the position it holds, the
// failed attempt's ParseHTTPErrorResponse, and the redirect hop it
// resumes at. If c's crawl has ended, r is due at once, as the end's
// flush makes it: it gets its final outcome (see reissue).
func (g *Guard) deferRequest(c *colly.Collector, r *colly.Request, v *visit, de *DeferredError) {
	q := &g.later
	wg := collyWaitGroup(c)
	if wg != nil {
		wg.Add(1)
	}
	crawl := collectorContext(c)
	var due int64
	if crawl.Err() == nil {
		due = max(de.Until.UnixNano(), g.clock().Add(minReissue).UnixNano())
	}
	if v != nil {
		v.reserved = de.reserved
		if de.parse.set && !v.parse.set {
			v.parse = de.parse
		}
	}
	it := &laterItem{due: due, settled: time.Now().Add(minReissue), r: r, v: v, c: c, reserved: de.reserved, retry: de.Attempt > 0}
	if wg != nil {
		it.wg = wg
	}
	q.mu.Lock()
	heap.Push(&q.items, it)
	if q.items[0] == it && q.wake != nil {
		close(q.wake)
		q.wake = nil
	}
	start := !q.running
	q.running = true
	watch := false
	if crawl.Done() != nil && crawl.Err() == nil && !q.watched[c] {
		if q.watched == nil {
			q.watched = make(map[*colly.Collector]bool)
		}
		q.watched[c] = true
		watch = true
	}
	q.mu.Unlock()
	if watch {
		context.AfterFunc(crawl, func() { g.flush(c) })
	}
	if start {
		go g.serveLater()
	}
}

// flush makes every request of collector c due now: its context ended.
func (g *Guard) flush(c *colly.Collector) {
	q := &g.later
	q.mu.Lock()
	for _, it := range q.items {
		if it.c == c {
			it.due = 0
		}
	}
	q.unyield(0, func(it *laterItem) bool { return it.c == c })
	heap.Init(&q.items)
	delete(q.watched, c)
	if q.wake != nil {
		close(q.wake)
		q.wake = nil
	}
	q.mu.Unlock()
}

// serveLater sends deferred requests when they are due, until the queue is
// empty.
func (g *Guard) serveLater() {
	q := &g.later
	for {
		q.mu.Lock()
		now := g.clock().UnixNano()
		if len(q.yielding) > 0 && !time.Now().Before(q.nextLook) {
			q.look(g, now)
		}
		var it *laterItem
		if len(q.items) > 0 {
			it = q.items[0]
		}
		if it == nil || it.due > now {
			if it == nil && len(q.yielding) == 0 {
				q.running = false
				q.mu.Unlock()
				return
			}
			if q.wake == nil {
				q.wake = make(chan struct{})
			}
			wake := q.wake
			yielding, look := len(q.yielding) > 0, time.Until(q.nextLook)
			var d time.Duration // until the earliest item is due
			if it != nil {
				d = time.Duration(it.due - now)
			}
			q.mu.Unlock()
			switch {
			case !yielding:
				_ = g.pause(context.Background(), d, wake)
			case it == nil:
				_ = realPause(context.Background(), look, wake)
			default:
				// Retries wait for other requests, an event rather than a
				// time: look on the real clock, without moving a test clock.
				_ = realPause(context.Background(), min(look, d), wake)
			}
			continue
		}
		heap.Pop(&q.items)
		if it.retry && !it.reserved && it.due != 0 && !g.mayGo(it) {
			if len(q.yielding) == 0 {
				q.nextLook = time.Now().Add(retryStep)
			}
			q.yielding = append(q.yielding, it)
			q.mu.Unlock()
			continue
		}
		if q.sem == nil {
			q.sem = make(chan struct{}, maxReissuing)
		}
		sem := q.sem
		q.mu.Unlock()
		if d := time.Until(it.settled); d > 0 {
			// At most minReissue in all: items are settled in about the
			// order they were deferred. A flushed item was deferred long
			// ago, unless the crawl ended as it was deferred: its final
			// outcome must still follow the OnError of its attempt.
			time.Sleep(d)
		}
		if it.c.Async {
			g.reissue(it)
			continue
		}
		sem <- struct{}{}
		go func() {
			defer func() { <-sem }()
			g.reissue(it)
		}()
	}
}

// look moves the yielding retries that may go now back to the queue, due
// at now; q.mu must be held.
func (q *laterQueue) look(g *Guard, now int64) {
	q.unyield(now, g.mayGo)
	q.nextLook = time.Now().Add(retryStep)
}

// unyield moves the yielding retries for which back reports true to the
// queue, due at due; q.mu must be held.
func (q *laterQueue) unyield(due int64, back func(*laterItem) bool) {
	keep := q.yielding[:0]
	for _, it := range q.yielding {
		if back(it) {
			it.due = due
			heap.Push(&q.items, it)
			continue
		}
		keep = append(keep, it)
	}
	clear(q.yielding[len(keep):])
	q.yielding = keep
}

// retryStep is how often a retry that yields looks at its host again.
const retryStep = 50 * time.Millisecond

// mayGo reports whether the due retry it may be sent now. A retry goes
// after the requests that are waiting for its host inside colly's
// callbacks (a pause, a position or a lease) when it comes due, for at
// most MaxWait: they hold colly's threads and were given MaxWait to go,
// the retry holds nothing and has waited out its back-off already, and
// should it fail again, the longer pause it brings would push them past
// MaxWait into deferrals of their own. Scrapy does the same with
// RETRY_PRIORITY_ADJUST (-1: a retry goes after new requests). It is
// sent once two looks retryStep apart have found none waiting, so a
// request between its position and its gate is not passed by. The looks
// are on the real clock: the retry waits for other requests to move, not
// for a time. A retry holding a position (it.reserved) keeps it and does
// not yield. it is owned by the caller.
func (g *Guard) mayGo(it *laterItem) bool {
	h := g.hosts.lookup(hostKey(it.r.URL))
	now := time.Now()
	switch {
	case h == nil:
		return true // nothing kept of the host: nothing waits for it
	case it.yieldEnd.IsZero():
		it.yieldEnd = now.Add(g.maxWait())
	case !now.Before(it.yieldEnd):
		return true
	}
	if h.queued.Load() > 0 {
		it.calm = false
		return false
	}
	if it.calm {
		return true
	}
	it.calm = true
	return false
}

// reissue sends a deferred request again (at the redirect hop outcome set
// it to resume at, if any), and delivers its final outcome if colly refuses the retry or
// the crawl is over.
func (g *Guard) reissue(it *laterItem) {
	r, v := it.r, it.v
	if it.wg != nil {
		defer it.wg.Done()
	}
	if crawl := collectorContext(it.c).Err(); crawl != nil {
		// The crawl is over: nothing is sent again.
		g.deliver(it.c, r, v, g.ended(r.URL, crawl), true)
		return
	}
	if v != nil {
		v.reissuing.Store(true)
	}
	if err := r.Retry(); err != nil && (it.c.Async || notSent(err)) {
		if v != nil {
			v.reissuing.Store(false)
		}
		g.deliver(it.c, r, v, gaveUp(r.Method, r.URL, "could not be sent again", err), true)
	}
}

// laterHeap orders deferred requests by due time.
type laterHeap []*laterItem

func (h laterHeap) Len() int           { return len(h) }
func (h laterHeap) Less(i, j int) bool { return h[i].due < h[j].due }
func (h laterHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}
func (h *laterHeap) Push(x any) {
	it := x.(*laterItem)
	it.index = len(*h)
	*h = append(*h, it)
}
func (h *laterHeap) Pop() any {
	old := *h
	it := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return it
}

// A parseSnapshot is a collector's ParseHTTPErrorResponse when a request's
// attempt failed; set is false for a deferral without a failed attempt.
type parseSnapshot struct{ set, value bool }
