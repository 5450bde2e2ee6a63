package robotsmw

import (
	"context"
	"time"

	"github.com/gocolly/colly/v2"
)

// net/http calls CheckRedirect with the context of the first request of the
// chain, which does not carry the deadline of http.Client.Timeout. The
// Guard therefore records when each colly request passes its gate, right
// before colly calls the client, in its visit (visit.sent), which its
// redirect hops share, and bounds the waits of the hops by the client's
// timeout measured from then.

// hopContext returns ctx bounded by the deadline of the client call of
// visit v (nil if unknown): the collector's request timeout after the
// call's first request passed its gate. The deadline is on the Guard's
// clock. cancel must be called.
func (g *Guard) hopContext(ctx context.Context, c *colly.Collector, v *visit) (context.Context, context.CancelFunc) {
	timeout := clientTimeout(c)
	if timeout <= 0 || v == nil || v.sent == 0 {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, timeout-time.Duration(g.clock().UnixNano()-v.sent))
}

// clientTimeout returns the request timeout of the http.Client c uses
// (Collector.SetRequestTimeout; colly's default is 10 s): its Timeout, or
// the one the Guard's transport took over from it (timeouts.go); 0 if the
// client cannot be read (see collyClient).
func clientTimeout(c *colly.Collector) time.Duration {
	hc := collyClient(c)
	if hc == nil {
		return 0
	}
	if hc.Timeout > 0 {
		return hc.Timeout
	}
	if t := guarded(c); t != nil {
		return t.timeout
	}
	return 0
}
