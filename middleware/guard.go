package robotsmw

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
	"weak"

	"github.com/robotsmw/robotsmw/pace"

	"github.com/gocolly/colly/v2"
	"golang.org/x/time/rate"

	"github.com/robotsmw/robotsmw/policy"
	"github.com/robotsmw/robotsmw/sitemap"
)

// Defaults of the Guard's fields, as each field documents them (the
// sources of each are in docs/politeness.md).
const (
	// defaultRate is the per-host rate when Guard.Rate is zero.
	defaultRate = rate.Limit(1)
	// defaultBackoff is the first pause after a 429 or 503 without
	// Retry-After when Guard.Backoff is zero (StormCrawler uses 60 s).
	defaultBackoff = 60 * time.Second
	// defaultMaxBackoff caps own back-off when Guard.MaxBackoff is zero.
	defaultMaxBackoff = time.Hour
	// defaultMaxRetries is the retry limit when Guard.MaxRetries is zero
	// (Nutch's db.fetch.retry.max).
	defaultMaxRetries = 3
	// defaultMaxRobotsFailures is how often in a row robots.txt may fail
	// when Guard.MaxRobotsFailures is zero.
	defaultMaxRobotsFailures = 3
	// defaultMaxRobotsFetches bounds the concurrent robots.txt fetches of
	// the Guard's own cache when Guard.MaxRobotsFetches is zero.
	defaultMaxRobotsFetches = 64
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
	// product token (policy.ProductToken: "Mozilla/5.0 (compatible;
	// MyBot/1.0; +URL)" is MyBot; a browser's User-Agent names no bot and
	// matches only User-agent: *). If empty, the product token of the
	// collector's UserAgent at request time is used.
	Agent string

	// Rate is the steady rate of requests to each host (host name without
	// scheme or port), robots.txt fetches included. A longer Crawl-delay
	// lowers it. Zero means one request per second; rate.Inf means no
	// limit but Crawl-delay and back-off. A negative rate is refused
	// (Attach panics): it would silently turn pacing off.
	Rate rate.Limit

	// Backoff is the first pause of a host after a 429 or 503 response
	// without Retry-After; it doubles with each further failure in a row,
	// and a random fraction of up to a quarter is added. 500, 502, 504 and
	// network errors start at a sixth of it. Zero means 60 s
	// (StormCrawler's default); negative is refused.
	Backoff time.Duration

	// MaxBackoff caps the pauses of own back-off. A Retry-After is never
	// shortened (policy.RetryAfter): one beyond 24 hours makes requests to
	// the host, or to the origin whose robots.txt sent it, give up at once
	// with an error naming the time. Zero means an hour; negative is
	// refused.
	MaxBackoff time.Duration

	// MaxRetries is how often a request is retried after 429, 5xx,
	// network errors or a body cut short before it is reported with
	// ErrGaveUp. Zero means 3 (Nutch's db.fetch.retry.max); a negative
	// value means never. A synchronous collector's request is retried in
	// place, inside its Visit; an asynchronous one's retry is handed back
	// to colly once its host's pause is over, after the requests then waiting for
	// the host inside colly's callbacks: new requests go first, as
	// Scrapy's retries go after new requests. It yields for at most
	// MaxWait; in an async crawl with a backlog for the host that is
	// usually the whole MaxWait, and once handed back it waits for colly's
	// LimitRule slot and its host's place like any request. A request
	// whose method is not idempotent (POST, PATCH; RFC 9110 §9.2.2) is
	// retried only after 429 or 503, by which the server says it did not
	// act on it; after any other failure it is reported with ErrGaveUp
	// at once, as the server may have acted on it.
	MaxRetries int

	// MaxRobotsFailures is how many times in a row an origin's robots.txt
	// may fail (429, 5xx, network error; RFC 9309 §2.3.1.4 makes each a
	// complete disallow for the time being) while its pages wait or are
	// deferred for its next try; from then on they are reported with
	// ErrRobotsUnreachable at once, until robots.txt is due again. Zero
	// means 3; 1 gives up on the first failure; negative is refused.
	MaxRobotsFailures int

	// MaxWait is the longest a request of an asynchronous collector waits
	// inside a colly callback for its host (pause, rate, Crawl-delay) or
	// its robots.txt. A request that would wait longer is deferred: its
	// attempt ends at once with a *DeferredError, freeing the colly
	// thread, and the Guard sends it again when it is due. A synchronous
	// collector's requests wait in place however long, and are never
	// deferred (see the package doc). Zero means 30 s; negative is
	// refused.
	MaxWait time.Duration

	// IdleTimeout is how long the state of a host is kept after it went
	// quiet (nothing waiting, for its turn or its robots.txt, or sent; no
	// pause, cut or strike in force, its Crawl-delay's gap over; its next
	// request reads its Crawl-delay again). A host a Retry-After beyond a
	// day excluded is kept while requests still ask for it and, with no
	// Pacer (whose schedule would keep the pause), until the pause ends,
	// without its robots.txt. Zero means
	// 5 min; negative is refused. The totals in Stats keep the counts of
	// forgotten hosts. Quiet is counted from the last request's start:
	// keep IdleTimeout above the collector's request timeout, or a host
	// whose response takes longer is forgotten while it is read, and its
	// latency learnt anew.
	IdleTimeout time.Duration

	// ClampCrawlDelay, if set, honours a Crawl-delay above policy.MaxCrawlDelay
	// as policy.MaxCrawlDelay. By default such a host is not crawled and its
	// requests are reported with ErrCrawlDelayTooLong.
	ClampCrawlDelay bool

	// CleanParams, if set, fetches URLs that differ only in query
	// parameters a Clean-param line of their robots.txt names (Yandex;
	// policy.Robots.Canonical) once: a request whose canonical form was
	// requested before under another URL is not sent and ends with a
	// error wrapping ErrDuplicate. colly's visited check compares
	// whole URLs before the Guard sees a request, so the Guard keeps the
	// canonical forms itself: 16 bytes for each URL a Clean-param line
	// applies to, for the Guard's lifetime (like colly's own visited
	// set), none for other URLs. Each Guard of a fleet keeps its own.
	CleanParams bool

	// Cache holds the robots.txt policies. If nil, the Guard makes its own,
	// whose robots.txt requests go through the transport of the collector
	// it was attached to first (as it was before Attach: its proxy and TLS
	// settings), send that collector's UserAgent as it is at the first
	// request, Seed or RobotsCache (a colly.UserAgent option after Attach
	// counts), keep the host's pause and spacing like every other request,
	// ahead of the pages that wait for the host's schedule, and strike the
	// host when robots.txt answers 429 or 5xx. At most MaxRobotsFetches run
	// at once. A Cache supplied here fetches with its own Client, outside
	// the Guard's pacing, and bounds its fetches by its own MaxFetches.
	Cache *policy.Cache

	// RobotsStore keeps the records of the Guard's own robots.txt cache
	// (policy.Cache.Store) when Cache is nil: a store shared by a fleet
	// (package redisstore) makes one robots.txt fetch per origin serve
	// every member. If nil, they are kept in memory.
	RobotsStore policy.Store

	// Pacer, if set, keeps the per-host schedule, pauses and rate cuts in
	// a state shared with other Guards (see Pacer): every request takes
	// its slot from it at its gate, and every 429, 503 or failure is
	// reported to it, so a fleet paces each host as one crawler would. Rate
	// then is the rate of the whole fleet per host. If nil, the Guard keeps
	// this state in its own memory.
	Pacer pace.Pacer

	// InFlight is the most requests in flight to one host at once, from
	// the moment a request is sent to the end of its response (body read
	// to its end, failed or timed out): colly's threads, retries and
	// deferred requests, redirect hops, Guard.Transport, Seed's walker and
	// robots.txt fetches alike; with a Pacer, across the fleet. Zero means
	// 1, what Nutch, StormCrawler and Heritrix keep per host; negative is
	// refused. A request
	// that would wait longer than MaxWait for its host's place is
	// deferred, without holding a colly thread.
	InFlight int

	// Hosts overrides Rate and InFlight for the hosts its rules name, in
	// the spirit of colly's LimitRule: the operator's own site faster, a
	// fragile host slower. The first rule that names a host applies. A
	// rule never lets a host go faster than its robots.txt Crawl-delay, a
	// Retry-After or back-off allow: those still apply on top.
	Hosts []HostRule

	// Jitter, between 0 and 1, delays each request by a random fraction
	// of up to Jitter times its host's interval, so that many hosts do not
	// tick in lockstep. It never makes a request go sooner. Zero means
	// none; a value outside 0 to 1 is refused.
	Jitter float64

	// FixedPace turns latency-aware pacing off. By default a host that
	// slows down is given more time: after each response the next request
	// to the host waits at least the host's smoothed response time
	// (headers and body), up to MaxLatencyGap, as well as its Crawl-delay
	// (counted from the end of the response) and the Rate's spacing of
	// starts. The wait shrinks back as the host recovers, never below Rate
	// or Crawl-delay, and failed responses never shorten it. Stats shows
	// each host's smoothed latency and gap.
	FixedPace bool

	// MaxRobotsFetches bounds the robots.txt fetches of the Guard's own
	// cache that run at once; the others wait in line, without a
	// goroutine each, and the time they wait does not count against the
	// fetch's timeout. Zero means 64; negative is refused. 64: the
	// fetches wait on the network, not the CPU, and a broad crawl starts
	// with a cold origin for nearly every page. A fetch that stalls gives
	// its place up after a quarter of its 30 s timeout, which bounds its
	// redirect hops together (policy.Cache.MaxFetches).
	MaxRobotsFetches int

	// ErrorHandler, if non-nil, is called once for every request with a
	// final outcome the Guard decided: an error wrapping ErrDisallowed,
	// ErrCrawlDelayTooLong, ErrRobotsUnreachable, ErrGaveUp or (with
	// CleanParams) ErrDuplicate; and, with
	// FollowLinks, once for every link not followed, with a
	// *NotFollowedError and a request that was never sent. It is not
	// called for deferrals and retries (colly's OnError sees those, with a
	// *DeferredError). It may be called concurrently. Whether or not it is
	// set, colly's OnError callbacks (and a synchronous Visit) receive the
	// same errors.
	ErrorHandler func(r *colly.Request, err error)

	// Logger, if set, receives the Guard's events, one record per event
	// with a fixed message and attributes (durations and times rounded to
	// milliseconds):
	//
	//	Info   "request blocked"    host url agent group line rule (robots.txt),
	//	                            or host url origin crawl_delay (Crawl-delay
	//	                            above policy.MaxCrawlDelay)
	//	Debug  "request deferred"   host url cause next_attempt (it would wait
	//	                            over MaxWait)
	//	Info   "request retried"    host url attempt cause next_attempt
	//	                            [host_pause retry_after] (a failed attempt;
	//	                            the pause it started, if it did)
	//	Warn   "host paused"        host [url] status|error pause paused_until
	//	                            [retry_after] (a failure that is not a retried
	//	                            attempt: robots.txt, Guard.Transport, a
	//	                            final attempt)
	//	Warn   "request gave up"    host url error (ErrGaveUp, ErrRobotsUnreachable;
	//	                            Guard.Transport's requests too)
	//	Debug  "link not followed"  url page reason (FollowLinks)
	//
	// next_attempt is the earliest the request may go under its host's
	// rules: after the host's pause, an interval (cut after a failure)
	// after the last start, and the gap (Crawl-delay, or more for a slow
	// host) after the response's end.
	//
	// The Guard's own robots.txt cache logs to it too (policy.Cache.Logger:
	// "robots.txt fetched", "robots.txt slow" when a fetch has had no
	// answer for a sixth of its timeout, "robots.txt unreachable" with
	// next_fetch, when robots.txt is asked for again; a Cache of your own
	// logs to its own Logger), and so does Seed's walker
	// (sitemap.Walker.Logger: "sitemap read", "sitemap failed", "sitemap
	// large", "sitemap disallowed").
	// Times are on the Guard's clock. The Logger's handler is called from
	// the Guard's own goroutines too (robots.txt fetches, deferred
	// requests), also for a synchronous collector, whose callbacks it does
	// not concern: like any slog.Handler it must be safe for concurrent use.
	// If nil, nothing is logged; an event
	// whose level the Logger does not enable costs a level check and
	// allocates nothing. Logger may be set after Attach, before the first
	// request: with the one-liner,
	//
	//	c := colly.NewCollector(robotsmw.Attach())
	//	robotsmw.GuardOf(c).Logger = slog.Default()
	Logger *slog.Logger

	// Seeding configures Seed: the sitemap walk's scope, filters, fallback
	// and depth, a colly queue as the target, the requests in flight.
	// Its zero value does the right thing. It is read at each Seed, and
	// may be changed between Seeds (not during one).
	Seeding Seeding

	// Links configures FollowLinks and Directives: its zero value honours
	// nofollow pages and rel="nofollow" links.
	Links Links

	// Seams for tests; nil means the real clock, sleep and randomness.
	now   func() time.Time
	sleep func(ctx context.Context, d time.Duration) error
	rand  func() float64
	// onPass, if set, is told the slot of each request passing a gate.
	onPass func(host string, at time.Time)
	// robotsLimit, if set, replaces robotsTimeout for the own cache.
	robotsLimit time.Duration

	// first is the collector the Guard was attached to first, whose
	// transport and UserAgent its own cache fetches with (cacheFor),
	// until the cache is made.
	first   atomic.Pointer[colly.Collector]
	ownOnce sync.Once
	own     *policy.Cache
	ownMade atomic.Pointer[policy.Cache] // own, once made: Stats reads it without making it

	pacer    pacerState   // what the Guard keeps about its Pacer
	hosts    hostTable    // per-host pacing and back-off
	totals   totals       // counters over all hosts
	visits   visitIndex   // the record of each colly request in flight (request.go)
	later    laterQueue   // deferred requests, each with its visit
	seeds    seedTable    // Seed's requests in flight
	timeouts timeoutTable // colly clients' Timeouts the transport enforces
	// unguarded is set once a request of a collector the Guard is
	// attached to was not under its transport (see onResponseHeaders).
	unguarded atomic.Bool
	// attached holds the collectors Attach registered its callbacks with
	// (weak.Pointer[colly.Collector] keys), so that a second Attach to the
	// same collector changes nothing.
	attached  sync.Map
	canonical canonSet // CleanParams: canonical forms requested

	token  atomic.Pointer[agentToken] // the last User-Agent's product token
	waits  waitHistogram              // Stats.Waits
	flying atomic.Int64               // Stats.InFlight

	seedValidators sitemap.Validators // Seed's sitemaps' ETag and Last-Modified

}

