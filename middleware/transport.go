package robotsmw

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/gocolly/colly/v2"

	"github.com/robotsmw/robotsmw/netguard"
	"github.com/robotsmw/robotsmw/policy"
)

// A guardTransport is the transport Attach installs under colly's HTTP
// client, around the transport the client had. For every request it:
//   - answers colly's own robots.txt check with an empty robots.txt
//     (collyrobots.go);
//   - fails a request the Guard's callbacks did not admit with their
//     verdict (left in its visit: request.go), so that colly reports it to
//     OnError and Visit;
//   - admits a request that comes without a visit itself (robots.txt,
//     pause, schedule and gate, bounded by MaxWait and the request's
//     deadline), so a clone the Guard was not attached to fails closed;
//   - classifies the response: 429 and 503 pause and slow the host, 500,
//     502, 504 and network errors too, softer (backoff.go); healthy
//     responses let a cut host recover;
//   - for colly requests, turns a failed attempt (those statuses, a
//     network error, a body cut short) into a *DeferredError, or an error
//     wrapping ErrGaveUp after MaxRetries, and drops the request's retry
//     count when its body was read to the end.
//
// It is safe for concurrent use; it is not changed after it is installed.
type guardTransport struct {
	g    *Guard
	next http.RoundTripper // nil means http.DefaultTransport
	// timeout is the client's Timeout when Attach installed the transport,
	// which the transport enforces instead of net/http (see bound); 0 if
	// none. timedOut is the cause of a request it ended, naming it.
	timeout  time.Duration
	timedOut error
	// deadlines ends colly requests at their timeout.
	deadlines deadlineList
}

// newGuardTransport returns g's transport over next, which enforces
// timeout (see bound).
func newGuardTransport(g *Guard, next http.RoundTripper, timeout time.Duration) *guardTransport {
	return &guardTransport{g: g, next: next, timeout: timeout,
		timedOut: fmt.Errorf("robotsmw: not done within %v (the collector's request timeout): %w", timeout, context.DeadlineExceeded)}
}

func (t *guardTransport) base() http.RoundTripper {
	if t.next != nil {
		return t.next
	}
	return http.DefaultTransport
}

// RoundTrip implements http.RoundTripper.
func (t *guardTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if isCollyCheck(req) {
		closeBody(req)
		return emptyRobots(req), nil
	}
	g := t.g
	v := g.visits.get(keyOf(req.Header))
	if v != nil && !v.colly() {
		// A redirect hop of a request the Guard does not know, admitted
		// by its redirect handler: its lease is all it carries.
		g.visits.drop(v)
	}
	var lease uint64
	switch {
	case v == nil:
		// Not admitted by the Guard's callbacks: admit it here.
		ctx := req.Context()
		agent := g.Agent
		if agent == "" {
			agent = req.Header.Get("User-Agent")
		}
		l, err := g.admit(ctx, g.cacheFor(nil, t.next), req.URL, policy.ProductToken(agent), g.waitLimit(ctx), false, true)
		if err != nil {
			closeBody(req)
			err = g.notDeferred(req, err)
			g.account(req.URL, err) // no colly callback of the Guard reports it
			return nil, err
		}
		lease = l
	case v.err != nil:
		closeBody(req)
		return nil, v.err
	case !v.gated:
		ctx := req.Context()
		// A synchronous collector's request took no position in OnRequest.
		l, _, err := t.gateAgain(ctx, v, g.hostFor(v, req.URL), req.URL, !(v.colly() && inPlace(v.c)))
		if err != nil {
			closeBody(req)
			return nil, err
		}
		lease = l
	default:
		lease = v.lease
		if lease != 0 && t.stale(v) {
			// The request passed its gate so long ago that its lease may
			// have run out in the shared Pacer (its process stalled
			// between the gate and here) and another member may have
			// started a request to the host meanwhile: the lease is given
			// back unsent, and the request asks for its host again rather
			// than spend its place late.
			h := g.hostFor(v, req.URL)
			g.newFlight(h, lease, time.Time{}).unsent()
			v.lease = 0
			ctx := req.Context()
			l, at, err := t.gateAgain(ctx, v, h, req.URL, true) // it keeps its position
			if err != nil {
				closeBody(req)
				return nil, err
			}
			lease, v.sent = l, at.UnixNano()
		}
	}
	if v != nil {
		v.lease, v.taken = 0, true // the flight has the lease now
	}
	resp, err := t.send(req, v, lease)
	if v.colly() && inPlace(v.c) {
		return t.retryInPlace(req, v, resp, err)
	}
	return resp, err
}

