package robotsmw

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/gocolly/colly/v2"
)

// The Guard's colly callbacks, in the order colly calls them for one
// request: OnRequest (admit: robots.txt, and for an asynchronous
// collector the request's position in the host's schedule), its gate in
// OnRequestHeaders (the host's in-flight place), the redirect handler for
// each hop, OnResponseHeaders, and OnError. Each finds the request's
// visit by its key; the transport (transport.go) sends what they
// admitted and fails the rest with their verdict, so that colly reports
// it. docs/design.md draws the way.

// onRequest runs before colly sends r: robots.txt and, for an asynchronous
// collector, r's position in the host's schedule, waiting at most MaxWait
// (a synchronous collector's request takes its position at its gate,
// unless no gate of this Guard will see it). It never aborts r: its
// verdict goes to the transport in r's visit, which fails r with it, so
// that colly reports the outcome to OnError and to a synchronous Visit.
func (g *Guard) onRequest(c *colly.Collector, r *colly.Request) {
	if r.IsAbort() {
		return
	}
	t := guarded(c)
	if t == nil || t.g != g {
		g.unguarded.Store(true)
	}
	if t == nil {
		// The Guard's transport was replaced: the client bounds its
		// requests again.
		g.timeouts.giveBack(c)
	}
	if !c.IgnoreRobotsTxt && t == nil {
		// COLLY_IGNORE_ROBOTSTXT is applied after the options of
		// NewCollector and may have turned colly's own check back on, and
		// the transport that answers it was replaced (collyrobots.go).
		// While that transport is installed the flag is left alone: colly
		// reads it in Visit, which may run concurrently with this callback.
		c.IgnoreRobotsTxt = true
	}
	v := g.visitOf(c, r)
	now := g.clock()
	ctx := withCrawl(collectorContext(c), c)
	reserved := v.reserved
	v.reserved = false
	h := g.host(r.URL)
	var at time.Time
	var err error
	switch {
	case inPlace(c) && t != nil && t.g == g:
		// A synchronous collector's request takes its position in its
		// host's schedule at its gate, with its lease (onRequestHeaders):
		// here only robots.txt.
		at, err = g.checkInPlace(ctx, g.cacheFor(c, nil), h, r.URL, g.agent(c), now)
	case inPlace(c):
		// No gate of this Guard will see r (its transport was replaced):
		// its position is all the pacing it gets, waited for here, and
		// any deferral waited out in place (inplace.go).
		err = g.untilAdmitted(ctx, r.URL, func(positioned bool) error {
			_, at, err = g.admitTo(ctx, g.cacheFor(c, nil), h, r.URL, g.agent(c), maxDuration, positioned || reserved, false, now)
			now = time.Time{}
			return err
		})
	default:
		_, at, err = g.admitTo(ctx, g.cacheFor(c, nil), h, r.URL, g.agent(c), g.maxWait(), reserved, false, now)
	}
	if err == nil && g.CleanParams {
		err = g.canonical.check(g.cacheFor(c, nil), r.Method, r.URL)
	}
	if t == nil || t.g != g {
		// No transport of this Guard will see r: decide here. An admitted
		// request keeps its visit for the leases of its redirect hops,
		// which the Guard's redirect handler still admits, until its
		// response's headers (untaken) or its error arrive.
		if err != nil {
			// colly reports an aborted request nowhere: the Guard hands
			// its outcome to OnError itself. A deferral is final here:
			// nothing would send the request again.
			var de *DeferredError
			if errors.As(err, &de) {
				err = unsent(ErrGaveUp, r.URL, fmt.Sprintf("it would wait until %s, longer than MaxWait, and with the Guard's transport replaced (WithTransport, SetProxyFunc or SetClient after Attach) a request is not sent again later",
					de.Until.UTC().Format(time.RFC3339)), de.Err)
			}
			r.Abort()
			g.deliver(c, r, v, err, true)
		}
		return
	}
	if v.parse.set {
		// A retry is handled as its first attempt was: a user who turns
		// ParseHTTPErrorResponse on meanwhile asked for later requests.
		v.parseErrors = v.parse.value
		keepParse(err, v.parse)
	}
	v.err, v.h, v.waited = err, h, max(at.Sub(now), 0)
	if err != nil && c.CacheDir != "" {
		// colly's cache must not answer a request the Guard fails.
		r.Headers.Set("Cache-Control", "no-cache")
	}
}

