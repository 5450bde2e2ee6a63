package robotsmw

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gocolly/colly/v2"
	"golang.org/x/time/rate"

	"github.com/robotsmw/robotsmw/policy"
)

// Defaults of the Guard's fields (politeness.md §5.2 J).
const (
	// DefaultRate is the per-host rate when Guard.Rate is zero.
	DefaultRate = rate.Limit(1)
	// DefaultBackoff is the first pause after a 429 or 503 without
	// Retry-After when Guard.Backoff is zero (StormCrawler uses 60 s).
	DefaultBackoff = 60 * time.Second
	// DefaultMaxBackoff caps own back-off when Guard.MaxBackoff is zero.
	DefaultMaxBackoff = time.Hour
	// DefaultMaxRetries is the retry limit when Guard.MaxRetries is zero
	// (Nutch's db.fetch.retry.max).
	DefaultMaxRetries = 3
)

// A Guard makes the colly collectors it is attached to obey robots.txt and
// pace their requests per host. See the package documentation for what it
// does to each request.
//
// The zero Guard is ready to use. A Guard is safe for concurrent use by
// multiple goroutines; attach one Guard to a collector and to each of its
// clones to share one robots.txt cache and one set of per-host limiters.
// Its exported fields must not be changed after the first request.
type Guard struct {
	// Agent is the product token matched against robots.txt User-agent
	// lines (RFC 9309 §2.2.1); a full User-Agent value is cut to its
	// product token. If empty, the product token of the collector's
	// UserAgent at request time is used.
	Agent string

	// Rate is the steady rate of requests to each host (host name without
	// scheme or port), robots.txt fetches included. A longer Crawl-delay
	// lowers it. Zero means DefaultRate (one request per second);
	// rate.Inf means no limit but Crawl-delay and back-off.
	Rate rate.Limit

	// Backoff is the first pause of a host after a 429 or 503 response
	// without Retry-After; it doubles with each further failure in a row,
	// and a random fraction of up to a quarter is added. 500, 502, 504 and
	// network errors start at a sixth of it. Zero means DefaultBackoff.
	Backoff time.Duration

	// MaxBackoff caps the pauses of own back-off. A Retry-After is never
	// shortened: one beyond 24 hours makes requests to the host give up
	// instead. Zero means DefaultMaxBackoff.
	MaxBackoff time.Duration

	// MaxRetries is how often a request is retried after 429, 5xx or
	// network errors, and how often it is deferred while robots.txt is
	// unreachable, before it is reported. Zero means DefaultMaxRetries;
	// a negative value means never.
	MaxRetries int

	// ClampCrawlDelay, if set, honours a Crawl-delay above MaxCrawlDelay
	// as MaxCrawlDelay. By default such a host is not crawled and its
	// requests are reported with ErrCrawlDelayTooLong.
	ClampCrawlDelay bool

	// Cache holds the robots.txt policies. If nil, the Guard makes its own,
	// whose robots.txt requests go through http.DefaultTransport, send the
	// UserAgent of the collector that makes the first request, and keep the
	// host's pause and spacing like every other request, ahead of the pages
	// that wait for the host's limiter. A Cache supplied here
	// fetches with its own Client, outside the Guard's limiters.
	Cache *policy.Cache

	// ErrorHandler, if non-nil, is called for every request the Guard
	// aborts or gives up on, with an error wrapping ErrDisallowed,
	// ErrCrawlDelayTooLong, ErrRobotsUnreachable or ErrGaveUp, or the
	// collector context's error. It may be called concurrently. If nil,
	// such requests are only counted in Stats.
	ErrorHandler func(r *colly.Request, err error)

	// Seams for tests; nil means the real clock, sleep and randomness.
	now   func() time.Time
	sleep func(ctx context.Context, d time.Duration) error
	rand  func() float64
	// onPass, if set, is told the slot of each request passing a gate.
	onPass func(host string, at time.Time)

	ownOnce sync.Once
	own     *policy.Cache

	// pending counts entries in retries, so the hot path skips the lock.
	pending atomic.Int64

	// sendMu guards sends and sendAt: when each request in flight passed
	// its gate, by request and by the identity of its header map (see
	// hopdeadline.go).
	sendMu sync.Mutex
	sends  map[*colly.Request]sendStart
	sendAt map[uintptr]time.Time

	// mu guards hosts and retries.
	mu    sync.RWMutex
	hosts map[string]*host
	// retries maps "METHOD URL" to the retries made so far.
	retries map[string]int
}

