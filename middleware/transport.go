package robotsmw

import (
	"context"
	"io"
	"net/http"
	"time"
)

// A pacedTransport sends the Guard's own robots.txt requests. Each passes
// its host's gate first: it waits while the host is paused and keeps the
// host's spacing, so robots.txt counts against the same per-host rate as
// every other request (politeness.md §5.2 F). It does not queue at the
// host's limiter behind the pages, which wait for this very robots.txt:
// it takes the gate's next slot instead.
//
// The wait is local, so it is not bounded by the fetch's deadline (the
// Cache's Timeout), which would record robots.txt as unreachable though
// nothing was sent: the deadline's budget starts when the request is sent.
// The wait still ends, with the host's pause and spacing, or when the
// fetch's context is cancelled or the crawl it belongs to ends (see
// crawlcontext.go): a new origin's robots.txt does not wait out a long
// pause of its host after the crawl was cancelled.
type pacedTransport struct {
	g    *Guard
	next http.RoundTripper
}

// RoundTrip implements http.RoundTripper.
func (t *pacedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	dl, hasDeadline := ctx.Deadline()
	budget := time.Until(dl)
	live, stop := liveContext(ctx)
	if err := t.g.gate(live, t.g.host(req.URL), false); err != nil {
		stop()
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, err
	}
	cancel := stop
	sendCtx := live
	if hasDeadline {
		var cancelSend context.CancelFunc
		sendCtx, cancelSend = context.WithTimeout(live, budget)
		cancel = func() { cancelSend(); stop() }
	}
	resp, err := t.next.RoundTrip(req.WithContext(sendCtx))
	if err != nil {
		cancel()
		return nil, err
	}
	resp.Body = &cancelBody{ReadCloser: resp.Body, cancel: cancel}
	return resp, nil
}

// A cancelBody cancels the context of its request when it is closed.
type cancelBody struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (b *cancelBody) Close() error {
	err := b.ReadCloser.Close()
	b.cancel()
	return err
}