// notDeferred returns err, the admission's error of req, a request the
// Guard's callbacks did not see (a clone the Guard was not attached to, or
// a user's own call of colly's client): nothing will send such a request
// again, so a deferral is final for it, an error wrapping ErrGaveUp that
// names the wait and says why, and is not counted as deferred.
func (g *Guard) notDeferred(req *http.Request, err error) error {
	var de *DeferredError
	if !errors.As(err, &de) {
		return err
	}
	return unsent(ErrGaveUp, req.URL, fmt.Sprintf("it would wait until %s, longer than MaxWait, and a request the Guard was not attached to (Attach the clone) is not sent again",
		de.Until.UTC().Format(time.RFC3339)), de.Err)
}

// gateAgain passes the gate of h for u, the request of visit v that
// reached the transport without its lease (positioned: holding its
// position in h's schedule), waiting at most MaxWait and ctx's deadline;
// a synchronous collector's request waits out any deferral in place
// (inplace.go), until ctx's deadline at most.
func (t *guardTransport) gateAgain(ctx context.Context, v *visit, h *host, u *url.URL, positioned bool) (uint64, time.Time, error) {
	g := t.g
	lease, at, err := g.gate(ctx, h, u, g.waitLimit(ctx), positioned, time.Time{})
	var de *DeferredError
	if v.colly() && inPlace(v.c) && errors.As(err, &de) {
		err = g.untilAdmitted(ctx, u, func(reserved bool) error {
			lease, at, err = g.gate(ctx, h, u, g.waitLimit(ctx), reserved, time.Time{})
			return err
		})
	}
	return lease, at, err
}

// stale reports whether the request of visit v, which holds a lease of a shared
// Pacer, passed its gate more than half that lease's TTL ago. The Guard's
// own schedule (pace.Local) lives and stalls with it: its leases are never stale.
func (t *guardTransport) stale(v *visit) bool {
	g := t.g
	if g.Pacer == nil || v.sent == 0 || v.hop {
		return false
	}
	ttl := g.pacer.leaseTTL.Load()
	return ttl > 0 && g.clock().UnixNano()-v.sent > ttl/2
}

// send sends an admitted request and classifies the outcome. v is the
// request's visit, or nil for a request the transport admitted itself;
// only colly requests of the Guard's callbacks have their failures turned
// into retries.
func (t *guardTransport) send(req *http.Request, v *visit, lease uint64) (*http.Response, error) {
	g := t.g
	ours := v.colly()
	req, cancel := t.bound(req, v, ours)
	h := g.hostFor(v, req.URL)
	var start time.Time
	if ours && !v.hop && v.sent != 0 {
		start = time.Unix(0, v.sent) // it passed its gate right before the client sent it
	}
	var f *flight
	var wb *watchedBody
	if ours {
		// The body's watcher, in the visit, carries the flight.
		wb = &v.body
		*wb = watchedBody{g: g, v: v, h: h}
		f = &wb.f
		g.startFlight(f, h, lease, start)
		f.page = true
		g.flying.Add(1)
	} else {
		f = g.newFlight(h, lease, start)
	}
	resp, err := t.base().RoundTrip(req)
	err = timedOut(req, err)
	if ours {
		g.flying.Add(-1)
		if v.retryOn != nil && (err == nil || !forbidden(err)) {
			g.count(v.retryOn, cRetried) // the retry was sent
			v.retryOn = nil
		}
	}
	if err != nil {
		cancel.end()
		if forbidden(err) {
			// Nothing was sent: not the host's failure, and final.
			f.unsent()
			if ours {
				return nil, gaveUp(req.Method, req.URL, "", err)
			}
			return nil, err
		}
		f.end(true) // an error or a timeout: loaded
		if v.crawlOver() {
			// Final, and not the host's fault: colly's own outcome.
			return nil, err
		}
		if ended(req, err) {
			if ours {
				return nil, gaveUp(req.Method, req.URL, "", err)
			}
			return nil, err
		}
		ev := g.strikeFor(h, g.clock(), soft, req.URL, nil, 0, err, ours)
		if ours {
			return nil, g.failed(v, h, req, err, ev)
		}
		return nil, err
	}
	retries := ours && !v.parseErrors // a failure is the attempt's outcome
	cls, ev := g.judgeFor(h, resp, retries)
	failed := cls == hard || cls == soft
	if retries && failed {
		resp.Body.Close()
		f.end(true)
		cancel.end()
		return nil, g.failed(v, h, req, &StatusError{StatusCode: resp.StatusCode, Header: resp.Header}, ev)
	}
	if isRedirect(resp) {
		// A redirect is loaded with its headers: the client checks the
		// next hop, which may need the host's place, before it closes
		// this body. It is no page.
		f.page = false
		f.end(failed)
		if ours {
			// The redirect handler carries the visit on to the next hop;
			// the request is not complete yet. The next hop passes its own
			// gate.
			v.gated, v.redirectedBy = false, h
		}
		resp.Body = &cancelBody{ReadCloser: resp.Body, cancel: cancel}
		return resp, nil
	}
	if !ours {
		// A request without a visit (a clone the Guard was not attached
		// to) is bounded by the client's Timeout the transport took over
		// (see bound): its body is read under that deadline, which ends
		// when the body is closed, not before.
		resp.Body = &cancelBody{ReadCloser: &flightBody{ReadCloser: resp.Body, f: f, failed: failed}, cancel: cancel}
		return resp, nil
	}
	wb.ReadCloser, wb.req, wb.cancel = resp.Body, req, cancel
	resp.Body = wb
	return resp, nil
}

