package robotsmw

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync/atomic"
	"time"

	"github.com/gocolly/colly/v2"
)

// A synchronous collector (Async false) runs every callback on the
// goroutine inside Visit (or Request, Post, queue.Run), and its user's
// callbacks may share state without a lock, as colly's examples do. So for
// such a collector the Guard never sends a request from a goroutine of its
// own: what an asynchronous collector does later, from the Guard's
// deferral queue (outcome.go), a synchronous one does in place, on the
// caller's goroutine, and Visit returns the request's final outcome:
//
//   - its waits for robots.txt, the host's pause, its position and its
//     gate are not bounded by MaxWait (limitFor): a synchronous collector
//     has no other request to free its thread for, and a deferral that
//     comes all the same (a robots.txt store that cannot be read, a
//     shared Pacer's horizon) is waited out (untilAdmitted). Its
//     position is taken at its gate, with its lease, rather than in
//     OnRequest: waiting there holds nothing another of its requests
//     needs, and a request that a later OnRequest callback aborts
//     takes no position;
//   - a redirect hop waits in place too, and gets the client's timeout
//     anew once it passes its gate;
//   - a failed attempt (429, 5xx, a network error, a body cut short) is
//     retried inside the transport (retryInPlace): the attempt is
//     counted (Stats.Retried) and logged ("request retried"), then the
//     request waits for its host and is sent again, up to MaxRetries
//     times. The transport runs inside colly's client, which holds the
//     collector's LimitRule slot, and an OnError callback that visited or
//     retried from there would wait for that slot for ever: so the
//     attempts reach OnError, each with its *DeferredError, in order, once
//     the client returned (tellAttempts, from the Guard's OnResponse or
//     OnError callback), before the final outcome; Visit returns that. A
//     request whose body cannot be read again (no GetBody) is not sent
//     again: its outcome is final at once. To see a body cut short before
//     colly does, the transport reads the body of a synchronous
//     collector's response (up to MaxBodySize) before handing it on, so an
//     OnResponseHeaders callback that aborts saves no download: bound it
//     with MaxBodySize;
//   - every attempt sent again counts against colly's MaxRequests, as a
//     Request.Retry would: once it is reached the request ends with an
//     error wrapping ErrGaveUp and colly.ErrMaxRequests;
//   - when the client has a Timeout of its own (SetRequestTimeout after
//     Attach), net/http bounds the whole call, retries included: a retry
//     whose host asked for a pause beyond it is not sent, and the
//     request ends with an error wrapping ErrGaveUp that names the
//     pause's end.
//
// The Guard's deferral queue is not used for synchronous collectors.

// inPlace reports whether the requests of c wait and are retried in place.
func inPlace(c *colly.Collector) bool { return c != nil && !c.Async }

// limitFor returns how long a request of c may wait inside a colly
// callback: MaxWait for an asynchronous collector, no bound for a
// synchronous one.
func (g *Guard) limitFor(c *colly.Collector) time.Duration {
	if inPlace(c) {
		return maxDuration
	}
	return g.maxWait()
}

// untilAdmitted calls try until it returns anything but a *DeferredError,
// waiting out each deferral on ctx, and returns that. reserved says that
// the last deferral kept the request's position. A wait ctx cuts short
// ends the request for u.
func (g *Guard) untilAdmitted(ctx context.Context, u *url.URL, try func(reserved bool) error) error {
	reserved := false
	for {
		err := try(reserved)
		var de *DeferredError
		if !errors.As(err, &de) {
			return err
		}
		reserved = de.reserved
		if err := g.pause(ctx, max(de.Until.Sub(g.clock()), minDeferral), nil); err != nil {
			return g.ended(u, err)
		}
	}
}

// retryInPlace takes the outcome of an attempt of req, sent for visit v of
// a synchronous collector (resp, or err), and sends the request again in
// place until it is fetched or its outcome is final (see the top of this
// file).
func (t *guardTransport) retryInPlace(req *http.Request, v *visit, resp *http.Response, err error) (*http.Response, error) {
	g := t.g
	for {
		if err == nil {
			if resp.Body != io.ReadCloser(&v.body) {
				return resp, nil // a redirect: the client goes on to its next hop
			}
			if resp, err = t.buffered(resp, v); err == nil {
				return resp, nil
			}
		}
		var de *DeferredError
		if !errors.As(err, &de) {
			v.outcome = err
			return nil, err // final
		}
		if req.Body != nil && req.Body != http.NoBody && req.GetBody == nil {
			// Its body cannot be read again (colly's Request.Retry
			// refuses it alike): final at once, never reported as to be
			// retried.
			err = gaveUp(req.Method, v.orig, "could not be sent again", fmt.Errorf("%w (after %w)", colly.ErrRetryBodyUnseekable, de.Err))
			v.outcome = err
			return nil, err
		}
		var lease uint64
		if lease, err = g.again(req, v, de); err != nil {
			v.outcome = err
			return nil, err
		}
		next := req.WithContext(req.Context())
		if req.Body != nil && req.Body != http.NoBody {
			if next.Body, err = req.GetBody(); err != nil {
				g.release(g.host(req.URL), lease, 0, false, true, time.Time{}, false)
				err = gaveUp(req.Method, req.URL, "could not be sent again", err)
				v.outcome = err
				return nil, err
			}
		}
		v.outcome = nil
		resp, err = t.send(next, v, lease)
	}
}

