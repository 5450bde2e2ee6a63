package policy

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"runtime"
	"slices"
	"sync"
	"time"
)

// A State tells what a cached robots.txt fetch found.
type State uint8

const (
	// StateParsed: robots.txt answered 2xx and its rules apply.
	StateParsed State = iota + 1
	// StateUnavailable: robots.txt answered 4xx (not 429) or redirected
	// too often; everything is allowed (RFC 9309 §2.3.1.3).
	StateUnavailable
	// StateUnreachable: robots.txt answered 429 or 5xx, or the fetch failed
	// (RFC 9309 §2.3.1.4); see Entry for the policy in force.
	StateUnreachable
)

// String implements fmt.Stringer.
func (s State) String() string {
	switch s {
	case StateParsed:
		return "parsed"
	case StateUnavailable:
		return "unavailable"
	case StateUnreachable:
		return "unreachable"
	}
	return "State(" + fmt.Sprint(uint8(s)) + ")"
}

// An Entry is the cached robots.txt state of one origin.
type Entry struct {
	Origin     string    // "https://example.com", "http://example.com:8080"
	Robots     *Robots   // the policy in force; never nil
	State      State     // what the last fetch found
	StatusCode int       // HTTP status of the last fetch; 0 if none arrived
	FetchedAt  time.Time // when the last fetch completed
	Expires    time.Time // when the policy is refreshed next
	RetryAt    time.Time // for StateUnreachable: when robots.txt is tried again
	Stale      bool      // Robots is the last good copy, kept while refreshing fails
	Err        error     // the last fetch's error (a *FetchError) for StateUnreachable or too many redirects; else nil

	// URL is where robots.txt redirected to when the rules in force came
	// from a redirect (RFC 9309 §2.3.1.2); empty when they came from the
	// origin's own /robots.txt. RobotsURL returns either.
	URL string

	// Failures counts the consecutive fetches, ending with the last one,
	// that found robots.txt unreachable; 0 when the last fetch gave a
	// verdict (StateParsed or StateUnavailable).
	Failures int
}

// RobotsURL returns the URL the rules in force came from: the origin's
// /robots.txt, or where it redirected to. Relative Sitemap lines resolve
// against it.
func (e Entry) RobotsURL() string {
	if e.URL != "" {
		return e.URL
	}
	return e.Origin + "/robots.txt"
}

// The Cache's fixed limits. Each cites the rule it implements.
const (
	// unreachableLimit: RFC 9309 §2.3.1.4 and
	// docs/robots-semantics.md#unreachable: after robots.txt has been
	// unreachable for "a reasonably long period of time (for example, 30
	// days)", the last good copy is used, or, with none, everything is
	// allowed.
	unreachableLimit = 30 * 24 * time.Hour
	// maxTTL: RFC 9309 §2.4: a cached robots.txt SHOULD NOT be used for
	// more than 24 hours unless it is unreachable.
	maxTTL = 24 * time.Hour
	// minTTL is the shortest lifetime Cache-Control can set (no-store,
	// no-cache, max-age=0 mean "refetch after minTTL"), so that a site
	// whose server marks everything uncacheable is not asked for
	// robots.txt before every page.
	minTTL = time.Hour
)