// bound returns req bounded by the request timeout of colly's client, and
// what ends its context (once the response's body is closed, or at once
// on failure).
//
// Attach took the client's Timeout over (see Guard.install): net/http
// turns any error after its Timeout fired into a string (timeoutError),
// which would hide the Guard's outcome (a *DeferredError, say) from
// colly's callbacks, and it costs a context and a timer per request. So
// the transport bounds each request, its redirect hops and the reading of
// its body by that Timeout itself, counted from when the request passed
// its gate, with one timer for all of them (deadlines.go), and a request
// that runs out fails with the Guard's outcome of a timeout. Should the
// client have a Timeout again (SetRequestTimeout after Attach), net/http
// bounds the request, and the transport ends a colly request a little
// earlier (earlyTimeout), so that the Guard's own outcome is what arrives.
func (t *guardTransport) bound(req *http.Request, v *visit, ours bool) (*http.Request, ender) {
	dl, ok := req.Context().Deadline()
	switch {
	case ours && ok && !v.crawlDeadline(dl):
		margin := min(time.Until(dl)/10, earlyTimeout)
		ctx, cancel := context.WithDeadline(req.Context(), dl.Add(-margin))
		req = req.WithContext(ctx)
		// net/http's client does not know this transport: with a
		// Timeout, it gives the request a Cancel channel that only its
		// Timeout closes (colly sets none of its own), and
		// http.Transport watches such a channel with a goroutine per
		// request. The deadline above ends the request first, so the
		// copy goes on without it.
		//lint:ignore SA1019 clears the channel net/http set, which would cost a goroutine per request
		req.Cancel = nil
		return req, cancelFunc(cancel)
	case t.timeout > 0:
		left := t.timeout
		if ours && v.hop && v.sent != 0 {
			// A redirect hop: the timeout bounds the whole chain.
			left -= time.Duration(t.g.clock().UnixNano() - v.sent)
		}
		// Its cause is what the transport returns once it runs out: an
		// error naming the timeout, which matches context.DeadlineExceeded.
		if ok || !ours || req.Context().Done() != nil {
			// A request without a visit, or one under a context that
			// can end: a timer of its own.
			ctx, cancel := context.WithTimeoutCause(req.Context(), left, t.timedOut)
			return req.WithContext(ctx), cancelFunc(cancel)
		}
		// The first attempt's context is its visit's own.
		c := &v.dl
		if v.dlUsed {
			c = new(deadlineCtx)
		}
		v.dlUsed = true
		t.deadlines.start(c, req.Context(), time.Now(), left, t.timedOut)
		return req.WithContext(c), c
	}
	return req, cancelFunc(nop)
}

// nop is a CancelFunc with nothing to cancel.
func nop() {}

// An ender ends a request's context: a *deadlineCtx, or a cancelFunc.
// Unlike a method value (c.end), it costs no allocation.
type ender interface{ end() }

// A cancelFunc is a context.CancelFunc as an ender.
type cancelFunc context.CancelFunc

func (f cancelFunc) end() { f() }

// earlyTimeout is the most by which the Guard ends a colly request before
// the client's Timeout, when net/http enforces one (a tenth of the time
// left, at most this).
const earlyTimeout = 100 * time.Millisecond