// visitOf returns the visit of r: the one its retry or redirect left under
// its key, or a new one, indexed. A retry the Guard sends (reissuing)
// carries its visit on; a live visit of another request under the same
// key (a user's c.Request with one http.Header for two requests) gives r a
// copy of its header map, and so a key of its own.
func (g *Guard) visitOf(c *colly.Collector, r *colly.Request) *visit {
	nv := &visit{c: c, method: r.Method, orig: r.URL, key: keyOf(*r.Headers)}
	nv.r.Store(r)
	nv.resetAttempt(c)
	v := g.visits.putNew(nv) // most often nv: one look-up for a new request
	switch {
	case v == nv:
	case v.reissuing.Load() && v.c == c:
		v.reissuing.Store(false)
		v.attempt(r)
		v.resetAttempt(c)
	case v.request() != r:
		*r.Headers = r.Headers.Clone()
		nv.key = keyOf(*r.Headers)
		g.visits.put(nv)
		v = nv
	default:
		// OnRequest again for the same request (a user's callback made
		// colly run it twice): start over.
		v.resetAttempt(c)
	}
	return v
}

// resetAttempt clears what v's last attempt left, for its next one on c.
func (v *visit) resetAttempt(c *colly.Collector) {
	v.err, v.gated, v.taken, v.lease, v.hop, v.sent, v.waited, v.outcome = nil, false, false, 0, false, 0, 0, nil
	v.redirectedBy = nil
	v.crawl, v.parseErrors = collectorContext(c), c.ParseHTTPErrorResponse
}

// onRequestHeaders runs right before colly's HTTP client is called (after
// any LimitRule slot was taken): the host's gate, waiting at most MaxWait.
func (g *Guard) onRequestHeaders(c *colly.Collector, r *colly.Request) {
	if r.IsAbort() {
		return
	}
	if t := guarded(c); t == nil || t.g != g {
		return // no transport of this Guard will send r: nothing to gate
	}
	v := g.visits.get(keyOf(*r.Headers))
	if v == nil {
		v = g.visitOf(c, r)
	}
	if v.err != nil {
		return // the transport fails r with it
	}
	v.pass(r)
	now := g.clock()
	h := g.hostFor(v, r.URL)
	v.h = h
	// An asynchronous collector's request took its position in
	// OnRequest; a synchronous one's takes it here (onRequest).
	sync := inPlace(c)
	lease, at, err := g.gate(collectorContext(c), h, r.URL, g.limitFor(c), !sync, now)
	if sync {
		var de *DeferredError
		if errors.As(err, &de) {
			err = g.untilAdmitted(collectorContext(c), r.URL, func(reserved bool) error {
				lease, at, err = g.gate(collectorContext(c), h, r.URL, maxDuration, reserved, time.Time{})
				return err
			})
		}
	}
	v.lease = lease
	if err != nil {
		keepParse(err, v.parse)
		v.err = err
		return
	}
	v.gated, v.sent = true, at.UnixNano()
	g.waits.observe(v.waited + max(at.Sub(now), 0))
}

// keepParse gives err, the deferral of a retry that has not been sent, the
// retry's ParseHTTPErrorResponse (its first attempt's), so that it is sent
// with it when it comes back, however often it is deferred meanwhile.
func keepParse(err error, parse parseSnapshot) {
	var de *DeferredError
	if parse.set && errors.As(err, &de) && !de.parse.set {
		de.parse = parse
	}
}