// Attach is shorthand for new(Guard).Attach:
//
//	c := colly.NewCollector(robotsmw.Attach())
func Attach() colly.CollectorOption {
	return new(Guard).Attach
}

// Attach installs g on c. It has the type of a colly.CollectorOption, so
// it can be passed to colly.NewCollector. It
//   - turns colly's own robots.txt check off (c.IgnoreRobotsTxt), and wraps
//     the transport of c's HTTP client (c.WithTransport, around the
//     transport c has) so that colly's check, should COLLY_IGNORE_ROBOTSTXT
//     turn it back on, is answered locally with an empty robots.txt: it
//     sends nothing and blocks nothing, and only the Guard decides;
//   - registers OnRequest, OnRequestHeaders, OnResponseHeaders, OnResponse
//     and OnError callbacks;
//   - installs a redirect handler (c.SetRedirectHandler) that checks each
//     hop and otherwise behaves as colly's default: at most 10 hops, and
//     no Authorization header across hosts. A later SetRedirectHandler
//     replaces it and ends the checks of redirect hops.
//
// A later c.WithTransport, SetProxyFunc or SetClient replaces the wrapper;
// colly's check is then turned off by the Guard's first OnRequest, after
// colly has checked the first request (see the package documentation).
//
// colly's Clone drops callbacks: call Attach on each clone too. Clones share
// the HTTP client, so the redirect handler of the collector attached last
// serves them all, and so does one transport wrapper: a client that has it
// already is left alone.
func (g *Guard) Attach(c *colly.Collector) {
	c.IgnoreRobotsTxt = true
	answerCollyRobots(c)
	c.OnRequest(func(r *colly.Request) { g.onRequest(c, r) })
	c.OnRequestHeaders(func(r *colly.Request) { g.onRequestHeaders(c, r) })
	c.OnResponseHeaders(func(r *colly.Response) { g.onResponseHeaders(c, r) })
	c.OnResponse(func(r *colly.Response) { g.onResponse(c, r) })
	c.OnError(func(r *colly.Response, err error) { g.onError(c, r, err) })
	c.SetRedirectHandler(g.redirectHandler(c))
}

// onRequest runs before colly sends r: robots.txt, deferral and pacing. It
// runs outside colly's request timeout, so the waits are not cut short.
func (g *Guard) onRequest(c *colly.Collector, r *colly.Request) {
	if r.IsAbort() {
		return
	}
	if !c.IgnoreRobotsTxt && !answersCollyRobots(c) {
		// COLLY_IGNORE_ROBOTSTXT is applied after the options of
		// NewCollector and may have turned colly's own check back on, and
		// the transport that answers it was replaced (collyrobots.go).
		// While that transport is installed the flag is left alone: colly
		// reads it in Visit, which may run concurrently with this callback.
		c.IgnoreRobotsTxt = true
	}
	ctx := withCrawl(collectorContext(c), c)
	if err := g.admit(ctx, g.cache(c), r.URL, g.agent(c), false); err != nil {
		r.Abort()
		g.report(r, err)
	}
}

// onRequestHeaders runs right before colly's HTTP client is called (after
// any LimitRule slot was taken): the host's gate.
func (g *Guard) onRequestHeaders(c *colly.Collector, r *colly.Request) {
	if r.IsAbort() {
		return
	}
	if err := g.gate(collectorContext(c), g.host(r.URL), false); err != nil {
		r.Abort() // colly reports colly.ErrAbortedBeforeRequest to OnError
		g.report(r, fmt.Errorf("robotsmw: %s not sent: %w", r.URL.Redacted(), err))
		return
	}
	g.markSent(r, g.clock())
}