// isRedirect reports whether the client may follow resp.
func isRedirect(resp *http.Response) bool {
	switch resp.StatusCode {
	case 301, 302, 303, 307, 308:
		return resp.Header.Get("Location") != ""
	}
	return false
}

// ended reports whether err means that the request's context was
// cancelled (the crawl ended), rather than that the host failed. A
// deadline (colly's request timeout) is the host's failure.
func ended(req *http.Request, err error) bool {
	return errors.Is(err, context.Canceled) && req.Context().Err() != nil
}

// forbidden reports whether err is a dial that a netguard.Dialer refused:
// nothing reached any server, the host did not fail, and trying again
// later cannot succeed.
func forbidden(err error) bool {
	return errors.Is(err, netguard.ErrForbidden)
}

// A watchedBody is the body of a colly request's response. A read error (a
// body cut short, a read timeout) is a failed attempt: it strikes the host
// softly and the read returns the attempt's outcome (see Guard.failed),
// which colly reports to OnError. A body closed without a read error was
// read to its end, or as far as colly wanted (MaxBodySize): the request's
// retry count is dropped.
type watchedBody struct {
	io.ReadCloser
	g      *Guard
	v      *visit
	h      *host
	req    *http.Request
	cancel ender  // ends the request's context once closed
	f      flight // ends when the body is read to its end, fails or is closed
	failed bool   // only read and set by the goroutine reading the body
}

func (b *watchedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF {
		b.f.end(false)
		return n, err
	}
	if err != nil && !b.failed {
		err = timedOut(b.req, err)
		b.failed = true
		b.f.end(true)
		if b.v.crawlOver() {
			// Final, and not the host's fault: colly's own outcome.
			return n, err
		}
		if ended(b.req, err) {
			return n, gaveUp(b.req.Method, b.req.URL, "", err)
		}
		ev := b.g.strikeFor(b.h, b.g.clock(), soft, b.req.URL, nil, 0, err, true)
		return n, b.g.failed(b.v, b.h, b.req, err, ev)
	}
	return n, err
}

func (b *watchedBody) Close() error {
	err := b.ReadCloser.Close()
	b.f.end(b.failed) // counts the page, unless it failed or ended before
	b.cancel.end()
	if !b.failed {
		b.g.fetched(b.v)
	}
	return err
}

// closeBody closes a request's body, as RoundTrip must even when it fails.
func closeBody(req *http.Request) {
	if req.Body != nil {
		req.Body.Close()
	}
}

// install puts a guardTransport under c's HTTP client, around the
// transport the client has (a user's earlier WithTransport or SetProxyFunc
// is kept). A collector and its clones share one client, so a client that
// has a guardTransport already is left alone: one transport serves them
// all, and attaching to a clone while the collector crawls writes nothing.
// If the client cannot be read, nothing is installed; the callbacks then
// abort what they do not admit (see Guard.onRequest).
func (g *Guard) install(c *colly.Collector) {
	hc := collyClient(c)
	if hc == nil {
		return
	}
	if guarded(c) != nil {
		return
	}
	c.WithTransport(newGuardTransport(g, hc.Transport, g.timeouts.take(c, hc)))
}

// guarded returns the guardTransport under c's client, or nil if there is
// none (a later WithTransport, SetProxyFunc or SetClient replaced it).
func guarded(c *colly.Collector) *guardTransport {
	hc := collyClient(c)
	if hc == nil {
		return nil
	}
	t, _ := hc.Transport.(*guardTransport)
	return t
}

// A pacedTransport sends the Guard's own robots.txt requests, through the
// transport of the collector (its proxy and TLS settings). Each request,
// redirect hops included, passes its host's gate first: it waits while the
// host is paused and keeps the host's spacing, so robots.txt counts against
// the same per-host rate as every other request (docs/politeness.md). The
// pages of its origin wait for this very robots.txt before they take
// places in the host's schedule, so it is never behind them; pages of the
// host's other origins that hold places already may go first. A
// robots.txt that answers 429, 5xx or fails strikes the host like a page
// would (docs/politeness.md).
//
// The wait is local, so it is not bounded by the fetch's deadline (the
// Cache's Timeout), which would record robots.txt as unreachable though
// nothing was sent: the hops of one fetch share the timeout, counted while
// they are sent and read, not while they wait at a gate (robotschain.go).
// The wait still ends, with the host's pause and spacing, or when the
// fetch's context is cancelled or the crawl it belongs to ends (see
// crawlcontext.go): a new origin's robots.txt does not wait out a long
// pause of its host after the crawl was cancelled. A fetch that waits
// long gives its fetch slot up meanwhile (policy.Cache.MaxFetches).
type pacedTransport struct {
	g       *Guard
	next    http.RoundTripper
	timeout time.Duration // the budget of a fetch's hops once they pass their gates
	chains  chainTable    // the budget spent by each fetch in progress
}