// again logs failed attempt de of req (visit v), waits until req may be
// sent again, and returns its lease, keeping the attempt in v for OnError;
// or it returns the request's final outcome: colly's MaxRequests reached,
// a pause that ends past the client's own deadline, the crawl's end, a
// verdict of robots.txt.
//
// An attempt whose next one is not sent is never told to OnError as a
// *DeferredError, which promises that the request is sent again: the
// final outcome is all OnError gets (and Stats counts no retry).
func (g *Guard) again(req *http.Request, v *visit, de *DeferredError) (uint64, error) {
	c := v.c
	ctx := req.Context()
	var n *atomic.Uint32
	if c.MaxRequests > 0 {
		// Every attempt sent again is a request to colly, as a
		// Request.Retry would be.
		n = collyRequestCount(c)
		if n == nil || n.Load() >= c.MaxRequests {
			return 0, gaveUp(req.Method, v.orig, "could not be sent again", fmt.Errorf("%w (after %w)", colly.ErrMaxRequests, de.Err))
		}
	}
	if dl, ok := ctx.Deadline(); ok && !v.crawlDeadline(dl) && !de.Until.Before(dl.Add(-earlyTimeout)) {
		// net/http's Timeout bounds the whole call, retries included
		// (SetRequestTimeout after Attach): a retry that could not be
		// sent before it runs out is not waited for.
		return 0, gaveUp(req.Method, v.orig, "", fmt.Errorf("the client's timeout ends at %s, before the host's pause (until %s): %w",
			dl.UTC().Format(time.RFC3339Nano), de.Until.UTC().Format(time.RFC3339Nano), de.Err))
	}
	if n != nil {
		n.Add(1)
	}
	if r := v.request(); r != nil {
		g.logDeferred(r, de)
	}
	ctx = withCrawl(ctx, c)
	var lease uint64
	start := g.clock()
	err := g.untilAdmitted(ctx, req.URL, func(reserved bool) error {
		var err error
		lease, err = g.admit(ctx, g.cacheFor(c, nil), req.URL, g.agent(c), maxDuration, reserved || de.reserved, true)
		return err
	})
	if err != nil {
		if n != nil {
			n.Add(^uint32(0)) // not sent: not a request to colly
		}
		return 0, err
	}
	now := g.clock()
	v.sent = now.UnixNano()
	g.waits.observe(max(now.Sub(start), 0)) // each attempt sent counts its wait (WaitStats)
	// The retry goes: the failed attempt is one OnError is told of, once
	// colly's client returned (tellAttempts; see the top of this file).
	v.reports = append(v.reports, de)
	return lease, nil
}

// tellAttempts hands the failed attempts of visit v's request r that were
// retried in place to the collector's OnError callbacks, each with its
// *DeferredError, in order: from the Guard's OnResponse or OnError
// callback, which colly calls after its client returned, before the
// user's callbacks see the final outcome. The Guard's own OnError
// callback passes them by.
func (g *Guard) tellAttempts(c *colly.Collector, r *colly.Request, v *visit) {
	reports := v.reports
	v.reports = nil
	if r.URL != v.orig {
		// Redirected since: the attempts were of the request as it was
		// sent (the final URL is the outcome's).
		cp := *r
		cp.URL = v.orig
		r = &cp
	}
	resp := &colly.Response{Request: r, Ctx: r.Ctx}
	for _, de := range reports {
		err := &reportedError{err: de}
		for _, f := range collyErrorCallbacks(c) {
			f(resp, err)
		}
	}
}

// buffered reads the body of resp, the response to an attempt of visit v,
// up to the collector's MaxBodySize, so that a body cut short is a failed
// attempt the transport retries in place: it returns that attempt's
// outcome, a *DeferredError. Otherwise it returns resp with the bytes read
// as its body, followed by the read's error if the read ended in a final
// one: colly meets it reading the body, as it would have without the
// read ahead (the crawl's end, say, which colly reports as it is).
func (t *guardTransport) buffered(resp *http.Response, v *visit) (*http.Response, error) {
	var r io.Reader = resp.Body
	if n := v.c.MaxBodySize; n > 0 {
		r = io.LimitReader(r, int64(n))
	}
	body, err := io.ReadAll(r)
	var de *DeferredError
	if errors.As(err, &de) {
		resp.Body.Close()
		return nil, err
	}
	var rest io.Reader = bytes.NewReader(body)
	if err != nil {
		rest = io.MultiReader(rest, failingReader{err})
	}
	resp.Body = &readBody{Reader: rest, body: resp.Body}
	return resp, nil
}

// A readBody is a response's body read ahead: Close closes the body it
// was read from.
type readBody struct {
	io.Reader
	body io.Closer
}

func (b *readBody) Close() error { return b.body.Close() }

// A failingReader fails every read with err.
type failingReader struct{ err error }

func (f failingReader) Read([]byte) (int, error) { return 0, f.err }