// redirectHandler returns the handler that checks each redirect hop before
// it is sent, inside colly's client. net/http passes the context of the
// first request, without the client's deadline, so the handler bounds its
// waits by the collector's request timeout, counted from when the first
// request passed its gate, and by MaxWait. A hop that cannot go in time is
// deferred: the request is sent again at the hop once it may go.
func (g *Guard) redirectHandler(c *colly.Collector) func(*http.Request, []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		// The request's visit, under its previous hop's key (its own, for
		// the first hop). The previous hop's lease is given back if no
		// transport of this Guard took it (one that replaced it sent the
		// hop).
		v := g.visits.get(keyOf(via[len(via)-1].Header))
		if v != nil && v.lease != 0 {
			g.release(g.host(via[len(via)-1].URL), v.lease, 0, false, true, time.Time{}, false)
			v.lease = 0
		}
		if v != nil && !v.colly() {
			g.visits.drop(v) // a hop of a request the Guard does not know
			v = nil
		}
		var by *host // the host of the redirect, if the Guard's transport sent it
		if v != nil {
			by, v.redirectedBy = v.redirectedBy, nil // the hop is taken up here
		}
		if len(via) >= 10 {
			// colly's default: the last response is the request's, and
			// its page (counted, as any page, when the Guard's transport
			// sent it).
			if v != nil {
				if by != nil {
					g.count(by, cPages)
				}
				g.fetched(v)
			}
			return http.ErrUseLastResponse
		}
		if req.URL.Host != via[len(via)-1].URL.Host {
			req.Header.Del("Authorization") // colly's default
		}
		var lease uint64
		var err error
		if inPlace(c) {
			return g.hopInPlace(c, v, req)
		}
		ctx, cancel := g.hopContext(req.Context(), c, v)
		defer cancel()
		ctx = withCrawl(ctx, c)
		lease, err = g.admit(ctx, g.cacheFor(c, nil), req.URL, g.agent(c), g.waitLimit(ctx), false, true)
		if err != nil && req.Context().Err() == nil && ctx.Err() != nil {
			// The client's deadline passed while the hop waited.
			err = &DeferredError{url: req.URL, Until: g.clock(), Err: errHostBusy}
		}
		var de *DeferredError
		switch {
		case v == nil:
			// Nothing would send the hop again (a clone the Guard was
			// not attached to): final.
			err = g.notDeferred(req, err)
		case errors.As(err, &de):
			de.url = req.URL
			de.hop = &hopResume{url: req.URL, method: req.Method, header: req.Header.Clone(), body: req.GetBody != nil}
		}
		return g.hopAdmitted(v, req, lease, err)
	}
}

// hopInPlace admits redirect hop req of visit v (nil if the
// Guard does not know the request) of synchronous collector c: the hop
// waits in place (inplace.go), and gets the client's timeout anew from its
// gate (the Guard's transport bounds each hop by it, see
// guardTransport.bound). When net/http bounds the whole call instead (a
// Timeout set on the client after Attach), a hop that cannot pass its
// gate before that runs out ends the request, with an error wrapping
// ErrGaveUp that names the client's timeout, rather than wait for nothing.
func (g *Guard) hopInPlace(c *colly.Collector, v *visit, req *http.Request) error {
	var lease uint64
	var err error
	ctx := req.Context()
	if hc := collyClient(c); hc != nil && hc.Timeout > 0 && v != nil && v.sent != 0 {
		hctx, cancel := g.hopContext(ctx, c, v)
		defer cancel()
		hctx = withCrawl(hctx, c)
		// Bounded by the client's deadline alone: a synchronous
		// collector's waits are not bounded by MaxWait.
		lease, err = g.admit(hctx, g.cacheFor(c, nil), req.URL, g.agent(c), untilDeadline(hctx, maxDuration), false, true)
		var de *DeferredError
		switch {
		case errors.As(err, &de):
			// Not wrapped: the request is not deferred, it ends here.
			err = gaveUp(v.method, v.orig, "", fmt.Errorf("the redirect to %s could not be sent within the client's timeout (%v): %v",
				req.URL.Redacted(), hc.Timeout, de.Err))
		case err != nil && ctx.Err() == nil && hctx.Err() != nil && collectorContext(c).Err() == nil:
			err = gaveUp(v.method, v.orig, "", fmt.Errorf("the redirect to %s could not be sent within the client's timeout (%v): %w",
				req.URL.Redacted(), hc.Timeout, err))
		}
		return g.hopAdmitted(v, req, lease, err)
	}
	ctx = withCrawl(ctx, c)
	err = g.untilAdmitted(ctx, req.URL, func(reserved bool) error {
		var aerr error
		lease, aerr = g.admit(ctx, g.cacheFor(c, nil), req.URL, g.agent(c), maxDuration, reserved, true)
		return aerr
	})
	if err == nil && v != nil {
		v.sent = g.clock().UnixNano()
	}
	return g.hopAdmitted(v, req, lease, err)
}