// A Cache fetches, parses and caches robots.txt per origin (scheme, host
// and port; see [Origin]), following RFC 9309 §2.3–§2.4 and Google's
// documented behaviour.
//
// The zero Cache is ready to use. Every field is optional; its zero value
// is documented. A Cache is safe for concurrent use by multiple goroutines;
// its fields must not be changed after its first use.
//
// At most one fetch per origin runs at a time, however many goroutines ask,
// and at most MaxFetches over all origins. An expired policy that is a
// verdict about the site is served while one refresh runs in the
// background. A refresh that fails keeps the last good copy in force.
// robots.txt is never treated as allowing everything because it could not
// be fetched, except as RFC 9309 §2.3.1.4 permits after 30 days.
type Cache struct {
	// Client sends the robots.txt requests, so that its transport, proxy
	// and timeout apply. The Cache uses a shallow copy of it without the
	// cookie jar and with its own CheckRedirect (at most 5 redirects, to
	// any host; RFC 9309 §2.3.1.2); Client itself is not changed. If nil, a
	// client with the default transport is used.
	//
	// A fetch runs on a context no look-up can cancel, so an error of
	// Client that matches context.Canceled is its transport's decision to
	// abandon the fetch (the crawl that asked for it ended, say), not an
	// answer of the site: nothing is stored or counted, the look-ups
	// waiting for it get that error (a *FetchError), and the next look-up
	// fetches again.
	Client *http.Client

	// UserAgent is the User-Agent header sent for robots.txt. If empty,
	// the Client's default is sent.
	UserAgent string

	// Timeout bounds one robots.txt fetch as a whole: every redirect hop
	// and the body included. If zero, 30s. It runs from the moment the
	// fetch starts, not while the fetch waits its turn (see MaxFetches). A
	// fetch that times out makes robots.txt unreachable.
	Timeout time.Duration

	// TTL is how long a fetched policy is used before it is fetched again,
	// when the response has no Cache-Control max-age. If zero, 24h
	// (RFC 9309 §2.4). A Cache-Control max-age replaces it, clamped to
	// [1h, max(TTL, 24h)]; no-store, no-cache and max-age=0 mean 1h.
	TTL time.Duration

	// RetryMin and RetryMax bound the wait before robots.txt is tried
	// again while it is unreachable: RetryMin after the first failure,
	// doubling with each further failure up to RetryMax. If zero, 1 min
	// and 1 h. A Retry-After field sent with the failed response (RFC 9110
	// §10.2.3; see [RetryAfter]) replaces the doubling and is honoured as
	// sent: neither RetryMin nor RetryMax applies to it, and a wait beyond
	// 24 h is kept too. Entry.RetryAt tells the caller when that is.
	RetryMin, RetryMax time.Duration

	// MaxFetches is the most robots.txt fetches that start at once, over
	// all origins. Fetches beyond it wait their turn, first come first
	// served, without a goroutine each; a fetch's Timeout starts when it
	// starts, not while it waits. If zero, min(64, max(8, 2*GOMAXPROCS)):
	// 8 up to 4 CPUs, 16 on 8, 64 from 32 on, with GOMAXPROCS read at the
	// Cache's first use.
	//
	// A fetch that has not ended a quarter of its Timeout after it started
	// (a server that answers slowly or redirects slowly, or Client's
	// transport waiting for a per-host rate limit) gives its place up to
	// the next fetch in line and goes on until its Timeout. So origins
	// that stall cannot hold robots.txt up for every other origin, and at
	// most 5×MaxFetches fetches run at once. Client must not look
	// robots.txt up in this Cache while it sends a robots.txt request: that
	// look-up might wait for a fetch queued behind its own.
	MaxFetches int

	// MaxEntries is the number of origins the default store keeps; the
	// least recently used is forgotten first. If zero, 10,000. It is not
	// used when Store is set. A cached origin holds its compiled policy
	// and a record: about 4.2 KB for the median robots.txt of the
	// project's corpus and 21 KB on average over it
	// (BenchmarkCachedPolicyMemory).
	MaxEntries int

	// Store keeps the cache's records. If nil, an in-memory store bounded
	// by MaxEntries is used.
	Store Store

	// Now returns the current time. If nil, time.Now is used. Tests set it
	// to a fake clock.
	Now func() time.Time

	// Logger, if set, is told about each fetch: "robots.txt fetched"
	// (Info; origin, state, status, expires, and url when robots.txt
	// redirected) when it gave a verdict, "robots.txt unreachable" (Warn;
	// origin, status or error, failures, next_fetch, stale when the last
	// good copy stays in force) when it failed (RFC 9309 §2.3.1.4). If
	// nil, nothing is logged.
	Logger *slog.Logger

	counts fetchCounts // Stats

	once     sync.Once
	client   *http.Client
	store    Store
	allowAll *Robots // shared, immutable
	denyAll  *Robots // shared, immutable

	maxFetches int // MaxFetches or its default

	// idleFor, if set, replaces fetcherIdle (tests).
	idleFor time.Duration

	// running counts the fetch goroutines at work (not idle ones), so
	// tests can wait for the fetches and their refreshes to end.
	running sync.WaitGroup

	// mu guards flights, queue, fetchers, idle and the ended and released
	// fields of every flight.
	mu       sync.Mutex
	flights  map[string]*flight // by origin; the fetch queued or in progress
	queue    []*flight          // flights waiting for a fetch goroutine, oldest first
	fetchers int                // fetch slots taken (flights running, not released); at most maxFetches
	idle     []chan *flight     // fetch goroutines waiting for a flight (see fetcher), latest last
}