// Attach is shorthand for new(Guard).Attach:
//
//	c := colly.NewCollector(robotsmw.Attach())
func Attach() colly.CollectorOption {
	return new(Guard).Attach
}

// Attach installs g on c. It has the type of a colly.CollectorOption, so
// it can be passed to colly.NewCollector. It
//   - turns colly's own robots.txt check off (c.IgnoreRobotsTxt);
//   - puts the Guard's transport under c's HTTP client (c.WithTransport,
//     around the transport c has): it fails the requests the Guard did not
//     admit with their outcome, so colly reports them to OnError; admits
//     requests that come without the Guard's callbacks (a clone the Guard
//     was not attached to) itself; classifies responses; and answers
//     colly's own check, should COLLY_IGNORE_ROBOTSTXT turn it back on,
//     with an empty robots.txt, so that it sends and blocks nothing;
//   - takes the client's request timeout over (its Timeout, colly's
//     SetRequestTimeout, 10 s by default): the transport bounds each
//     request by it, its redirect hops and the reading of its body
//     included, so that a request that runs out reaches OnError as the
//     Guard's outcome (a *DeferredError while it will be retried), not
//     as net/http's timeout text, and without a second timer per
//     request. A SetRequestTimeout after Attach is honoured (net/http
//     then bounds the request, and the Guard ends it a little earlier),
//     except SetRequestTimeout(0), which cannot lift the bound the
//     transport took (set it before Attach for requests without one);
//     should a later WithTransport or SetProxyFunc replace the Guard's
//     transport, the client gets its Timeout back before its next
//     request;
//   - registers OnRequest, OnRequestHeaders, OnResponseHeaders, OnError
//     and OnScraped callbacks;
//   - installs a redirect handler (c.SetRedirectHandler) that checks each
//     hop and otherwise behaves as colly's default: at most 10 hops, and
//     no Authorization header across hosts. A later SetRedirectHandler
//     replaces it and ends the checks of redirect hops.
//
// Pass Attach before options that add callbacks, or call it before adding
// yours: the Guard's OnError callback must run first to tell colly's
// later callbacks apart (see the package documentation).
//
// A later c.WithTransport, SetProxyFunc or SetClient replaces the Guard's
// transport (see the package documentation): install those first.
//
// Attaching a Guard to a collector it is attached to already changes
// nothing. colly's Clone drops callbacks: call Attach on each clone too. Clones share
// the HTTP client, so the redirect handler of the collector attached last
// serves them all, and so does one transport: a client that has it
// already is left alone.
func (g *Guard) Attach(c *colly.Collector) {
	switch {
	case g == nil:
		panic("robotsmw: Guard.Attach: the Guard is nil")
	case c == nil:
		panic("robotsmw: Guard.Attach: the collector is nil")
	}
	g.mustValidate()
	if err := collyCheck(); err != nil {
		panic(err)
	}
	if _, again := g.attached.LoadOrStore(weak.Make(c), struct{}{}); again {
		return // attached already: its callbacks are registered once
	}
	c.IgnoreRobotsTxt = true
	g.install(c)
	if g.Cache == nil && g.ownMade.Load() == nil {
		g.first.CompareAndSwap(nil, c) // the own cache fetches through c (cacheFor)
	}
	c.OnRequest(func(r *colly.Request) { g.onRequest(c, r) })
	c.OnRequestHeaders(func(r *colly.Request) { g.onRequestHeaders(c, r) })
	c.OnResponseHeaders(func(r *colly.Response) { g.onResponseHeaders(c, r) })
	c.OnResponse(func(r *colly.Response) { g.onResponse(c, r) })
	c.OnError(func(r *colly.Response, err error) { g.onError(c, r, err) })
	c.OnScraped(func(r *colly.Response) { g.seeds.done(r.Request) })
	c.SetRedirectHandler(g.redirectHandler(c))
}