// hopAdmitted records the admission of redirect hop req of visit v (nil if
// the Guard does not know the request) with lease, unless err refused it,
// and returns err for the client.
func (g *Guard) hopAdmitted(v *visit, req *http.Request, lease uint64, err error) error {
	switch {
	case err != nil && v == nil:
		// Final (notDeferred), and no colly callback of the Guard reports
		// it.
		g.account(req.URL, err)
	case err != nil:
	case v != nil:
		v.gated, v.lease, v.hop = true, lease, true
		v.h = nil
		g.visits.putHop(v, keyOf(req.Header))
	default:
		// A hop of a request the Guard does not know: its lease goes with
		// the hop's own key alone.
		g.visits.put(&visit{key: keyOf(req.Header), gated: true, lease: lease, hop: true})
	}
	return err
}

// onResponseHeaders sees every response (final URL after redirects) before
// its body, also one that colly's CacheDir replays without the transport,
// or one that a transport which replaced the Guard's sent (the last hop of
// a redirect chain, which the redirect handler admitted): the visit's
// lease, which no transport of the Guard took, is given back. Any other
// response came through the transport, which took the lease.
func (g *Guard) onResponseHeaders(c *colly.Collector, resp *colly.Response) {
	if c.CacheDir != "" {
		g.untaken(resp.Request)
	} else if g.unguarded.Load() {
		if t := guarded(c); t == nil || t.g != g {
			g.untaken(resp.Request)
		}
	}
}

// untaken gives back the lease of r's visit that no transport of the
// Guard took (a later OnRequestHeaders callback aborted the request, or
// another transport sent it), and drops the visit: nothing of the Guard
// sees r again.
func (g *Guard) untaken(r *colly.Request) {
	v := g.visits.get(keyOf(*r.Headers))
	if v == nil || v.taken {
		return // the transport has it: its body or OnError ends it
	}
	if v.lease != 0 {
		g.release(g.hostFor(v, r.URL), v.lease, 0, false, true, time.Time{}, false)
		v.lease = 0
	}
	g.visits.drop(v)
}

// onResponse hands a synchronous collector's failed attempts that were
// retried in place to OnError, before the user's OnResponse callbacks see
// the response that followed them, and drops the request's visit, which
// fetched left for it.
func (g *Guard) onResponse(c *colly.Collector, resp *colly.Response) {
	if !inPlace(c) || resp.Request == nil {
		return
	}
	v := g.visits.get(keyOf(*resp.Request.Headers))
	if v == nil || len(v.reports) == 0 {
		return
	}
	g.tellAttempts(c, resp.Request, v)
	g.visits.drop(v)
}

// onError sees every failed attempt before the user's OnError callbacks
// (Attach registers it first), and hands it to the outcome step.
func (g *Guard) onError(c *colly.Collector, resp *colly.Response, err error) {
	r := resp.Request
	if r == nil || isReported(err) {
		return
	}
	v := g.visits.get(keyOf(*r.Headers))
	if v != nil && len(v.reports) > 0 {
		g.tellAttempts(c, r, v) // before the final outcome's callbacks
	}
	if v != nil {
		if v.lease != 0 {
			// Passed its gate, never reached the transport.
			g.release(g.hostFor(v, r.URL), v.lease, 0, false, true, time.Time{}, false)
			v.lease = 0
		}
		if v.outcome != nil {
			// What the transport returned, even if net/http replaced it
			// with its timeout text on the way (the client's Timeout
			// fired while the transport under the Guard was returning).
			err = v.outcome
		}
	}
	g.outcome(c, r, v, err)
}

// notSent reports whether err, returned by Request.Retry of a synchronous
// collector, means that the retry was refused before it was sent, rather
// than being the outcome of the retried request. An error of colly's HTTP
// client (a *url.Error) is an outcome, which colly reported to OnError
// already, even when it matches one of colly's refusals: the Guard's
// *DisallowedError matches colly.ErrRobotsTxtBlocked, and a redirect hop
// can be refused as visited already or by a URL filter.
func notSent(err error) bool {
	var ue *url.Error
	if errors.As(err, &ue) {
		return false
	}
	for _, e := range []error{
		colly.ErrRetryBodyUnseekable, colly.ErrMaxDepth, colly.ErrMaxRequests,
		colly.ErrForbiddenDomain, colly.ErrForbiddenURL, colly.ErrNoURLFiltersMatch,
		colly.ErrRobotsTxtBlocked, colly.ErrMissingURL,
	} {
		if errors.Is(err, e) {
			return true
		}
	}
	var av *colly.AlreadyVisitedError
	return errors.As(err, &av)
}