// A flight is one robots.txt fetch that any number of look-ups wait for.
type flight struct {
	origin string
	ctx    context.Context // the starting look-up's values, without its cancellation
	done   chan struct{}   // closed when rec or abandoned is set
	rec    Record
	// abandoned is the error of a fetch its Client abandoned (see
	// Cache.Client): rec is then not a result.
	abandoned *FetchError

	// Guarded by the Cache's mu.
	ended    bool // finish ran
	released bool // the fetch stalled and gave its slot up (see release)
}

func (c *Cache) init() {
	c.once.Do(func() {
		c.client = fetchClient(c.Client)
		c.store = c.Store
		if c.store == nil {
			c.store = newMemStore(orDefault(c.MaxEntries, 10_000))
		}
		c.allowAll = &Robots{}
		c.denyAll = disallowAll()
		c.maxFetches = orDefault(c.MaxFetches, min(64, max(8, 2*runtime.GOMAXPROCS(0))))
	})
}

func orDefault[T int | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

func (c *Cache) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

// Get returns the entry for the origin of u (absolute http or https URL).
// Get never returns an Entry with a nil Robots. err is non-nil only when the
// returned policy is not a verdict about the site: robots.txt is unreachable
// and there is no usable copy (err is a *FetchError; Robots disallows all
// until Entry.RetryAt), or ctx ended first (err is ctx.Err()).
// Robots also disallows all, with an error that is neither, when u has no
// origin (the error wraps [ErrNoOrigin]) or the Store cannot be read.
//
// Get fetches robots.txt when the origin is not cached, or when its entry
// has expired and holds no verdict; it then waits for that fetch, which
// it shares with every other look-up of the origin. When ctx ends first,
// Get returns at once and the fetch goes on for the others. An expired
// entry that holds a verdict is returned at once, and one refresh starts
// in the background.
//
// The status rules (RFC 9309 §2.3.1, docs/robots-semantics.md#status-codes):
//   - 2xx: the body's first 500 KiB are parsed: [StateParsed].
//   - 3xx: up to 5 redirects are followed, to any host; the rules found
//     apply to the origin of u. More, or a loop: as 404.
//   - 4xx except 429: everything is allowed: [StateUnavailable].
//   - 429, 5xx, network errors, timeouts, bodies cut short:
//     [StateUnreachable]. Robots disallows all and robots.txt is tried
//     again at RetryAt: when the response's Retry-After says (RFC 9110
//     §10.2.3, exactly as sent; see [RetryAfter]), else after RetryMin
//     doubling to RetryMax. If an earlier fetch gave a verdict, that last
//     good copy stays in force instead (Entry.Stale, err == nil). After 30
//     days of failures without a good copy, everything is allowed
//     (err == nil). Entry.Failures counts the failed fetches in a row.
//
// An unreachable site is never cached as allowed.
//
// A fetch may wait for one of the Cache's MaxFetches fetch slots before it
// starts; the look-ups waiting for it still return when their ctx ends.
func (c *Cache) Get(ctx context.Context, u *url.URL) (Entry, error) {
	c.init()
	origin, err := Origin(u)
	if err != nil {
		return Entry{Robots: c.denyAll}, err
	}
	rec, ok, err := c.store.Load(ctx, origin)
	if err != nil {
		return Entry{Origin: origin, Robots: c.denyAll}, fmt.Errorf("%w: %s: %w", ErrStore, origin, err)
	}
	now := c.now()
	if ok {
		e, verdict := c.entry(origin, rec, now)
		if now.Before(rec.Expires) {
			return e, errOf(e, verdict)
		}
		if verdict {
			// RFC 9309 §2.4 allows the cached copy to be served while
			// it is refreshed.
			c.start(ctx, origin)
			return e, nil
		}
	}
	if err := ctx.Err(); err != nil {
		return Entry{Origin: origin, Robots: c.denyAll}, err
	}
	f := c.start(ctx, origin)
	select {
	case <-f.done:
		if f.abandoned != nil {
			return Entry{Origin: origin, Robots: c.denyAll}, f.abandoned
		}
		e, verdict := c.entry(origin, f.rec, c.now())
		return e, errOf(e, verdict)
	case <-ctx.Done():
		return Entry{Origin: origin, Robots: c.denyAll}, ctx.Err()
	}
}

// errOf returns the error Get reports with e: e.Err when e holds no
// verdict about the site.
func errOf(e Entry, verdict bool) error {
	switch {
	case verdict:
		return nil
	case e.Err == nil: // a Store that lost the error
		return &FetchError{URL: e.Origin + "/robots.txt", StatusCode: e.StatusCode}
	}
	return e.Err
}

// Peek returns the cached entry for the origin of u without fetching.
// ok is false when the origin is not cached, u has no origin or the Store
// cannot be read.
func (c *Cache) Peek(u *url.URL) (Entry, bool) {
	c.init()
	origin, err := Origin(u)
	if err != nil {
		return Entry{}, false
	}
	rec, ok, err := c.store.Load(context.Background(), origin)
	if err != nil || !ok {
		return Entry{}, false
	}
	e, _ := c.entry(origin, rec, c.now())
	return e, true
}

// entry turns a record into the entry in force at now. verdict reports
// whether its policy is a verdict about the site rather than the
// disallow-all of an unreachable site.
func (c *Cache) entry(origin string, rec Record, now time.Time) (e Entry, verdict bool) {
	e = Entry{
		Origin:     origin,
		State:      rec.State,
		StatusCode: rec.StatusCode,
		FetchedAt:  rec.FetchedAt,
		Expires:    rec.Expires,
		RetryAt:    rec.RetryAt,
		Failures:   rec.Failures,
	}
	if rec.GoodState == StateParsed {
		e.URL = rec.URL // no string built per look-up: see RobotsURL
	}
	if rec.Err != nil {
		e.Err = rec.Err
	}
	switch {
	case rec.State == StateParsed || rec.State == StateUnavailable:
		e.Robots = c.good(rec) // the copy just fetched
	case rec.State != StateUnreachable:
		// Not a state this package writes: a damaged record fails closed.
	case rec.GoodState != 0:
		// Google: the cached copy is kept longer when refreshing
		// fails.
		e.Robots = c.good(rec)
		e.Stale = e.Robots != nil
	case now.Sub(rec.FailingSince) > unreachableLimit:
		// RFC 9309 §2.3.1.4: unreachable for more than 30 days and no
		// cached copy: the crawler MAY treat robots.txt as unavailable.
		e.Robots = c.allowAll
	}
	if e.Robots == nil {
		// RFC 9309 §2.3.1.4: the crawler MUST assume complete disallow.
		e.Robots = c.denyAll
		return e, false
	}
	return e, true
}

// good returns the policy of a record's last good copy, or nil if the
// record has none.
func (c *Cache) good(rec Record) *Robots {
	switch {
	case rec.GoodState == StateUnavailable:
		return c.allowAll
	case rec.GoodState != StateParsed:
		return nil
	case rec.Robots != nil:
		return rec.Robots
	default:
		return Parse(rec.Body)
	}
}

// start returns the flight for origin, queued or in progress, starting one
// if there is none. The fetch runs on a context that no caller can cancel
// (it keeps ctx's values), bounded by the Cache's Timeout from the moment
// it starts.
//
// At most maxFetches fetch goroutines run; a flight beyond them waits in
// the queue, without a goroutine, until one of them is free.
func (c *Cache) start(ctx context.Context, origin string) *flight {
	c.mu.Lock()
	defer c.mu.Unlock()
	if f, ok := c.flights[origin]; ok {
		return f
	}
	if c.flights == nil {
		c.flights = make(map[string]*flight)
	}
	f := &flight{origin: origin, ctx: context.WithoutCancel(ctx), done: make(chan struct{})}
	c.flights[origin] = f
	if c.fetchers >= c.maxFetches {
		c.queue = append(c.queue, f)
		return f
	}
	c.fetchers++
	c.launch(f)
	return f
}

// fetcherIdle is how long a fetch goroutine that ran out of flights waits
// for a new one before it ends: a crawl that meets new origins one after
// the other reuses its goroutines (and their grown stacks) rather than
// starting one per fetch.
const fetcherIdle = 50 * time.Millisecond

// launch runs f on an idle fetch goroutine, or on a new one. c.mu must be
// held.
func (c *Cache) launch(f *flight) {
	c.running.Add(1)
	if n := len(c.idle); n > 0 {
		next := c.idle[n-1]
		c.idle[n-1] = nil
		c.idle = c.idle[:n-1]
		next <- f // buffered: its goroutine takes it
		return
	}
	go c.fetcher(f)
}

// fetcher is a fetch goroutine: it runs f, then the queued flights in turn
// until the queue is empty, and then the flights launch hands it, until
// none came for fetcherIdle; then it ends.
func (c *Cache) fetcher(f *flight) {
	var next chan *flight // where launch hands this goroutine a flight
	var idle *time.Timer
	for {
		for f != nil {
			cur := f // f changes below, maybe before the timer's func runs
			stall := time.AfterFunc(c.timeout()/4, func() { c.release(cur) })
			c.run(f)
			stall.Stop()
			f = c.finish(f)
		}
		if next == nil {
			next = make(chan *flight, 1)
		}
		c.mu.Lock()
		c.idle = append(c.idle, next)
		c.running.Done() // idle; launch counts it again
		c.mu.Unlock()
		wait := orDefault(c.idleFor, fetcherIdle)
		if idle == nil {
			idle = time.NewTimer(wait)
		} else {
			idle.Reset(wait)
		}
		select {
		case f = <-next:
			if !idle.Stop() {
				select { // a timer of the pre-Go 1.23 kind fired meanwhile
				case <-idle.C:
				default:
				}
			}
			continue
		case <-idle.C:
		}
		c.mu.Lock()
		i := slices.Index(c.idle, next)
		if i >= 0 {
			c.idle = slices.Delete(c.idle, i, i+1)
		}
		c.mu.Unlock()
		if i >= 0 {
			return
		}
		f = <-next // launch took this goroutine as its timer fired
	}
}

// release gives the fetch slot of f up, a fetch that has run for a quarter
// of its Timeout: the next queued flight starts on a fetch goroutine of its
// own, and f's goroutine runs no queued flight once f has ended. A fetch lives at most its
// Timeout, and a slot passes on at most every quarter of it, so at most
// 5×maxFetches fetches run at once.
func (c *Cache) release(f *flight) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if f.ended || f.released {
		return
	}
	f.released = true
	if len(c.queue) == 0 {
		c.queue = nil
		c.fetchers--
		return
	}
	next := c.queue[0]
	c.queue[0] = nil
	c.queue = c.queue[1:]
	c.launch(next)
}

