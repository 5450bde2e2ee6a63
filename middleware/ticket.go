package robotsmw

import (
	"context"
	"net/url"
	"sync"
	"weak"

	"github.com/gocolly/colly/v2"
)

// The Guard decides about a colly request in its OnRequest and
// OnRequestHeaders callbacks, but colly reports an outcome to OnError (and
// returns it from a synchronous Visit) only when its HTTP client fails. So
// the callbacks leave their verdict in a ticket, and the transport the Guard
// installs under colly's client (guardTransport) reads it when the request
// arrives: an admitted request is sent, any other fails with the verdict,
// which colly then reports like any transport error. A request that
// arrives without a ticket was not admitted by the Guard's callbacks (a
// clone the Guard was not attached to, a user's own use of the client):
// the transport admits it itself, so nothing bypasses robots.txt.
//
// Tickets are keyed by the request's *url.URL: colly's Request.URL is the
// URL of the http.Request it sends, and net/http's copies of a request keep
// it. Redirect hops get tickets from the redirect handler.

// A request that a later OnRequest callback of the user aborts never
// reaches the transport nor a callback that drops its ticket. Its ticket
// holds the request weakly, so the request itself is collected; sweeps,
// run whenever the box has doubled since the last one (amortized O(1) per
// ticket), drop tickets whose request is gone and tickets older than
// maxTicketAge issues. Should a live ticket be swept (a request that
// waited while a million others were admitted), the transport admits the
// request itself: nothing is let through unchecked.
const (
	maxTicketAge = 1 << 20
	sweepTickets = 1 << 12 // the smallest box that is swept
)

// A ticket is the Guard's verdict about one request, or redirect hop, on
// its way to the transport.
type ticket struct {
	r      weak.Pointer[colly.Request] // the colly request; zero for a hop of an unknown chain
	method string                      // r's method; "" for a hop of an unknown chain
	orig   *url.URL                    // r's URL when the Guard admitted it: its retry count's key
	err    error                       // nil: admitted; else the outcome the transport returns
	gated  bool                        // the request passed the host's gate
	lease  uint64                      // the request's lease of its host's in-flight place; 0 if none
	// parseErrors is the collector's ParseHTTPErrorResponse when the
	// ticket was issued; see crawlend.go.
	parseErrors bool
	// seq is when the ticket was issued, in tickets issued before it,
	// modulo 2³² (ages are differences; 32 bits keep a ticket small).
	seq uint32
	// admitted is when OnRequest began to admit the request, in Unix
	// nanoseconds on the Guard's clock, for the waits in Stats.
	admitted int64
	// crawl is the context of the collector's crawl (colly's Context)
	// when the ticket was issued; see crawlend.go.
	crawl context.Context
	// h is the state of the host the request was admitted to, if known;
	// see Guard.hostFor.
	h *host
	// sent is when the request passed its gate, in Unix nanoseconds on
	// the Guard's clock, for the deadline of its redirect hops
	// (hopdeadline.go); 0 if unknown.
	sent int64
	// hop says the ticket is a redirect hop's: its request's timeout is
	// counted from sent (see guardTransport.bound).
	hop bool
}

// newTicket returns the ticket of colly request r with verdict err.
func newTicket(r *colly.Request, err error) *ticket {
	return &ticket{r: weak.Make(r), method: r.Method, orig: r.URL, err: err}
}

// colly reports whether t belongs to a colly request of the Guard's
// callbacks, whose failures the transport turns into retries.
func (t *ticket) colly() bool { return t != nil && t.method != "" }

// A ticketBox holds the tickets of requests in flight, and the outcomes
// the transport gave colly requests until colly reports them.
type ticketBox struct {
	// mu guards every field.
	mu        sync.Mutex
	m         map[*url.URL]*ticket
	issued    uint64
	nextSweep int // len(m) at which put sweeps
	// outcomes holds what the transport returned for an attempt of a colly
	// request, until the Guard's OnError or OnResponseHeaders callback
	// takes it: net/http replaces a transport's error with a string when
	// the client's Timeout fired meanwhile, and the Guard must still act on
	// its own outcome (retry or report), never lose the request.
	outcomes map[*colly.Request]error
}

// put stores t for u, and sweeps now and then.
func (b *ticketBox) put(u *url.URL, t *ticket) {
	b.mu.Lock()
	if b.m == nil {
		b.m = make(map[*url.URL]*ticket)
	}
	b.issued++
	t.seq = uint32(b.issued)
	b.m[u] = t
	if len(b.m) >= max(b.nextSweep, sweepTickets) {
		b.sweep()
	}
	b.mu.Unlock()
}

// sweep drops the tickets of collected requests and of old ones. b.mu is
// held.
func (b *ticketBox) sweep() {
	now := uint32(b.issued)
	for k, v := range b.m {
		if now-v.seq > maxTicketAge || (v.method != "" && v.r.Value() == nil) {
			delete(b.m, k)
		}
	}
	b.nextSweep = 2 * len(b.m)
}

// record keeps err, the transport's outcome of an attempt of t's request.
func (b *ticketBox) record(t *ticket, err error) {
	r := t.r.Value()
	if r == nil {
		return
	}
	b.mu.Lock()
	if b.outcomes == nil {
		b.outcomes = make(map[*colly.Request]error)
	}
	b.outcomes[r] = err
	b.mu.Unlock()
}

// takeOutcome returns and forgets the outcome recorded for r, or nil.
func (b *ticketBox) takeOutcome(r *colly.Request) error {
	b.mu.Lock()
	err := b.outcomes[r]
	if err != nil {
		delete(b.outcomes, r)
	}
	b.mu.Unlock()
	return err
}

// get returns the ticket of u, or nil.
func (b *ticketBox) get(u *url.URL) *ticket {
	b.mu.Lock()
	t := b.m[u]
	b.mu.Unlock()
	return t
}

// take returns and drops the ticket of u, or nil.
func (b *ticketBox) take(u *url.URL) *ticket {
	b.mu.Lock()
	t := b.m[u]
	if t != nil {
		delete(b.m, u)
	}
	b.mu.Unlock()
	return t
}

// drop forgets the ticket of u.
func (b *ticketBox) drop(u *url.URL) {
	b.mu.Lock()
	delete(b.m, u)
	b.mu.Unlock()
}
