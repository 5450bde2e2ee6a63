package sitemap

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/robotsmw/robotsmw/policy"
)

// Defaults of the Walker's options.
const (
	// DefaultMaxDepth is the deepest index nesting followed when
	// Options.MaxDepth is zero: a Sitemap line is depth 0, the children of
	// an index one deeper. The protocol means one level; sitemap.md §4.3
	// finds 3-5 ample.
	DefaultMaxDepth = 5
	// DefaultMaxSitemaps bounds the sitemap files fetched by one walk when
	// Options.MaxSitemaps is zero: as many as one index may list.
	DefaultMaxSitemaps = 50_000
	// DefaultConcurrency is the number of sitemaps fetched at once, each
	// from another host, when Options.Concurrency is zero.
	DefaultConcurrency = 4
	// DefaultTimeout bounds the fetch and read of one sitemap file when
	// Options.Timeout is zero.
	DefaultTimeout = 2 * time.Minute
)

// Fixed limits of a walk.
const (
	// maxForeignHosts bounds the hosts whose robots.txt one walk reads to
	// check a cross-submission (sitemaps.org); entries on further hosts
	// are out of scope. It keeps a sitemap listing many hosts from making
	// the walk fetch many robots.txt files.
	maxForeignHosts = 64
	// defaultRetries is how often a sitemap answered 429 or 503 is asked
	// again (sitemap.md #100), after Retry-After or 2 s, then 4 s, when
	// Options.Retries is zero.
	defaultRetries = 2
	// maxRetryWait is the longest Retry-After waited for; a longer one
	// fails the sitemap with the wait in the error.
	maxRetryWait = 10 * time.Minute
)

// Options are a walk's scope, filters and bounds. The zero value follows
// the protocol: the sitemaps robots.txt lists (else /sitemap.xml), indexes
// up to DefaultMaxDepth, entries on the sitemap's host or cross-submitted
// by robots.txt, no filter, no cap on URLs.
type Options struct {
	// MaxDepth is the deepest index nesting followed; zero means
	// DefaultMaxDepth. Children past it are not fetched; each is
	// counted in Stats.Skipped.Limit and reported with ErrTooDeep.
	MaxDepth int
	// MaxSitemaps bounds the sitemap files one walk fetches; zero means
	// DefaultMaxSitemaps. Sitemaps past it are counted in
	// Stats.Skipped.Limit.
	MaxSitemaps int
	// MaxURLs bounds the page URLs one walk passes on; the others are
	// counted in Stats.Dropped.Limit and no further sitemap is fetched.
	// Zero means no bound.
	MaxURLs int
	// NoFallback turns off the fetch of /sitemap.xml when robots.txt lists
	// no sitemap (or there is none). A fallback that is missing (404 and
	// the like) is not an error.
	NoFallback bool
	// Strict adds the path rule of sitemaps.org to the scope: a sitemap at
	// /catalog/sitemap.xml lists only URLs of the same scheme, host and
	// port under /catalog/ (the query of the sitemap's URL is ignored,
	// sitemap.md #91-#94); an index only children under its directory
	// (Google). By default only the host and port must match, so that the
	// https pages of a site whose sitemap is still served over http are
	// kept.
	Strict bool
	// Since, if set, drops the pages whose lastmod is before it. Pages
	// without a lastmod are kept.
	Since time.Time
	// Include, if set, keeps only the pages whose path and query match
	// one of its patterns; Exclude drops those that match one of its.
	// Patterns are written as robots.txt paths (RFC 9309 §2.2.3): a
	// prefix such as "/blog/", where '*' stands for any characters and a
	// final '$' ends the match: "/*.pdf$".
	Include, Exclude []string
	// Concurrency is the number of sitemaps fetched at once, never two
	// from one host; zero means DefaultConcurrency.
	Concurrency int
	// Timeout bounds the fetch and read of one sitemap file, waits for
	// the host's politeness included; zero means DefaultTimeout.
	Timeout time.Duration
	// Retries is how often a sitemap answered 429 or 503 is fetched
	// again, after its Retry-After (or 2 s, then 4 s); zero means 2. A
	// negative value means never: for a Client that retries by itself, as
	// Guard.Transport of the middleware package does (Guard.Seed sets it).
	Retries int
	// OnSitemap, if set, is told about each sitemap the walk fetched,
	// found unchanged, failed on or left out for robots.txt, after it
	// was read and before its pages are passed on; from the goroutine
	// that calls the walk's callback. For progress displays and logs.
	OnSitemap func(SitemapReport)
}