func (c *Cache) timeout() time.Duration { return orDefault(c.Timeout, 30*time.Second) }

// finish ends the flight f, which has run: it removes f, so that a later
// look-up finds its stored record or starts a new flight, and then wakes
// f's waiters. It returns the next queued flight for the calling fetch
// goroutine, or nil when there is none; the goroutine then waits for one
// (see fetcher).
func (c *Cache) finish(f *flight) *flight {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.flights, f.origin)
	f.ended = true
	close(f.done)
	if f.released {
		return nil // its slot went on to another fetch
	}
	if len(c.queue) == 0 {
		c.queue = nil // release the backing array
		c.fetchers--
		return nil
	}
	next := c.queue[0]
	c.queue[0] = nil
	c.queue = c.queue[1:]
	return next
}

// run performs a flight: it fetches robots.txt and stores the new record
// in f.rec and the Store.
func (c *Cache) run(f *flight) {
	ctx, origin := f.ctx, f.origin
	old, ok, err := c.store.Load(ctx, origin)
	if err != nil {
		old, ok = Record{}, false
	}
	if ok && c.now().Before(old.Expires) {
		// A flight that ended after our caller's look-up has just
		// stored this record; it is fresh, so it is not fetched again.
		f.rec = old
		return
	}
	if l, isLeaser := c.store.(Leaser); isLeaser {
		rec, fresh, release, err := l.Lease(ctx, origin)
		switch {
		case err == nil && release == nil && fresh:
			// Another member of the fleet fetched it meanwhile.
			f.rec = rec
			return
		case release != nil:
			defer release()
		}
		// On an error the store is down, or its lease holder silent for
		// too long: fetch without the lease.
	}
	timeout := c.timeout()
	fctx, cancel := context.WithTimeout(ctx, timeout)
	slow := c.warnSlow(origin, timeout)
	o := fetch(fctx, c.client, origin, c.UserAgent, c.now)
	slow.Stop()
	cancel()
	if o.err != nil && errors.Is(o.err.Err, context.Canceled) {
		// Abandoned by the Client's transport (ctx cannot be cancelled):
		// no answer of the site, so nothing is stored.
		f.abandoned, f.rec = o.err, old
		if l := c.Logger; l != nil {
			l.Debug("robots.txt fetch abandoned", "origin", origin, "err", o.err.Err)
		}
		return
	}
	if o.err != nil && errors.Is(o.err.Err, context.DeadlineExceeded) && ctx.Err() == nil {
		// The fetch's own timeout, not the caller's: say which, and its
		// value, rather than the bare "context deadline exceeded".
		o.err.Err = fmt.Errorf("no answer within %v (the robots.txt fetch's timeout): %w", timeout, o.err.Err)
	}
	f.rec = c.update(old, ok, o, c.now())
	_ = c.store.Save(ctx, origin, f.rec) // documented on Store.Save
	c.logFetch(origin, f.rec)
	c.counts.add(origin, f.rec)
}

