package robotsmw

import (
	"context"
	"net/url"
	"sync"
	"sync/atomic"
	"time"
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
//
// Most requests get their ticket into the box at the gate
// (OnRequestHeaders), right before colly's client sends them, from where
// nothing but an error reported to OnError (which drops the ticket) keeps
// them from the transport (which takes it). OnRequest hands the ticket of
// a request it admitted at once to the gate outside the box (see
// handoffTable); it leaves a ticket in the box (a pre-ticket) only for a
// request it did not admit, one that waited there, or a retry:
// OnRequestHeaders finds it and carries it on.
//
// A request that a later OnRequest callback of the user aborts never
// reaches the transport nor a callback that drops its pre-ticket. A
// pre-ticket holds the request weakly, so the request itself is
// collected; sweeps, run whenever the box has doubled since the last one
// (amortized O(1) per ticket), drop tickets whose request is gone and
// tickets older than maxTicketAge issues. Should a live ticket be swept (a
// request that waited while a million others were admitted), the
// transport admits the request itself: nothing is let through unchecked.
const (
	maxTicketAge = 1 << 20
	sweepTickets = 1 << 12 // the smallest box that is swept
)

// A ticket is the Guard's verdict about one request, or redirect hop, on
// its way to the transport.
type ticket struct {
	// r is the colly request, held weakly by a pre-ticket; strong holds
	// it once the request passed its gate. Both are zero for a hop of an
	// unknown chain.
	r      weak.Pointer[colly.Request]
	strong *colly.Request
	method string   // the request's method; "" for a hop of an unknown chain
	orig   *url.URL // r's URL when the Guard admitted it: its retry count's key
	err    error    // nil: admitted; else the outcome the transport returns
	gated  bool     // the request passed the host's gate
	lease  uint64   // the request's lease of its host's in-flight place; 0 if none
	// parseErrors is the collector's ParseHTTPErrorResponse when the
	// ticket was issued; see crawlend.go.
	parseErrors bool
	// seq is when the ticket was issued, in tickets issued before it,
	// modulo 2³² (ages are differences; 32 bits keep a ticket small).
	seq uint32
	// pre marks a pre-ticket (see above), counted in ticketBox.pre.
	pre bool
	// retry marks the ticket of a retry: its parseErrors is its first
	// attempt's (see keepParse).
	retry bool
	// waited is how long OnRequest waited, for the waits in Stats.
	waited time.Duration
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
	// body is the watcher of the response's body, for a colly request
	// (see guardTransport.send): made with the ticket, which saves an
	// allocation per request.
	body watchedBody
}

// newPreTicket returns the pre-ticket of colly request r with verdict err.
func newPreTicket(r *colly.Request, err error) *ticket {
	return &ticket{r: weak.Make(r), method: r.Method, orig: r.URL, err: err, pre: true}
}

// request returns t's colly request, or nil if it is gone or unknown.
func (t *ticket) request() *colly.Request {
	if t.strong != nil {
		return t.strong
	}
	return t.r.Value()
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
	// pre counts the pre-tickets in m: the gate looks for one only while
	// there are any. Written with mu held.
	pre atomic.Int64
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
	b.removed(b.m[u])
	b.m[u] = t
	if t.pre {
		b.pre.Add(1)
	}
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
		if now-v.seq > maxTicketAge || (v.method != "" && v.request() == nil) {
			delete(b.m, k)
			b.removed(v)
		}
	}
	b.nextSweep = 2 * len(b.m)
}

// record keeps err, the transport's outcome of an attempt of t's request.
func (b *ticketBox) record(t *ticket, err error) {
	r := t.request()
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

// removed counts t, a ticket taken out of m, out of pre. b.mu is held.
func (b *ticketBox) removed(t *ticket) {
	if t != nil && t.pre {
		b.pre.Add(-1)
	}
}

// preOf returns the pre-ticket OnRequest left for r, or nil; the ticket
// is no longer a pre-ticket: the gate carries it on, holding r.
func (b *ticketBox) preOf(r *colly.Request) *ticket {
	if b.pre.Load() == 0 {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	t := b.m[r.URL]
	if t == nil || !t.pre || t.r.Value() != r {
		return nil // none, or one of another request under the same URL
	}
	b.removed(t)
	t.pre, t.strong = false, r
	return t
}

// take returns and drops the ticket of u, or nil.
func (b *ticketBox) take(u *url.URL) *ticket {
	b.mu.Lock()
	t := b.m[u]
	if t != nil {
		delete(b.m, u)
		b.removed(t)
	}
	b.mu.Unlock()
	return t
}

// A handoffTable carries the ticket OnRequest made for a request it
// admitted at once to the request's gate (OnRequestHeaders), which runs
// after colly's LimitRule queue, without a lock and without looking the
// host up again: the ticket holds it. A request's slot is its ID modulo
// the table's size. A slot taken over meanwhile by another request (colly
// numbers requests per collector, and a clone counts from 1 again) only
// costs the gate a ticket of its own. A ticket whose gate never comes (a
// user's OnRequest aborted the request) stays until its slot is taken
// over: the table holds at most its size of them, and no lease. OnRequest
// hands nothing over while colly's cache (CacheDir) may answer a request
// without a gate. Safe for concurrent use.
type handoffTable [1024]atomic.Pointer[ticket]

// put hands tk, the ticket of r, to r's gate.
func (t *handoffTable) put(r *colly.Request, tk *ticket) {
	t[r.ID%uint32(len(t))].Store(tk)
}

// take returns the ticket OnRequest handed to r's gate, or nil.
func (t *handoffTable) take(r *colly.Request) *ticket {
	s := &t[r.ID%uint32(len(t))]
	tk := s.Load()
	if tk == nil || tk.strong != r || !s.CompareAndSwap(tk, nil) {
		return nil
	}
	return tk
}