// A SitemapReport tells Options.OnSitemap about one sitemap.
type SitemapReport struct {
	URL         string // as listed (robots.txt or an index), resolved
	Depth       int    // 0 for a Sitemap line of robots.txt or the fallback
	Index       bool   // it listed sitemaps
	Pages       int    // page entries kept from it (before duplicates and MaxURLs)
	Children    int    // sitemaps it listed, in scope
	NotModified bool   // a conditional refetch found it unchanged
	Disallowed  bool   // robots.txt disallows it: not fetched
	Err         error  // a *FetchError if it failed or was read only in part
}

// A Walker finds a site's sitemaps and walks them: the Sitemap lines of
// its robots.txt, the indexes among them and their children, and passes
// the page URLs they list on, resolved, in scope, filtered and without
// duplicates. Every sitemap fetch is checked against robots.txt first.
//
// Give it the Guard's transport (middleware.Guard.Transport) as Client and
// the Guard's robots.txt cache as Robots, and the walk is paced per host
// and backs off like the crawl; the middleware's Guard.Seed does that.
//
// The zero Walker is ready to use. Set the fields before the first Walk;
// a Walker is then safe for concurrent use, and remembers across its walks
// the validators (ETag, Last-Modified) of the sitemaps it read, so that a
// later walk refetches them conditionally and skips the unchanged ones. A
// Walker must not be copied after first use.
type Walker struct {
	// Client fetches the sitemaps; nil means http.DefaultClient. Its
	// CheckRedirect is kept (wrapped to check each hop).
	Client *http.Client
	// Robots is the robots.txt cache the Sitemap lines come from and the
	// sitemap and page URLs are checked against. Nil means a cache of the
	// Walker's own over Client.
	Robots *policy.Cache
	// UserAgent is sent with each sitemap request; empty means the
	// Client's default.
	UserAgent string
	// Agent is the product token matched against robots.txt
	// (RFC 9309 §2.2.1); empty means the product token of UserAgent.
	Agent string
	// Validators keeps the sitemaps' ETag and Last-Modified for
	// conditional refetches; nil means the Walker's own.
	Validators *Validators
	// Logger, if set, is told about each sitemap the walk fetched, found
	// unchanged or failed on, when OnSitemap would be: "sitemap read"
	// (Info; url, depth, and pages and children for an index, or
	// not_modified) or "sitemap failed" (Warn; url, depth, error, and
	// what was read of it). A sitemap robots.txt disallows is logged at
	// Debug ("sitemap disallowed"). If nil, nothing is logged.
	Logger *slog.Logger

	Options

	// Seams for tests; nil means the real clock and sleep.
	now   func() time.Time
	sleep func(ctx context.Context, d time.Duration) error

	ownOnce sync.Once
	own     *policy.Cache
	memo    Validators
}