// cacheFor returns the robots.txt cache: Cache, or the Guard's own, which
// is made on first use with the transport of the collector the Guard was
// attached to first, as it was before Attach, and that collector's
// UserAgent as it is then; without one, with those of c, or next (or
// http.DefaultTransport) and Agent. Made on first use, not in Attach:
// colly applies NewCollector's options in order, so that a
// colly.UserAgent option after robotsmw.Attach, or a UserAgent set before
// the first Visit, is the one robots.txt is fetched with.
func (g *Guard) cacheFor(c *colly.Collector, next http.RoundTripper) *policy.Cache {
	if g.Cache != nil {
		return g.Cache
	}
	g.ownOnce.Do(func() {
		if f := g.first.Swap(nil); f != nil {
			c = f // not kept: the Guard must not keep a collector alive
		}
		ua := g.Agent
		if c != nil {
			ua = c.UserAgent
			if t := guarded(c); t != nil {
				next = t.next
			} else if hc := collyClient(c); hc != nil {
				next = hc.Transport
			}
		}
		if next == nil {
			next = http.DefaultTransport
		}
		fetches := g.MaxRobotsFetches
		if fetches <= 0 {
			fetches = defaultMaxRobotsFetches
		}
		g.own = &policy.Cache{
			Client:     &http.Client{Transport: &pacedTransport{g: g, next: next, timeout: g.robotsFetchTimeout()}},
			UserAgent:  ua,
			Timeout:    g.robotsFetchTimeout(),
			MaxFetches: fetches,
			Store:      g.RobotsStore,
			Now:        g.clock,
			// The Guard's Logger as it is when the cache logs, so that
			// it may be set after Attach (GuardOf(c).Logger = …).
			Logger: slog.New(guardLog{g}),
		}
		g.ownMade.Store(g.own)
	})
	return g.own
}