// warnSlow logs, at Warn, that the fetch of origin's robots.txt has had no
// answer for a sixth of its timeout (5 s of the default 30 s), so that a
// robots.txt that never answers is not silent until it times out. The
// caller stops the returned timer when the fetch ends.
func (c *Cache) warnSlow(origin string, timeout time.Duration) interface{ Stop() bool } {
	l := c.Logger
	if l == nil || !l.Enabled(context.Background(), slog.LevelWarn) {
		return noTimer{}
	}
	after := timeout / 6
	return time.AfterFunc(after, func() {
		l.LogAttrs(context.Background(), slog.LevelWarn, "robots.txt slow",
			slog.String("origin", origin), slog.Duration("waited", after.Round(time.Millisecond)),
			slog.Duration("timeout", timeout.Round(time.Millisecond)))
	})
}

// noTimer is the timer of a fetch nobody logs.
type noTimer struct{}

func (noTimer) Stop() bool { return false }

// logFetch logs the outcome of a fetch of origin's robots.txt, rec.
func (c *Cache) logFetch(origin string, rec Record) {
	level, msg := slog.LevelInfo, "robots.txt fetched"
	if rec.State == StateUnreachable {
		level, msg = slog.LevelWarn, "robots.txt unreachable"
	}
	l := c.Logger
	if l == nil || !l.Enabled(context.Background(), level) {
		return
	}
	attrs := []slog.Attr{slog.String("origin", origin)}
	if rec.StatusCode != 0 {
		attrs = append(attrs, slog.Int("status", rec.StatusCode))
	}
	if rec.State != StateUnreachable {
		attrs = append(attrs, slog.String("state", rec.State.String()), slog.Time("expires", rec.Expires.Round(time.Millisecond)))
		if rec.URL != "" {
			attrs = append(attrs, slog.String("url", rec.URL))
		}
		l.LogAttrs(context.Background(), level, msg, attrs...)
		return
	}
	if rec.Err != nil {
		attrs = append(attrs, slog.String("error", rec.Err.Error()))
	}
	// next_fetch is when robots.txt is asked for again; until then the
	// origin's pages wait or fail (RFC 9309 §2.3.1.4). The host's own
	// pause, which the failure may also start, is the Guard's to log.
	attrs = append(attrs, slog.Int("failures", rec.Failures), slog.Time("next_fetch", rec.RetryAt.Round(time.Millisecond)))
	if rec.GoodState != 0 {
		attrs = append(attrs, slog.Bool("stale", true))
	}
	l.LogAttrs(context.Background(), level, msg, attrs...)
}