// Walk walks the sitemaps of site, an http or https URL of the site (any
// path; a URL without a scheme is read as https), and calls fn with each
// page entry, its Loc made absolute. fn is called from one goroutine at a
// time, in no particular order across sitemaps; a slow fn slows the walk
// down (back-pressure) without holding any connection open: each sitemap
// is read in full before its entries are passed on, so a walk holds the
// entries of at most Concurrency+1 sitemap files, never the whole site.
//
// The walk starts from robots.txt (fetched once through Robots): its
// Sitemap lines resolved against the robots.txt URL after its redirects,
// duplicates and junk removed (FromRobots), or /sitemap.xml if there are
// none. An index's children are walked up to MaxDepth; each sitemap URL,
// and each URL a redirect went through, is fetched at most once a walk, so
// self-listing indexes and cycles end.
//
// Scope (sitemaps.org): a page or index child on another host than its
// sitemap is dropped, unless that host's robots.txt announced the sitemap
// or an index it came from, or, for a page on another port or another host
// of the sitemap's registrable domain (public suffix list), that host's
// robots.txt lists one of them (cross-submission: read for at most 64
// hosts a walk); Strict adds the path rule. A
// page URL robots.txt disallows for Agent is dropped too; one whose
// robots.txt is unreachable is passed on, for the crawler to decide.
// Stats counts every drop by reason.
//
// A sitemap answered 429 or 503 is fetched again after its Retry-After
// (or 2 s, then 4 s), Retries times at most (twice by default). A sitemap that cannot be fetched or
// read does not end the walk: when any failed, Walk returns a *WalkError
// after the others were walked. An error returned by fn ends the walk and
// is returned as is; so does the end of ctx (ctx.Err()). Stats is valid in
// every case.
func (w *Walker) Walk(ctx context.Context, site string, fn func(Entry) error) (Stats, error) {
	base, err := siteURL(site)
	if err != nil {
		return Stats{}, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	wk := &walk{
		w:       w,
		ctx:     ctx,
		site:    base.Scheme + "://" + base.Host,
		fn:      fn,
		robots:  w.robots(),
		agent:   w.agent(),
		seed:    maphash.MakeSeed(),
		pages:   make(map[uint64]struct{}),
		queues:  make(map[string][]job),
		busy:    make(map[string]bool),
		results: make(chan result, w.concurrency()),
	}
	wk.visited.m = make(map[string]bool)
	wk.announced.m = make(map[string][]string)
	if err := wk.start(base); err != nil {
		return wk.stats, err
	}
	err = wk.run()
	if err == nil && wk.stats.Failed > 0 {
		err = &WalkError{Site: wk.site, Failed: wk.stats.Failed, Errs: wk.errs}
	}
	return wk.stats, err
}

// siteURL parses the site argument of Walk.
func siteURL(site string) (*url.URL, error) {
	s := strings.TrimSpace(site)
	if !strings.Contains(s, "://") {
		s = "https://" + s
	}
	u, err := url.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("sitemap: site %q: %w", site, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("sitemap: site %q is not an http or https URL with a host", site)
	}
	u.Host = strings.ToLower(u.Host)
	return u, nil
}

func (w *Walker) client() *http.Client {
	if w.Client != nil {
		return w.Client
	}
	return http.DefaultClient
}

func (w *Walker) robots() *policy.Cache {
	if w.Robots != nil {
		return w.Robots
	}
	w.ownOnce.Do(func() {
		w.own = &policy.Cache{Client: w.Client, UserAgent: w.UserAgent, Now: w.now, Logger: w.Logger}
	})
	return w.own
}

func (w *Walker) validators() *Validators {
	if w.Validators != nil {
		return w.Validators
	}
	return &w.memo
}

func (w *Walker) agent() string {
	if w.Agent != "" {
		return policy.ProductToken(w.Agent)
	}
	if t := policy.ProductToken(w.UserAgent); t != "" {
		return t
	}
	return "*"
}

func (w *Walker) clock() time.Time {
	if w.now != nil {
		return w.now()
	}
	return time.Now()
}

func (w *Walker) wait(ctx context.Context, d time.Duration) error {
	if w.sleep != nil {
		return w.sleep(ctx, d)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (w *Walker) retries() int {
	switch {
	case w.Retries < 0:
		return 0
	case w.Retries == 0:
		return defaultRetries
	}
	return w.Retries
}

func (w *Walker) maxDepth() int          { return orDefault(w.MaxDepth, DefaultMaxDepth) }
func (w *Walker) maxSitemaps() int       { return orDefault(w.MaxSitemaps, DefaultMaxSitemaps) }
func (w *Walker) concurrency() int       { return orDefault(w.Concurrency, DefaultConcurrency) }
func (w *Walker) timeout() time.Duration { return orDefault(w.Timeout, DefaultTimeout) }

func orDefault[T int | time.Duration](v, def T) T {
	if v > 0 {
		return v
	}
	return def
}

// A job is one sitemap to fetch.
type job struct {
	url      string
	host     string   // hostKey of url
	depth    int      // 0 for a Sitemap line or the fallback
	owners   []string // hosts whose robots.txt announced it or an index it came from
	chain    []string // the sitemap URLs from the Sitemap line down to this one
	fallback bool     // /sitemap.xml, guessed: a missing one is no error
}

// A result is what a worker found in one sitemap.
type result struct {
	job         job
	read        bool        // the file was fetched and read (in full or in part)
	validators  http.Header // a urlset read in full: its response header
	index       bool        // it listed sitemaps
	notModified bool
	pages       []Entry  // in scope and filtered; Loc absolute
	children    []string // index children in scope, absolute
	dropped     Drops
	skipped     Drops
	err         *FetchError
}

// A walk is the state of one Walk. Its fields other than visited and
// announced are used by the goroutine that called Walk only.
type walk struct {
	w      *Walker
	ctx    context.Context
	site   string
	fn     func(Entry) error
	robots *policy.Cache
	agent  string

	stats   Stats
	errs    []*FetchError
	seed    maphash.Seed
	pages   map[uint64]struct{} // hashes of the page URLs passed on
	fetched int                 // sitemap fetches started

	queues  map[string][]job // pending sitemaps by host
	ready   []string         // hosts with pending sitemaps and none in flight
	busy    map[string]bool  // hosts with a sitemap in flight
	running int
	results chan result

	visited struct {
		mu sync.Mutex // guards m
		m  map[string]bool
	}
	announced struct {
		mu sync.Mutex          // guards m
		m  map[string][]string // host → sitemap URLs its robots.txt lists
	}
}

// start finds the walk's first sitemaps from robots.txt.
func (wk *walk) start(base *url.URL) error {
	robotsURL := &url.URL{Scheme: base.Scheme, Host: base.Host, Path: "/robots.txt"}
	e, err := wk.robots.Get(wk.ctx, robotsURL)
	if err != nil {
		if cerr := wk.ctx.Err(); cerr != nil {
			return cerr
		}
		wk.fail(&FetchError{URL: robotsURL.String(), StatusCode: e.StatusCode, Err: err})
		return nil
	}
	wk.markVisited(robotsURL.String())
	final, _ := url.Parse(e.RobotsURL())
	if final == nil {
		final = robotsURL
	}
	wk.markVisited(final.String())
	owner := hostKey(base)
	lines := FromRobots(final, e.Robots.Sitemaps())
	wk.remember(owner, lines)
	if len(lines) == 0 && !wk.w.NoFallback {
		u := base.Scheme + "://" + base.Host + "/sitemap.xml"
		wk.offer(job{url: u, host: owner, owners: []string{owner}, chain: []string{u}, fallback: true}, &wk.stats.Skipped)
	}
	for _, s := range lines {
		u, _ := url.Parse(s)
		wk.offer(job{url: s, host: hostKey(u), owners: []string{owner}, chain: []string{s}}, &wk.stats.Skipped)
	}
	return nil
}

// offer queues j unless it was fetched in this walk or is past a limit.
func (wk *walk) offer(j job, skipped *Drops) {
	switch {
	case wk.seen(j.url):
		skipped.Duplicate++
	case j.depth > wk.w.maxDepth():
		skipped.Limit++
		wk.fail(&FetchError{URL: j.url, Err: ErrTooDeep})
	case !wk.markVisited(j.url):
		skipped.Duplicate++
	case wk.fetched >= wk.w.maxSitemaps(), wk.full():
		skipped.Limit++
	default:
		wk.fetched++
		q := wk.queues[j.host]
		wk.queues[j.host] = append(q, j)
		if len(q) == 0 && !wk.busy[j.host] {
			wk.ready = append(wk.ready, j.host)
		}
	}
}

// full reports whether MaxURLs page URLs were passed on.
func (wk *walk) full() bool {
	return wk.w.MaxURLs > 0 && wk.stats.URLs >= wk.w.MaxURLs
}

// seen reports whether u was fetched, or queued, in this walk.
func (wk *walk) seen(u string) bool {
	wk.visited.mu.Lock()
	defer wk.visited.mu.Unlock()
	return wk.visited.m[u]
}

// markVisited records u as fetched in this walk; false if it was already.
func (wk *walk) markVisited(u string) bool {
	wk.visited.mu.Lock()
	defer wk.visited.mu.Unlock()
	if wk.visited.m[u] {
		return false
	}
	wk.visited.m[u] = true
	return true
}

func (wk *walk) fail(fe *FetchError) {
	wk.stats.Failed++
	if len(wk.errs) < maxWalkErrors {
		wk.errs = append(wk.errs, fe)
	}
}

// run fetches the queued sitemaps, at most Concurrency at once and one
// per host, and passes their pages on.
func (wk *walk) run() error {
	var fnErr error
	for {
		for fnErr == nil && wk.running < wk.w.concurrency() && len(wk.ready) > 0 {
			host := wk.ready[0]
			wk.ready = wk.ready[1:]
			q := wk.queues[host]
			j := q[0]
			if len(q) == 1 {
				delete(wk.queues, host)
			} else {
				q[0] = job{}
				wk.queues[host] = q[1:]
			}
			wk.busy[host] = true
			wk.running++
			go func() { wk.results <- wk.fetch(j) }()
		}
		if wk.running == 0 {
			break
		}
		res := <-wk.results
		wk.running--
		delete(wk.busy, res.job.host)
		if len(wk.queues[res.job.host]) > 0 {
			wk.ready = append(wk.ready, res.job.host)
		}
		if fnErr != nil {
			continue // draining after the walk ended
		}
		if err := wk.ctx.Err(); err != nil {
			fnErr = err
			continue
		}
		fnErr = wk.take(res)
		if fnErr != nil {
			wk.cancelRest()
		}
	}
	if fnErr != nil {
		return fnErr
	}
	return wk.ctx.Err()
}

// cancelRest forgets the sitemaps not yet started.
func (wk *walk) cancelRest() {
	wk.ready = nil
	clear(wk.queues)
}

// take accounts for one fetched sitemap and passes its pages on.
func (wk *walk) take(res result) error {
	st := &wk.stats
	if res.read {
		st.Sitemaps++
	}
	if res.notModified {
		st.NotModified++
	}
	if res.err != nil {
		wk.fail(res.err)
	}
	st.Dropped.add(res.dropped)
	st.Skipped.add(res.skipped)
	if f, l := wk.w.OnSitemap, wk.w.Logger; (f != nil || l != nil) && (res.read || res.notModified || res.err != nil || res.skipped.Robots > 0) {
		r := SitemapReport{URL: res.job.url, Depth: res.job.depth, Index: res.index,
			Pages: len(res.pages), Children: len(res.children), NotModified: res.notModified,
			Disallowed: !res.read && res.skipped.Robots > 0}
		if res.err != nil {
			r.Err = res.err
		}
		logSitemap(l, r)
		if f != nil {
			f(r)
		}
	}
	for _, c := range res.children {
		u, _ := url.Parse(c)
		chain := append(res.job.chain[:len(res.job.chain):len(res.job.chain)], c)
		wk.offer(job{url: c, host: hostKey(u), depth: res.job.depth + 1, owners: res.job.owners, chain: chain}, &st.Skipped)
	}
	passed := true // every page of the sitemap was passed on
	defer func() {
		if res.validators != nil && passed {
			wk.w.validators().put(res.job.url, res.validators)
		}
	}()
	for i, e := range res.pages {
		if wk.full() {
			st.Dropped.Limit += len(res.pages) - i
			passed = false
			break
		}
		h := maphash.String(wk.seed, e.Loc)
		if _, dup := wk.pages[h]; dup {
			st.Dropped.Duplicate++
			continue
		}
		wk.pages[h] = struct{}{}
		if err := wk.fn(e); err != nil {
			passed = false
			return err
		}
		st.URLs++
		if err := wk.ctx.Err(); err != nil {
			passed = false
			return err
		}
	}
	if wk.full() {
		// No further sitemap is fetched: what is queued is skipped.
		for _, q := range wk.queues {
			st.Skipped.Limit += len(q)
		}
		wk.cancelRest()
	}
	return nil
}

// logSitemap logs r to l, if l is set and enabled at the record's level.
func logSitemap(l *slog.Logger, r SitemapReport) {
	level, msg := slog.LevelInfo, "sitemap read"
	switch {
	case r.Err != nil:
		level, msg = slog.LevelWarn, "sitemap failed"
	case r.Disallowed:
		level, msg = slog.LevelDebug, "sitemap disallowed"
	}
	if l == nil || !l.Enabled(context.Background(), level) {
		return
	}
	attrs := []slog.Attr{slog.String("url", r.URL), slog.Int("depth", r.Depth)}
	switch {
	case r.NotModified:
		attrs = append(attrs, slog.Bool("not_modified", true))
	case r.Index:
		attrs = append(attrs, slog.Int("children", r.Children))
	case !r.Disallowed:
		attrs = append(attrs, slog.Int("pages", r.Pages))
	}
	if r.Err != nil {
		attrs = append(attrs, slog.String("error", r.Err.Error()))
	}
	l.LogAttrs(context.Background(), level, msg, attrs...)
}

// errSeen ends a redirect to a URL this walk fetched already.
var errSeen = errors.New("sitemap: redirect to a sitemap fetched already")

// errHopDisallowed ends a redirect to a URL robots.txt disallows.
var errHopDisallowed = errors.New("sitemap: redirect to a URL robots.txt disallows")