// A guardLog is the log handler of the Guard's own robots.txt cache: it
// passes records on to the Guard's Logger as it is at the time, or drops
// them while it is nil.
type guardLog struct{ g *Guard }

func (h guardLog) Enabled(ctx context.Context, l slog.Level) bool {
	return h.g.Logger != nil && h.g.Logger.Handler().Enabled(ctx, l)
}

func (h guardLog) Handle(ctx context.Context, r slog.Record) error {
	if h.g.Logger == nil {
		return nil
	}
	return h.g.Logger.Handler().Handle(ctx, r)
}

func (h guardLog) WithAttrs(attrs []slog.Attr) slog.Handler {
	if h.g.Logger == nil {
		return h
	}
	return h.g.Logger.Handler().WithAttrs(attrs)
}

func (h guardLog) WithGroup(name string) slog.Handler {
	if h.g.Logger == nil {
		return h
	}
	return h.g.Logger.Handler().WithGroup(name)
}

// robotsStats returns the fetch counts of the robots.txt cache in use:
// Cache, or the Guard's own once it is made.
func (g *Guard) robotsStats() policy.FetchStats {
	if g.Cache != nil {
		return g.Cache.Stats()
	}
	if own := g.ownMade.Load(); own != nil {
		return own.Stats()
	}
	return policy.FetchStats{}
}