// RoundTrip implements http.RoundTripper.
//
// A hop that passes its gate at once, early in its fetch, and belongs to
// no crawl that can end, is sent on its request's context as it is: the
// fetch's deadline (the Cache's Timeout from the fetch's start) then comes
// at most hopSlack before the end of the hop's budget, and nothing but
// the fetch's context can cancel it. Other hops are sent on a live context
// of their own (see liveContext), bounded by the budget.
func (t *pacedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	// One allocation carries the hop's live context, flight, budget and
	// send context, and becomes the response's body.
	b := &pacedBody{}
	b.live.parent = ctx
	h := t.g.host(req.URL)
	lease, at, err := t.g.schedule(&b.live, h, req.URL, maxDuration, false, true, time.Time{})
	if err != nil {
		b.live.release()
		closeBody(req)
		return nil, err
	}
	f := &b.f
	t.g.startFlight(f, h, lease, at)
	timeout := t.timeout
	if timeout <= 0 {
		timeout = robotsTimeout
	}
	if err := t.chains.start(&b.hop, ctx, timeout); err != nil {
		b.live.release()
		closeBody(req)
		return nil, err
	}
	send := req
	if !sendsAsIs(ctx, time.Now(), b.hop.left) {
		var sendCtx context.Context
		sendCtx, b.cancelSend = context.WithTimeout(b.live.get(), b.hop.left)
		send = req.WithContext(sendCtx)
	}
	resp, err := t.next.RoundTrip(send)
	now := t.g.clock()
	if err != nil && forbidden(err) {
		f.unsent()
		b.finish()
		return nil, err
	}
	if err != nil {
		f.end(true)
		if !errors.Is(err, context.Canceled) {
			// A cancelled fetch is abandoned, not the host's failure (see
			// crawlEnded and policy.Cache.Client).
			t.g.strikeFor(h, now, soft, req.URL, nil, 0, err, false)
		}
		b.finish()
		return nil, err
	}
	cls := t.g.judge(h, resp)
	if isRedirect(resp) {
		f.end(false) // loaded: the next hop may need the host's place
		t.chains.redirected(&b.hop, timeout)
	}
	b.flightBody = flightBody{ReadCloser: resp.Body, f: f, failed: cls == hard || cls == soft}
	resp.Body = b
	return resp, nil
}

// hopSlack is the most of its budget a robots.txt hop gives up to be sent
// on its fetch's context as it is (see pacedTransport.RoundTrip): the
// time from the fetch's start to a hop that did not wait at its gate.
const hopSlack = 10 * time.Millisecond

// sendsAsIs reports whether a hop whose budget is left at now (on the
// real clock) may be sent on ctx, its fetch's context, as it is: ctx's
// deadline comes at most hopSlack before the budget's end, and not after
// it, and ctx carries no crawl that can end (see withCrawl).
func sendsAsIs(ctx context.Context, now time.Time, left time.Duration) bool {
	dl, ok := ctx.Deadline()
	if !ok {
		return false
	}
	end := now.Add(left)
	if dl.After(end) || end.Sub(dl) > hopSlack {
		return false
	}
	_, crawl := ctx.Value(crawlKey{}).(context.Context)
	return !crawl
}

// A pacedBody is the body of a response to pacedTransport: a flightBody
// of its own flight, f, and once closed it ends the hop (its time counts
// against its fetch's budget) and cancels the hop's contexts (as a
// cancelBody does).
type pacedBody struct {
	flightBody
	f          flight
	live       lazyLive
	hop        chainHop
	cancelSend context.CancelFunc // ends the hop's send context; nil if it was sent as is
}

func (b *pacedBody) Close() error {
	err := b.flightBody.Close()
	b.finish()
	return err
}

// finish ends the hop and cancels its contexts; it may be called more
// than once.
func (b *pacedBody) finish() {
	if b.cancelSend != nil {
		b.cancelSend()
	}
	b.hop.end()
	b.live.release()
}

// A cancelBody cancels the context of its request when it is closed.
type cancelBody struct {
	io.ReadCloser
	cancel ender
}

func (b *cancelBody) Close() error {
	err := b.ReadCloser.Close()
	b.cancel.end()
	return err
}
