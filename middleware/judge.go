package robotsmw

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/robotsmw/robotsmw/pace"
	"github.com/robotsmw/robotsmw/policy"
)

// Judging an attempt's outcome: what a response's status, or a network
// error, means for its host (a pause and a rate cut after 429, 503 and
// other failures, recovery after healthy responses; backoff.go and
// host.go keep the arithmetic) and for the request (sent again, or given
// up). The outcome step (outcome.go) acts on the verdict.

// judge classifies resp, a response from h, and records it: 429 and 5xx
// strike the host, healthy responses let it recover.
func (g *Guard) judge(h *host, resp *http.Response) class {
	cls, _ := g.judgeFor(h, resp, false)
	return cls
}

// judgeFor is judge; with quiet, a pause the response starts is not
// logged but returned, for the log line of the attempt's outcome.
func (g *Guard) judgeFor(h *host, resp *http.Response, quiet bool) (class, pauseEvent) {
	cls := classify(resp.StatusCode)
	var ev pauseEvent
	switch cls {
	case hard, soft:
		var u *url.URL
		if resp.Request != nil {
			u = resp.Request.URL
		}
		ev = g.strikeFor(h, g.clock(), cls, u, resp.Header, resp.StatusCode, nil, quiet)
	case healthy:
		if iv, floor, ok := h.healthy(g.clock); ok {
			g.recoverSchedule(context.Background(), h, iv, floor)
		}
	}
	return cls, ev
}

// strike records a failure of h at now; hdr is the response's header (nil
// for a network error), whose Retry-After sets the pause.
func (g *Guard) strike(h *host, now time.Time, c class, hdr http.Header) {
	g.strikeFor(h, now, c, nil, hdr, 0, nil, false)
}

// A pauseEvent is a pause of a host that a failure started or lengthened,
// as the log tells it: one line per event, so a failed attempt that is
// retried carries it in its "request retried" line (logDeferred) rather
// than in a "host paused" line of its own.
type pauseEvent struct {
	longer bool // the failure started or lengthened the pause
	h      *host
	u      *url.URL // the request that failed; nil if unknown
	status int      // its status; 0 for a network error err
	err    error
	pause  time.Duration
	until  time.Time
	ra     time.Duration // the Retry-After sent, if raOK
	raOK   bool
}

// strikeFor is strike with the failure's cause for the log: the request's
// URL u (nil if unknown) and the response's status, or 0 and the network
// error err. The pause is logged ("host paused") unless quiet; it is
// returned either way.
func (g *Guard) strikeFor(h *host, now time.Time, c class, u *url.URL, hdr http.Header, status int, err error, quiet bool) pauseEvent {
	ra, ok := policy.RetryAfter(hdr, now)
	pause, longer := h.strike(now, c, ra, ok, g.backoffBase(), g.maxBackoff(), h.base, g.random())
	ev := pauseEvent{longer: longer, h: h, u: u, status: status, err: err, pause: pause, until: now.Add(pause), ra: ra, raOK: ok}
	if longer {
		g.totals[cBackoffs].Add(1)
		if !quiet {
			g.logPaused(ev)
		}
	}
	g.strikeSchedule(context.Background(), h, c, pause)
	return ev
}

// failed counts a failed attempt of the colly request of visit v and
// returns its outcome, which it keeps in v for OnError: a *DeferredError
// until the host's pause ends, or, after MaxRetries retries, an error
// wrapping ErrGaveUp and cause. A host that asked for a pause beyond 24
// hours is not waited for: the request gives up at once, with an error
// naming the pause's end.
//
// req is the request of the attempt (a redirect hop's, perhaps). ev is the
// pause the failure started (see strikeFor): a retried attempt's log line
// carries it; a final one's pause is logged here, as "host paused",
// before its outcome.
func (g *Guard) failed(v *visit, h *host, req *http.Request, cause error, ev pauseEvent) error {
	err := g.attemptOutcome(v, h, req.Method, cause)
	var de *DeferredError
	if errors.As(err, &de) {
		de.pause = ev
	} else if ev.longer {
		g.logPaused(ev)
	}
	v.outcome = err
	return err
}

// attemptOutcome decides what Guard.failed returns; sent is the method of
// the attempt that failed.
func (g *Guard) attemptOutcome(v *visit, h *host, sent string, cause error) error {
	// The method of what a retry sends: an asynchronous collector's sends
	// the request from its start (colly's Request.Retry), a synchronous
	// one's sends the failed attempt again in place, a redirect hop's
	// (a GET after a POST's 303, say).
	method := v.method
	if inPlace(v.c) {
		method = sent
	}
	now := g.clock().UnixNano()
	h.mu.Lock()
	until := h.pauseUntil
	excluded := h.t != nil && h.t.excluded
	// The earliest the host's rules let the next attempt start: after the
	// pause, an interval after the last start (the interval a failure
	// cut), and the gap after this response's end (Crawl-delay, or more
	// for a slow host).
	next := max(until, h.lastSend+int64(h.interval))
	gap, latency := h.crawlDelay(), h.latency
	h.mu.Unlock()
	if !g.FixedPace {
		gap = pace.EndGap(gap, latency, latencyFactor)
	}
	next = max(next, now+int64(gap))
	if excluded {
		return gaveUp(method, v.orig, "", fmt.Errorf("%w: %w", cause, pausedError(h.name, time.Unix(0, until))))
	}
	if !idempotent(method) && !declined(cause) {
		// The server may have acted on it: sending it again could
		// repeat that (an order placed twice).
		return gaveUp(method, v.orig, "not sent again: "+method+" is not idempotent (RFC 9110 §9.2.2)", cause)
	}
	v.failures++
	n := v.failures
	if n > g.maxRetries() {
		return gaveUp(method, v.orig, fmt.Sprintf("after %d retries", n-1), cause)
	}
	v.retryOn = h // counted as retried once the retry is sent
	return &DeferredError{url: v.orig, Until: time.Unix(0, next), Attempt: n, Err: cause,
		parse: parseSnapshot{set: true, value: v.parseErrors}}
}

// idempotent reports whether a request of method may be sent again after
// an attempt that failed in a way that leaves open whether the server
// acted on it (RFC 9110 §9.2.2).
func idempotent(method string) bool {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace, http.MethodPut, http.MethodDelete:
		return true
	}
	return false
}

// declined reports whether cause says that the server did not act on the
// request: 429 (RFC 6585 §4) or 503 (RFC 9110 §15.6.4), which any method
// may be sent again after.
func declined(cause error) bool {
	var se *StatusError
	return errors.As(cause, &se) && (se.StatusCode == http.StatusTooManyRequests || se.StatusCode == http.StatusServiceUnavailable)
}