// update returns the record that follows old (present if ok) after a fetch
// that ended at now with outcome o.
func (c *Cache) update(old Record, ok bool, o outcome, now time.Time) Record {
	rec := Record{State: o.state, StatusCode: o.status, FetchedAt: now, Err: o.err}
	switch o.state {
	case StateParsed:
		rec.GoodState, rec.Body, rec.Robots, rec.URL = StateParsed, o.body, Parse(o.body), o.url
		rec.Expires = now.Add(c.lifetime(o))
	case StateUnavailable:
		rec.GoodState = StateUnavailable
		rec.Expires = now.Add(c.lifetime(o))
	default: // StateUnreachable
		if ok {
			rec.GoodState, rec.Body, rec.Robots, rec.URL = old.GoodState, old.Body, old.Robots, old.URL
		}
		rec.Failures, rec.FailingSince = 1, now
		if ok && old.State == StateUnreachable {
			rec.Failures, rec.FailingSince = old.Failures+1, old.FailingSince
		}
		rec.RetryAt = now.Add(c.backoff(rec.Failures, o))
		rec.Expires = rec.RetryAt
	}
	return rec
}

// lifetime returns how long a verdict is used before robots.txt is fetched
// again.
//
// RFC 9309 §2.4: crawlers MAY use cache control and SHOULD NOT use a
// cached copy for more than 24 hours; Google: max-age may lengthen or
// shorten the cache time.
func (c *Cache) lifetime(o outcome) time.Duration {
	ttl := orDefault(c.TTL, maxTTL)
	if !o.hasMaxAge {
		return ttl
	}
	return min(max(o.maxAge, min(minTTL, ttl)), max(ttl, maxTTL))
}