// redirectHandler returns the handler that checks each redirect hop before
// it is sent, inside colly's client. net/http passes the context of the
// first request, without the client's deadline, so the handler bounds its
// waits by the collector's request timeout, counted from when the first
// request passed its gate. A hop that cannot go in time is deferred: the
// request is retried at the hop once it may go.
func (g *Guard) redirectHandler(c *colly.Collector) func(*http.Request, []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		if len(via) >= 10 {
			return http.ErrUseLastResponse // colly's default
		}
		if req.URL.Host != via[len(via)-1].URL.Host {
			req.Header.Del("Authorization") // colly's default
		}
		ctx, cancel := g.hopContext(req.Context(), c, via[0])
		defer cancel()
		ctx = withCrawl(ctx, c)
		err := g.admit(ctx, g.cache(c), req.URL, g.agent(c), true)
		if err != nil && req.Context().Err() == nil && ctx.Err() != nil {
			// The client's deadline passed while the hop waited.
			err = &hopDeferredError{until: g.clock(), err: errHostBusy}
		}
		var hd *hopDeferredError
		if errors.As(err, &hd) {
			hd.url, hd.method, hd.header = req.URL, req.Method, req.Header.Clone()
			hd.body = req.GetBody != nil
		}
		return err
	}
}

// onResponseHeaders sees every response (final URL after redirects) before
// its body: 429 and 503 pause and slow the host at once.
func (g *Guard) onResponseHeaders(c *colly.Collector, resp *colly.Response) {
	g.unmarkSent(resp.Request)
	h := g.host(resp.Request.URL)
	now := g.clock()
	switch cls := classify(resp.StatusCode); cls {
	case hard, soft:
		var hdr http.Header
		if resp.Headers != nil {
			hdr = *resp.Headers
		}
		ra, ok := retryAfter(hdr, now)
		h.strike(now, cls, ra, ok, g.backoffBase(), g.maxBackoff(), g.random())
	default:
		if cls == healthy {
			h.healthy(now)
		}
		if g.pending.Load() > 0 {
			g.forget(resp.Request)
		}
	}
}

// onResponse retries 429 and 5xx responses when colly passes them to
// OnResponse (ParseHTTPErrorResponse).
func (g *Guard) onResponse(c *colly.Collector, resp *colly.Response) {
	if c.ParseHTTPErrorResponse && classify(resp.StatusCode) >= soft {
		g.retry(c, resp.Request, fmt.Errorf("robotsmw: status %d", resp.StatusCode), true)
	}
}

// onError retries failed requests, reports blocked redirect hops, and
// leaves other errors to the user's OnError callbacks.
func (g *Guard) onError(c *colly.Collector, resp *colly.Response, err error) {
	r := resp.Request
	if r == nil {
		return
	}
	g.unmarkSent(r)
	var de *DisallowedError
	var hd *hopDeferredError
	switch {
	case errors.As(err, &de):
		g.report(r, de)
	case errors.Is(err, ErrCrawlDelayTooLong), errors.Is(err, ErrGaveUp):
		g.report(r, err)
	case errors.As(err, &hd):
		ctx := collectorContext(c)
		if perr := g.pause(ctx, max(hd.until.Sub(g.clock()), minDeferral)); perr != nil {
			g.report(r, fmt.Errorf("robotsmw: %s not sent: %w", r.URL.Redacted(), perr))
			return
		}
		if hd.url != nil {
			// Resume at the hop: the requests before it were answered.
			if hd.method != r.Method || !hd.body {
				r.Body = nil
			}
			r.URL, r.Method, r.Headers = hd.url, hd.method, &hd.header
		}
		g.retry(c, r, hd, hd.robots)
	case collectorContext(c).Err() != nil,
		errors.Is(err, colly.ErrAbortedBeforeRequest), errors.Is(err, colly.ErrAbortedAfterHeaders):
		// The crawl is over, or a callback aborted the request.
		if g.pending.Load() > 0 {
			g.forget(r)
		}
	case resp.StatusCode != 0:
		if !c.ParseHTTPErrorResponse && classify(resp.StatusCode) >= soft {
			g.retry(c, r, err, true)
		}
	case isNetworkError(err):
		now := g.clock()
		g.host(r.URL).strike(now, soft, 0, false, g.backoffBase(), g.maxBackoff(), g.random())
		g.retry(c, r, err, true)
	}
}

