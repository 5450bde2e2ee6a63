package robotsmw

import (
	"net/url"
	"sync"

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

// A ticket is kept for a request that never reaches the transport nor a
// colly callback that drops it (a later OnRequest callback of the user
// aborted it) until maxTicketAge more tickets were issued; sweeps run every
// sweepTickets tickets. Should a live ticket be swept (a request that
// waited while a million others were admitted), the transport admits the
// request itself: nothing is let through unchecked.
const (
	maxTicketAge = 1 << 20
	sweepTickets = 1 << 12
)

// A ticket is the Guard's verdict about one request, or redirect hop, on
// its way to the transport.
type ticket struct {
	r     *colly.Request // the colly request; nil for a hop of an unknown chain
	orig  *url.URL       // r's URL when the Guard admitted it: its retry count's key
	err   error          // nil: admitted; else the outcome the transport returns
	gated bool           // the request passed the host's gate
	seq   uint64         // when the ticket was issued, in tickets issued before it
}

// A ticketBox holds the tickets of requests in flight.
type ticketBox struct {
	// mu guards m and issued.
	mu     sync.Mutex
	m      map[*url.URL]*ticket
	issued uint64
}

// put stores t for u, and sweeps old tickets now and then.
func (b *ticketBox) put(u *url.URL, t *ticket) {
	b.mu.Lock()
	if b.m == nil {
		b.m = make(map[*url.URL]*ticket)
	}
	b.issued++
	t.seq = b.issued
	b.m[u] = t
	if b.issued%sweepTickets == 0 && b.issued > maxTicketAge {
		cutoff := b.issued - maxTicketAge
		for k, v := range b.m {
			if v.seq < cutoff {
				delete(b.m, k)
			}
		}
	}
	b.mu.Unlock()
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
