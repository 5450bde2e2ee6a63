package robotsmw

import (
	"context"
	"net/http"
	"reflect"
	"time"

	"github.com/gocolly/colly/v2"
)

// net/http calls CheckRedirect with the context of the first request of the
// chain, which does not carry the deadline of http.Client.Timeout. The
// Guard therefore records when each request passes its gate, right before
// colly calls the client, and bounds the waits of its redirect hops by the
// client's timeout measured from then.
//
// The first request of a chain is found by its header map: colly's Request
// points at the Header of the http.Request it hands to the client, and that
// request is via[0] in the redirect handler.

// A sendStart is when a request passed its gate, and the key of its header
// map.
type sendStart struct {
	hdr uintptr
	at  time.Time
}

// headerKey returns the identity of the map h.
func headerKey(h http.Header) uintptr {
	if h == nil {
		return 0
	}
	return reflect.ValueOf(h).Pointer()
}

// markSent records that r passes its gate now.
func (g *Guard) markSent(r *colly.Request, now time.Time) {
	if r.Headers == nil {
		return
	}
	k := headerKey(*r.Headers)
	if k == 0 {
		return
	}
	g.sendMu.Lock()
	if g.sends == nil {
		g.sends = make(map[*colly.Request]sendStart)
		g.sendAt = make(map[uintptr]time.Time)
	}
	if old, ok := g.sends[r]; ok {
		delete(g.sendAt, old.hdr)
	}
	g.sends[r] = sendStart{hdr: k, at: now}
	g.sendAt[k] = now
	g.sendMu.Unlock()
}

// unmarkSent drops r's record once its response or error has arrived.
func (g *Guard) unmarkSent(r *colly.Request) {
	g.sendMu.Lock()
	if old, ok := g.sends[r]; ok {
		delete(g.sends, r)
		delete(g.sendAt, old.hdr)
	}
	g.sendMu.Unlock()
}

// sentAt returns when the request whose header map is h passed its gate.
func (g *Guard) sentAt(h http.Header) (time.Time, bool) {
	g.sendMu.Lock()
	defer g.sendMu.Unlock()
	at, ok := g.sendAt[headerKey(h)]
	return at, ok
}

// hopContext returns ctx bounded by the deadline of the client call that
// began with first: the collector's request timeout after first passed
// its gate. The deadline is on the Guard's clock. cancel must be called.
func (g *Guard) hopContext(ctx context.Context, c *colly.Collector, first *http.Request) (context.Context, context.CancelFunc) {
	timeout := clientTimeout(c)
	start, ok := g.sentAt(first.Header)
	if timeout <= 0 || !ok {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, timeout-g.clock().Sub(start))
}

// clientTimeout returns the Timeout of the http.Client c uses
// (Collector.SetRequestTimeout; colly's default is 10 s), or 0 if the
// client cannot be read (see collyClient).
func clientTimeout(c *colly.Collector) time.Duration {
	if hc := collyClient(c); hc != nil {
		return hc.Timeout
	}
	return 0
}
