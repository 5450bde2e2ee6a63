package sitemap

import (
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
)

// DefaultInterval is the least time between two requests of a Walker to
// one host when Options.Interval is zero (one request per second, the
// middleware's default rate).
const DefaultInterval = time.Second

// maxCrawlDelay is the longest Crawl-delay a Walker honours; a longer one
// is honoured as this (Heritrix and crawler-commons use 300 s too).
const maxCrawlDelay = 300 * time.Second

// A hostPacing paces a Walker's requests per host, robots.txt fetches and
// redirect hops included: one request in flight per host; each starts at
// least the interval after the one before and at least the host's
// Crawl-delay after the end of the previous response (the wait after
// loading one page before starting the next, as Yandex defined it; see
// docs/robots-semantics.md#crawl-delay). A
// response ends when its body is read to its end or closed, when it
// fails, or, for a redirect, with its headers. Hosts idle for a minute are
// forgotten once many are kept.
type hostPacing struct {
	// mu guards hosts.
	mu    sync.Mutex
	hosts map[string]*hostPace
}

// A hostPace is one host's pacing state.
type hostPace struct {
	turn      chan struct{} // holds a token while a request is in flight
	lastStart time.Time     // guarded by the token
	lastEnd   time.Time     // guarded by the token
}

// forgetAfter is how long a host is idle before its state may be dropped;
// keptHosts is how many hosts are kept before idle ones are dropped.
const (
	forgetAfter = time.Minute
	keptHosts   = 1024
)

// host returns the state of host name at now, creating it.
func (p *hostPacing) host(name string, now time.Time) *hostPace {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.hosts == nil {
		p.hosts = make(map[string]*hostPace)
	}
	if len(p.hosts) >= keptHosts {
		for k, h := range p.hosts {
			select {
			case h.turn <- struct{}{}:
				if now.Sub(h.lastEnd) > forgetAfter {
					delete(p.hosts, k)
				}
				<-h.turn
			default: // in flight
			}
		}
	}
	h := p.hosts[name]
	if h == nil {
		h = &hostPace{turn: make(chan struct{}, 1)}
		p.hosts[name] = h
	}
	return h
}

// interval returns the Walker's interval; negative Options.Interval
// means none (the Client paces, e.g. middleware.Guard.Transport).
func (w *Walker) interval() time.Duration {
	switch {
	case w.Interval < 0:
		return 0
	case w.Interval == 0:
		return DefaultInterval
	}
	return w.Interval
}

// paced returns base with its transport paced per host (see hostPacing),
// unless Options.Interval is negative.
func (w *Walker) paced(base *http.Client) *http.Client {
	if w.Interval < 0 {
		return base
	}
	c := *base
	next := c.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	c.Transport = &pacedTransport{w: w, next: next}
	return &c
}

// A pacedTransport sends a Walker's requests at its hosts' pace.
type pacedTransport struct {
	w    *Walker
	next http.RoundTripper
}

// RoundTrip implements http.RoundTripper.
func (t *pacedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	w := t.w
	h := w.pacing.host(strings.ToLower(req.URL.Hostname()), w.clock())
	select {
	case h.turn <- struct{}{}:
	case <-req.Context().Done():
		closeReqBody(req)
		return nil, req.Context().Err()
	}
	at := h.lastStart.Add(w.interval())
	cd, fetched := t.crawlDelay(req)
	if !h.lastEnd.IsZero() {
		at = maxTime(at, h.lastEnd.Add(cd))
	}
	if now := w.clock(); !fetched.After(now) {
		// robots.txt's own response, which a cache of the caller's
		// (Walker.Robots) fetched without this transport, ended too;
		// a time ahead of the Walker's clock is another clock's.
		at = maxTime(at, fetched.Add(cd))
	}
	if d := at.Sub(w.clock()); d > 0 {
		if err := w.wait(req.Context(), d); err != nil {
			<-h.turn
			closeReqBody(req)
			return nil, err
		}
	}
	h.lastStart = w.clock()
	sendDeadlineOf(req.Context()).start() // Timeout counts from here
	resp, err := t.next.RoundTrip(req)
	if err != nil {
		t.end(h)
		return nil, err
	}
	if resp.StatusCode >= 300 && resp.StatusCode < 400 && resp.Header.Get("Location") != "" {
		// Loaded with its headers: the client checks the next hop before
		// it closes this body.
		t.end(h)
		return resp, nil
	}
	resp.Body = &pacedBody{ReadCloser: resp.Body, end: sync.OnceFunc(func() { t.end(h) })}
	return resp, nil
}

// end records the end of h's response in flight and frees the host.
func (t *pacedTransport) end(h *hostPace) {
	h.lastEnd = t.w.clock()
	<-h.turn
}

// crawlDelay returns the Crawl-delay of req's origin for the Walker's
// agent, as far as its robots.txt is cached, and when that robots.txt's
// fetch completed; 0 and the zero time for robots.txt itself.
func (t *pacedTransport) crawlDelay(req *http.Request) (time.Duration, time.Time) {
	if req.URL.Path == "/robots.txt" {
		return 0, time.Time{}
	}
	e, ok := t.w.robots().Peek(req.URL)
	if !ok || e.Robots == nil {
		return 0, time.Time{}
	}
	d, _ := e.Robots.CrawlDelay(t.w.agent())
	return min(d, maxCrawlDelay), e.FetchedAt
}

// A pacedBody ends its response when read to its end, failed or closed.
type pacedBody struct {
	io.ReadCloser
	end func()
}

func (b *pacedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil {
		b.end()
	}
	return n, err
}

func (b *pacedBody) Close() error {
	err := b.ReadCloser.Close()
	b.end()
	return err
}

func closeReqBody(req *http.Request) {
	if req.Body != nil {
		req.Body.Close()
	}
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