// robotsTimeout bounds the own cache's robots.txt fetches, redirect hops
// and body included, the waits at the hosts' gates not counted
// (policy.Cache's default; see robotschain.go).
const robotsTimeout = 30 * time.Second

// agent returns the product token robots.txt is matched for. The token
// of the last User-Agent seen is kept (agentToken), so that a request
// does not parse the same User-Agent again.
func (g *Guard) agent(c *colly.Collector) string {
	ua := g.Agent
	if ua == "" {
		ua = c.UserAgent
	}
	if t := g.token.Load(); t != nil && t.ua == ua {
		return t.token
	}
	t := &agentToken{ua: ua, token: policy.ProductToken(ua)}
	g.token.Store(t)
	return t.token
}

// An agentToken is a User-Agent and its product token.
type agentToken struct{ ua, token string }

func (g *Guard) rateFloor() time.Duration {
	return limitInterval(g.Rate)
}

// limitInterval returns the spacing of starts rate r asks for: zero means
// defaultRate, rate.Inf none (validate refuses negative rates).
func limitInterval(r rate.Limit) time.Duration {
	switch {
	case r == 0:
		return time.Duration(float64(time.Second) / float64(defaultRate))
	case r == rate.Inf || r < 0:
		return 0
	}
	return time.Duration(float64(time.Second) / float64(r))
}

func (g *Guard) backoffBase() time.Duration {
	if g.Backoff > 0 {
		return g.Backoff
	}
	return defaultBackoff
}

func (g *Guard) maxBackoff() time.Duration {
	if g.MaxBackoff > 0 {
		return g.MaxBackoff
	}
	return defaultMaxBackoff
}

func (g *Guard) maxRetries() int {
	switch {
	case g.MaxRetries == 0:
		return defaultMaxRetries
	case g.MaxRetries < 0:
		return 0
	}
	return g.MaxRetries
}

// hostInFlight returns the in-flight places of a host (InFlight).
func (g *Guard) hostInFlight() int {
	return max(g.InFlight, 1)
}

// maxRobotsFailures returns how often in a row robots.txt may fail
// (MaxRobotsFailures).
func (g *Guard) maxRobotsFailures() int {
	if g.MaxRobotsFailures > 0 {
		return g.MaxRobotsFailures
	}
	return defaultMaxRobotsFailures
}

func (g *Guard) maxWait() time.Duration {
	if g.MaxWait > 0 {
		return g.MaxWait
	}
	return defaultMaxWait
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