// retry sends r again after a failure. The retry waits in onRequest for the
// host's pause and limiter, and colly's Wait covers it. counted retries are
// limited by MaxRetries, then r is reported with ErrGaveUp.
func (g *Guard) retry(c *colly.Collector, r *colly.Request, cause error, counted bool) {
	key := r.Method + " " + r.URL.String()
	g.mu.Lock()
	n, had := g.retries[key]
	if counted {
		n++
	}
	if counted && n > g.maxRetries() {
		if had {
			delete(g.retries, key)
			g.pending.Add(-1)
		}
		g.mu.Unlock()
		g.report(r, fmt.Errorf("%w: %s %s after %d retries: %w", ErrGaveUp, r.Method, r.URL.Redacted(), n-1, cause))
		return
	}
	if n > 0 {
		if g.retries == nil {
			g.retries = make(map[string]int)
		}
		if !had {
			g.pending.Add(1)
		}
		g.retries[key] = n
	}
	g.mu.Unlock()
	g.host(r.URL).count(func(s *HostStats) *int64 { return &s.Retried })
	if err := r.Retry(); err != nil && (c.Async || notSent(err)) {
		g.forget(r)
		g.report(r, fmt.Errorf("%w: %s %s could not be retried: %w", ErrGaveUp, r.Method, r.URL.Redacted(), err))
	}
}

// forget drops r's retry count after a final response.
func (g *Guard) forget(r *colly.Request) {
	key := r.Method + " " + r.URL.String()
	g.mu.Lock()
	if _, ok := g.retries[key]; ok {
		delete(g.retries, key)
		g.pending.Add(-1)
	}
	g.mu.Unlock()
}

// report counts a request the Guard aborted or gave up on, drops its retry
// count (a final outcome), and passes it to ErrorHandler.
func (g *Guard) report(r *colly.Request, err error) {
	if g.pending.Load() > 0 {
		g.forget(r)
	}
	if !errors.Is(err, ErrDisallowed) && !errors.Is(err, ErrCrawlDelayTooLong) {
		g.host(r.URL).count(func(s *HostStats) *int64 { return &s.GaveUp })
	}
	if g.ErrorHandler != nil {
		g.ErrorHandler(r, err)
	}
}

// notSent reports whether err, returned by Request.Retry of a synchronous
// collector, means that the retry was refused before it was sent, rather
// than being the outcome of the retried request.
func notSent(err error) bool {
	for _, e := range []error{
		colly.ErrRetryBodyUnseekable, colly.ErrMaxDepth, colly.ErrMaxRequests,
		colly.ErrForbiddenDomain, colly.ErrForbiddenURL, colly.ErrNoURLFiltersMatch,
		colly.ErrRobotsTxtBlocked, colly.ErrMissingURL,
	} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// cache returns the robots.txt cache: Cache, or the Guard's own.
func (g *Guard) cache(c *colly.Collector) *policy.Cache {
	if g.Cache != nil {
		return g.Cache
	}
	g.ownOnce.Do(func() {
		g.own = &policy.Cache{
			Client:    &http.Client{Transport: &pacedTransport{g: g, next: http.DefaultTransport}},
			UserAgent: c.UserAgent,
		}
	})
	return g.own
}

// agent returns the product token robots.txt is matched for.
func (g *Guard) agent(c *colly.Collector) string {
	if g.Agent != "" {
		return policy.ProductToken(g.Agent)
	}
	return policy.ProductToken(c.UserAgent)
}

func (g *Guard) rateFloor() time.Duration {
	switch {
	case g.Rate == 0:
		return time.Duration(float64(time.Second) / float64(DefaultRate))
	case g.Rate == rate.Inf || g.Rate < 0:
		return 0
	}
	return time.Duration(float64(time.Second) / float64(g.Rate))
}

func (g *Guard) backoffBase() time.Duration {
	if g.Backoff > 0 {
		return g.Backoff
	}
	return DefaultBackoff
}

func (g *Guard) maxBackoff() time.Duration {
	if g.MaxBackoff > 0 {
		return g.MaxBackoff
	}
	return DefaultMaxBackoff
}

func (g *Guard) maxRetries() int {
	switch {
	case g.MaxRetries == 0:
		return DefaultMaxRetries
	case g.MaxRetries < 0:
		return 0
	}
	return g.MaxRetries
}

func (g *Guard) random() float64 {
	if g.rand != nil {
		return g.rand()
	}
	return rand.Float64()
}

// collectorContext returns c's context, or context.Background.
func collectorContext(c *colly.Collector) context.Context {
	if c.Context != nil {
		return c.Context
	}
	return context.Background()
}