// backoff returns the wait before robots.txt is tried again after the n-th
// consecutive failure.
//
// RFC 9110 §10.2.3: a Retry-After sent with the failure is honoured as
// sent (see [RetryAfter]: at least 1s, at most 100 years, so that adding
// it to a time cannot overflow); it is neither raised to RetryMin nor cut
// to RetryMax or 24 h. Without one, Google: robots.txt is retried until a
// non-server-error status arrives, and a 503 results in fairly frequent
// retrying: RetryMin after the first failure, doubling up to RetryMax.
func (c *Cache) backoff(n int, o outcome) time.Duration {
	if o.hasRetry {
		return o.retryAfter
	}
	lo := orDefault(c.RetryMin, time.Minute)
	hi := max(orDefault(c.RetryMax, time.Hour), lo)
	d := lo
	for i := 1; i < n && d < hi; i++ {
		if d > hi/2 {
			return hi // doubling would pass hi, or overflow
		}
		d *= 2
	}
	return min(d, hi)
}

// A FetchError records a failed robots.txt fetch.
type FetchError struct {
	URL        string // the robots.txt URL
	StatusCode int    // 0 if no response was received
	Err        error  // the underlying error, if any
}

// Error implements error.
func (e *FetchError) Error() string {
	s := "policy: robots.txt " + e.URL
	if e.StatusCode != 0 {
		s += ": " + fmt.Sprint(e.StatusCode)
		if t := http.StatusText(e.StatusCode); t != "" {
			s += " " + t
		}
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns the underlying error, for errors.Is and errors.As.
func (e *FetchError) Unwrap() error { return e.Err }
