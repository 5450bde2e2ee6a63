package sitemap

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/robotsmw/robotsmw/policy"
)

// Defaults of the Walker's options.
const (
	// DefaultMaxDepth is the deepest index nesting followed when
	// Options.MaxDepth is zero: a Sitemap line is depth 0, the children of
	// an index one deeper. The protocol means one level; other
	// readers allow 3 to 11 (docs/sitemaps.md#indexes).
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
	// DefaultMaxURLs bounds the page URLs one walk passes on when
	// Options.MaxURLs is zero: a site may list 50,000 × 50,000, and a
	// hostile one would make any walk without a bound hold its duplicate
	// check for billions of URLs. The check costs at most 15 bytes a URL:
	// 15 MB at this bound.
	DefaultMaxURLs = 1_000_000
	// DefaultWarnSize is the size of a sitemap file, after decompression,
	// past which it is reported as large when Options.WarnSize is zero:
	// 32 MiB, Scrapy's DOWNLOAD_WARNSIZE.
	DefaultWarnSize = 32 << 20
)

// Fixed limits of a walk.
const (
	// maxForeignHosts bounds the hosts whose robots.txt one walk reads to
	// check a cross-submission (sitemaps.org); entries on further hosts
	// are out of scope. It keeps a sitemap listing many hosts from making
	// the walk fetch many robots.txt files.
	maxForeignHosts = 64
	// defaultRetries is how often a sitemap answered 429 or 503 is asked
	// again (docs/sitemaps.md, case 100), after Retry-After or 2 s, then 4
	// s, when Options.Retries is zero.
	defaultRetries = 2
	// maxRetryWait is the longest Retry-After waited for; a longer one
	// fails the sitemap with the wait in the error.
	maxRetryWait = 10 * time.Minute
)

// Options are a walk's scope, filters and bounds. The zero value follows
// the protocol: the sitemaps robots.txt lists (else /sitemap.xml), indexes
// up to DefaultMaxDepth, pages of the site walked or cross-submitted by
// robots.txt, no filter, at most DefaultMaxURLs pages.
type Options struct {
	// MaxDepth is the deepest index nesting followed; zero means
	// DefaultMaxDepth. Children past it are not fetched; each is
	// counted in Stats.Skipped.Limit and reported with ErrTooDeep, and
	// Stats.Cut has CutDepth.
	MaxDepth int
	// MaxSitemaps bounds the sitemap files one walk fetches; zero means
	// DefaultMaxSitemaps. Sitemaps past it are counted in
	// Stats.Skipped.Limit, and Stats.Cut has CutSitemaps.
	MaxSitemaps int
	// MaxURLs bounds the page URLs one walk passes on; the others are
	// counted in Stats.Dropped.Limit, no further sitemap is fetched, and
	// Stats.Cut has CutURLs. Zero means DefaultMaxURLs (a million); a
	// negative value means no bound, for a site that is trusted: the
	// duplicate check holds up to 15 bytes for each URL passed on.
	MaxURLs int
	// Sitemaps, if set, are the sitemaps the walk starts from instead of
	// the Sitemap lines of robots.txt (Scrapy's sitemap_urls, Crawlee's
	// Sitemap.load): URLs of sitemaps or sitemap indexes, relative ones
	// resolved against the site given to Walk. There is no fallback, and
	// robots.txt is still read to check each sitemap and page URL. A
	// given sitemap's scope is its own host, as if that host's robots.txt
	// listed it.
	//
	// A URL whose path is /robots.txt (and that has no query) names a
	// robots.txt instead, as in Scrapy: the walk starts from its Sitemap
	// lines, read through Robots like the site's own, with that host's
	// scope; if it lists none, nothing is walked from it (no fallback).
	Sitemaps []string
	// Follow, if set, keeps only the index children (sitemaps listed by a
	// sitemap index) whose path and query match one of its patterns
	// (Scrapy's sitemap_follow); the others are not fetched and are
	// counted in Stats.Skipped.Filter. The sitemaps the walk starts from
	// are always fetched. Patterns are written like Include's.
	Follow []string
	// Rules, if set, route the pages (Scrapy's sitemap_rules): the first
	// rule whose Pattern matches a page's path and query gives the page
	// its Tag (Entry.Tag), which Guard.Seed of the middleware package puts
	// in the request's Ctx; a page no rule matches is dropped and counted
	// in Stats.Dropped.Filter. Rules apply after Include and Exclude.
	Rules []Rule
	// Alternates also passes on the hreflang alternates of each page
	// (<xhtml:link rel="alternate">, Scrapy's sitemap_alternate_links), as
	// pages of their own with Entry.AlternateOf set, under the same scope,
	// filters, rules, robots.txt check and duplicate check, each on its
	// own merits (whether or not the page that lists it passed).
	Alternates bool
	// NoFallback turns off the fetch of /sitemap.xml when robots.txt lists
	// no sitemap (or there is none). A fallback that is missing (404 and
	// the like) is not an error.
	NoFallback bool
	// Strict adds the path rule of sitemaps.org to the scope: a sitemap at
	// /catalog/sitemap.xml lists only URLs of the same scheme, host and port
	// under /catalog/ (the query of the sitemap's URL is ignored,
	// docs/sitemaps.md, cases 91-94); an index only children under its
	// directory (Google). By default only the host and port must match, so
	// that the https pages of a site whose sitemap is still served over http
	// are kept.
	Strict bool
	// Since, if set, drops the pages whose lastmod is before it. Pages
	// without a lastmod are kept.
	Since time.Time
	// Filter, if set, sees every entry the walk reads, before any other
	// filter (Scrapy's sitemap_filter): the pages of a urlset, feed or
	// text sitemap and the children of a sitemap index (Entry.Index),
	// with the fields the Reader fills in (LastMod, ChangeFreq, Priority,
	// Alternates, Images, Videos, News; the Reader keeps no other
	// element). Loc is absolute, resolved against the sitemap's URL after
	// its redirects and normalised as the walk passes URLs on; the hrefs
	// of Alternates are as written. Filter returns the entry to keep,
	// changed or not, and true; or false to drop it, counted in
	// Stats.Dropped.Filter (a page) or Stats.Skipped.Filter (an index
	// child). A dropped page takes its hreflang alternates with it.
	//
	// A changed Loc (a relative one resolved against the sitemap's URL)
	// replaces the one read; the entry then goes through scope, Follow
	// or Since, Include, Exclude and Rules, robots.txt and the duplicate
	// check like any other: a Filter cannot take the walk off the site.
	// Changed Alternates are the ones passed on (Options.Alternates).
	// Index, Tag and AlternateOf are the Walker's: changes to them are
	// ignored.
	//
	// Filter is called from the walk's fetch goroutines, up to
	// Concurrency at once: it must be safe for concurrent use. Nil keeps
	// every entry.
	Filter func(Entry) (Entry, bool)
	// MaxSize bounds the bytes of one sitemap file, read from the
	// network and after decompression (Reader.MaxSize and
	// MaxCompressedSize); zero means DefaultMaxSize (50 MiB,
	// sitemaps.org). A file past it is read up to it, then fails with
	// ErrTooLarge, and Stats.Cut has CutSize.
	MaxSize int64
	// WarnSize is the size, after decompression, past which a sitemap
	// file is reported as large (Scrapy's DOWNLOAD_WARNSIZE): counted in
	// Stats.Large, flagged in its SitemapReport (Large, Size) and logged
	// at Warn ("sitemap large"), though read as usual. Zero means
	// DefaultWarnSize (32 MiB); a negative value turns it off.
	WarnSize int64
	// Include, if set, keeps only the pages whose path and query match
	// one of its patterns; Exclude drops those that match one of its.
	// Patterns are written as robots.txt paths (RFC 9309 §2.2.3): a
	// prefix such as "/blog/", where '*' stands for any characters and a
	// final '$' ends the match: "/*.pdf$".
	Include, Exclude []string
	// Concurrency is the number of sitemaps fetched at once, never two
	// from one host; zero means DefaultConcurrency.
	Concurrency int
	// Interval is the least time between two requests of the walk to one
	// host, robots.txt fetches included; each also starts no sooner than
	// the host's Crawl-delay after the end of the previous response, and
	// one host has one request in flight at a time. Zero means
	// DefaultInterval; negative means no pacing of the Walker's own, for
	// a Client that paces (middleware.Guard.Transport).
	Interval time.Duration
	// Timeout bounds the fetch and read of one sitemap file, counted
	// from when its request is sent (each retry's anew): the waits before
	// it goes — the host's turn and Crawl-delay, a paced Client's own, a
	// Retry-After — do not count, so a host whose Crawl-delay is longer
	// than Timeout is walked at its pace rather than failed; nor does the
	// time Walk's fn takes (see Walk). Zero means DefaultTimeout.
	Timeout time.Duration
	// Retries is how often a sitemap answered 429 or 503 is fetched
	// again, after its Retry-After (or 2 s, then 4 s); zero means 2. A
	// negative value means never: for a Client that retries by itself, as
	// Guard.Transport of the middleware package does (Guard.Seed sets it).
	Retries int
	// OnSitemap, if set, is told about each sitemap the walk fetched,
	// found unchanged, failed on or left out for robots.txt, once it was
	// read (the pages of a large file are passed on while it is read,
	// streamBatch at a time: the last of them after OnSitemap); from the
	// goroutine that calls the walk's callback. For progress displays
	// and logs.
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
	Size        int64  // bytes read of it, after decompression
	Large       bool   // Size is past Options.WarnSize
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
	// what was read of it). A sitemap past Options.WarnSize is logged at
	// Warn ("sitemap large"), one robots.txt disallows at Debug ("sitemap
	// disallowed"), and so is each page robots.txt disallows, which is
	// dropped ("page disallowed": url, sitemap, agent, and the group,
	// line and rule that decided). If nil, nothing is logged.
	Logger *slog.Logger

	Options

	// Seams for tests; nil means the real clock and sleep.
	now   func() time.Time
	sleep func(ctx context.Context, d time.Duration) error

	ownOnce sync.Once
	own     *policy.Cache
	memo    Validators
	pacing  hostPacing // per-host pacing (pacing.go)
}

// Walk walks the sitemaps of site, an http or https URL of the site (any
// path; a URL without a scheme is read as https), and calls fn with each
// page entry, its Loc made absolute. fn is called from one goroutine at a
// time, in no particular order across sitemaps, and in file order within
// one. A sitemap's pages are passed on as it is read, in batches of 1,000
// (so an interrupted walk of a large file has passed on what it read), and
// a slow fn slows the walk down (back-pressure): a walk holds at most a
// few batches of entries per sitemap in flight, never the whole site.
// When fn falls behind while a file is still being read, the rest of that
// file is read into memory as it comes over the network (at most MaxSize)
// and its response closed, then parsed at fn's pace: a fetch never keeps
// a response open while it waits for fn, whose own requests may need the
// place a paced Client keeps for the host while a response is open (a
// Guard's one request in flight per host).
//
// The walk starts from robots.txt (fetched once through Robots): its
// Sitemap lines resolved against the robots.txt URL after its redirects,
// duplicates and junk removed (FromRobots), or /sitemap.xml if there are
// none; or, with Options.Sitemaps, from those sitemaps only (resolved
// against site; a robots.txt among them gives its Sitemap lines).
// Options.Filter sees each entry read first. An index's children are walked up to MaxDepth (those
// Options.Follow lets through); each sitemap URL,
// and each URL a redirect went through, is fetched at most once a walk, so
// self-listing indexes and cycles end.
//
// Scope (sitemaps.org): only pages of the site walked are passed on: pages
// on a host whose robots.txt announced the sitemap or an index it came
// from. A sitemap on such a host may also list pages on another port or
// another host of its registrable domain (public suffix list) whose own
// robots.txt lists the sitemap or one of its indexes (cross-submission:
// read for at most 64 hosts, 4 ports of a host name, a walk). A sitemap
// on another host, one a robots.txt line named, is read for the site's
// pages only: the pages of its own host are dropped, so that a robots.txt
// cannot make the walk seed an internal address. A sitemap of the site
// that redirects to a related host (http to https, example.com to www) is
// still the site's; one that redirects to another port that is not a
// scheme's default is read as a sitemap on another host. An index child on
// another host than the index and the announcing hosts is not fetched.
// Strict adds the path rule. URLs are compared after the normalisation of
// policy.Origin (case, default port, trailing dot, IDN), and passed on
// in that form. A page URL robots.txt disallows for Agent is dropped too;
// one whose robots.txt is unreachable is passed on, for the crawler to
// decide. Stats counts every drop by reason, and Stats.Cut names the
// bounds that cut the walk.
//
// The Walker fetches what robots.txt names, wherever it points: run it over
// a client that refuses private addresses (the netguard package) when the
// site is not trusted.
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
		pages:   newFingerprints(),
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
	if wk.cutHosts.Load() {
		wk.stats.Cut |= CutHosts
	}
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
	if !normalize(u) {
		return nil, fmt.Errorf("sitemap: site %q has no valid host", site)
	}
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
		// Options.Timeout bounds robots.txt too (zero: the Cache's own
		// default).
		w.own = &policy.Cache{Client: w.paced(w.client()), UserAgent: w.UserAgent, Timeout: w.Timeout, Now: w.now, Logger: w.Logger}
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
func (w *Walker) maxSize() int64         { return orDefault(w.MaxSize, DefaultMaxSize) }
func (w *Walker) maxSitemaps() int       { return orDefault(w.MaxSitemaps, DefaultMaxSitemaps) }
func (w *Walker) concurrency() int       { return orDefault(w.Concurrency, DefaultConcurrency) }
func (w *Walker) timeout() time.Duration { return orDefault(w.Timeout, DefaultTimeout) }

// maxURLs returns the bound on the pages a walk passes on; 0 for none.
func (w *Walker) maxURLs() int {
	if w.MaxURLs < 0 {
		return 0
	}
	return orDefault(w.MaxURLs, DefaultMaxURLs)
}

// warnSize returns the size past which a sitemap is large; 0 for none.
func (w *Walker) warnSize() int64 {
	if w.WarnSize < 0 {
		return 0
	}
	return orDefault(w.WarnSize, DefaultWarnSize)
}

func orDefault[T int | int64 | time.Duration](v, def T) T {
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
	size        int64    // bytes read, after decompression
	partial     bool     // a batch of pages of a sitemap still being read
	kept        int      // pages kept from the file, batches passed on before included
	pages       []Entry  // in scope and filtered; Loc absolute
	weight      int      // the bytes of pages' strings, roughly (see streamWeight)
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
	pages   *fingerprints // the page URLs passed on
	fetched int           // sitemap fetches started
	// cut holds the sitemaps being read of which a batch was not passed
	// on in full (MaxURLs, the callback's error): their validators are
	// not kept.
	cut map[string]bool

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
	cutHosts atomic.Bool // a cross-submission look-up was refused: CutHosts

	// buffers holds emptied page slices of sitemaps passed on, for the
	// next sitemaps read: a walk of 50,000-entry files then grows one
	// slice per fetch in flight, not one per file.
	buffers struct {
		mu   sync.Mutex // guards free
		free [][]Entry
	}
}

// pageBuffer returns an empty slice for the pages of a sitemap.
func (wk *walk) pageBuffer() []Entry {
	wk.buffers.mu.Lock()
	defer wk.buffers.mu.Unlock()
	if n := len(wk.buffers.free); n > 0 {
		b := wk.buffers.free[n-1]
		wk.buffers.free = wk.buffers.free[:n-1]
		return b
	}
	return nil
}

// recycle keeps the page slice b for a later sitemap, its entries cleared.
func (wk *walk) recycle(b []Entry) {
	if cap(b) == 0 {
		return
	}
	clear(b)
	wk.buffers.mu.Lock()
	defer wk.buffers.mu.Unlock()
	if len(wk.buffers.free) <= wk.w.concurrency() {
		wk.buffers.free = append(wk.buffers.free, b[:0])
	}
}

// start finds the walk's first sitemaps: Options.Sitemaps, or the
// Sitemap lines of robots.txt.
func (wk *walk) start(base *url.URL) error {
	if len(wk.w.Sitemaps) > 0 {
		return wk.startFrom(base)
	}
	return wk.startRobots(base, !wk.w.NoFallback)
}

// startRobots queues the sitemaps the robots.txt of base's origin lists,
// read through the walk's cache, or, with fallback, /sitemap.xml if it
// lists none. Only the end of the walk's context is returned; a robots.txt
// that cannot be read is counted as a failed sitemap.
func (wk *walk) startRobots(base *url.URL, fallback bool) error {
	robotsURL := &url.URL{Scheme: base.Scheme, Host: base.Host, Path: "/robots.txt"}
	e, err := wk.robotsFor(wk.ctx, robotsURL)
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
	owners := []string{owner}
	lines := FromRobots(final, e.Robots.Sitemaps())
	wk.remember(owner, lines)
	if fk := hostKey(final); fk != owner && related(final.Hostname(), base.Hostname()) {
		// example.com/robots.txt redirected to www.example.com: the
		// site's robots.txt is www's too.
		owners = append(owners, fk)
		wk.remember(fk, lines)
	}
	if len(lines) == 0 && fallback {
		u := base.Scheme + "://" + base.Host + "/sitemap.xml"
		wk.offer(job{url: u, host: owner, owners: owners, chain: []string{u}, fallback: true}, &wk.stats.Skipped)
	}
	for _, s := range lines {
		u, _ := url.Parse(s)
		wk.offer(job{url: s, host: hostKey(u), owners: owners, chain: []string{s}}, &wk.stats.Skipped)
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
		wk.stats.Cut |= CutDepth
		wk.fail(&FetchError{URL: j.url, Err: ErrTooDeep})
	case !wk.markVisited(j.url):
		skipped.Duplicate++
	case wk.full():
		skipped.Limit++
		wk.stats.Cut |= CutURLs
	case wk.fetched >= wk.w.maxSitemaps():
		skipped.Limit++
		wk.stats.Cut |= CutSitemaps
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
	n := wk.w.maxURLs()
	return n > 0 && wk.stats.URLs >= n
}

// seen reports whether u was fetched, or queued, in this walk.
func (wk *walk) seen(u string) bool {
	u = canonical(u)
	wk.visited.mu.Lock()
	defer wk.visited.mu.Unlock()
	return wk.visited.m[u]
}

// markVisited records u as fetched in this walk; false if it was already.
func (wk *walk) markVisited(u string) bool {
	u = canonical(u)
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
	if errors.Is(fe.Err, ErrTooLarge) {
		wk.stats.Cut |= CutSize
	}
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
		if res.partial {
			// A batch of a sitemap still being read.
			if fnErr == nil && wk.ctx.Err() == nil {
				if fnErr = wk.batch(res); fnErr != nil {
					wk.cancelRest()
				}
			} else {
				wk.recycle(res.pages)
			}
			continue
		}
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
	large := wk.large(res.size)
	if large {
		st.Large++
	}
	if res.err != nil {
		wk.fail(res.err)
	}
	st.Dropped.add(res.dropped)
	st.Skipped.add(res.skipped)
	if f, l := wk.w.OnSitemap, wk.w.Logger; (f != nil || l != nil) && (res.read || res.notModified || res.err != nil || res.skipped.Robots > 0) {
		r := SitemapReport{URL: res.job.url, Depth: res.job.depth, Index: res.index,
			Pages: res.kept, Children: len(res.children), NotModified: res.notModified,
			Disallowed: !res.read && res.skipped.Robots > 0, Size: res.size, Large: large}
		if res.err != nil {
			r.Err = res.err
		}
		logSitemap(l, r, wk.w.warnSize())
		if f != nil {
			f(r)
		}
	}
	if len(res.children) > 0 {
		// Room for the children at once: an index of 50,000 would
		// otherwise grow its host's queue by doubling.
		h := res.job.host
		wk.queues[h] = slices.Grow(wk.queues[h], len(res.children))
	}
	host := ""
	for _, c := range res.children {
		u, _ := url.Parse(c)
		if k := hostKey(u); k != host {
			host = k // one string for the children on one host
		}
		chain := append(res.job.chain[:len(res.job.chain):len(res.job.chain)], c)
		wk.offer(job{url: c, host: host, depth: res.job.depth + 1, owners: res.job.owners, chain: chain}, &st.Skipped)
	}
	passed, err := wk.pass(res.pages)
	wk.recycle(res.pages)
	if wk.cut[res.job.url] {
		passed = false
		delete(wk.cut, res.job.url)
	}
	if err != nil {
		return err
	}
	if res.validators != nil && passed {
		wk.w.validators().put(res.job.url, res.validators)
	}
	if wk.full() {
		// No further sitemap is fetched: what is queued is skipped.
		for _, q := range wk.queues {
			st.Skipped.Limit += len(q)
			st.Cut |= CutURLs
		}
		wk.cancelRest()
	}
	return nil
}

// large reports whether a sitemap of size bytes is past WarnSize.
func (wk *walk) large(size int64) bool {
	ws := wk.w.warnSize()
	return ws > 0 && size > ws
}

// batch passes on a batch of pages of a sitemap still being read.
func (wk *walk) batch(res result) error {
	passed, err := wk.pass(res.pages)
	wk.recycle(res.pages)
	if !passed {
		if wk.cut == nil {
			wk.cut = make(map[string]bool)
		}
		wk.cut[res.job.url] = true
	}
	return err
}

// pass passes pages on, up to MaxURLs and without duplicates (by
// policy.NormalizeEscapes: "/~a" after "/%7Ea" is one); it reports
// whether each was (or was a duplicate), and returns the callback's error
// or the end of the walk's context.
func (wk *walk) pass(pages []Entry) (bool, error) {
	st := &wk.stats
	for i, e := range pages {
		if wk.full() {
			st.Dropped.Limit += len(pages) - i
			st.Cut |= CutURLs
			return false, nil
		}
		if !wk.pages.add(policy.NormalizeEscapes(e.Loc)) {
			st.Dropped.Duplicate++
			continue
		}
		if err := wk.fn(e); err != nil {
			return false, err
		}
		st.URLs++
		if err := wk.ctx.Err(); err != nil {
			return false, err
		}
	}
	return true, nil
}

// logSitemap logs r to l, if l is set and enabled at the record's level;
// warnSize is the walk's WarnSize.
func logSitemap(l *slog.Logger, r SitemapReport, warnSize int64) {
	level, msg := slog.LevelInfo, "sitemap read"
	switch {
	case r.Err != nil:
		level, msg = slog.LevelWarn, "sitemap failed"
	case r.Disallowed:
		level, msg = slog.LevelDebug, "sitemap disallowed"
	case r.Large:
		level, msg = slog.LevelWarn, "sitemap large"
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
	if r.Large {
		attrs = append(attrs, slog.Int64("size", r.Size), slog.Int64("warn_size", warnSize))
	}
	if r.Err != nil {
		attrs = append(attrs, slog.String("error", r.Err.Error()))
	}
	l.LogAttrs(context.Background(), level, msg, attrs...)
}

// logDisallowed logs page u of sitemap, which robots.txt r disallows, with
// the rule that decided, if the walk's Logger is enabled at Debug: the
// page is dropped, and the log names it.
func (wk *walk) logDisallowed(sitemap string, u *url.URL, r *policy.Robots) {
	l := wk.w.Logger
	if l == nil || r == nil || !l.Enabled(wk.ctx, slog.LevelDebug) {
		return
	}
	d := r.Explain(wk.agent, policy.ResolveDots(u))
	attrs := []slog.Attr{slog.String("url", u.Redacted()), slog.String("sitemap", sitemap),
		slog.String("agent", wk.agent), slog.String("group", d.Agent)}
	if rule := d.Rule; rule != nil {
		attrs = append(attrs, slog.Int("line", rule.Line), slog.String("rule", strings.TrimPrefix(rule.String(), fmt.Sprintf("line %d: ", rule.Line))))
	}
	l.LogAttrs(wk.ctx, slog.LevelDebug, "page disallowed", attrs...)
}

// errSeen ends a redirect to a URL this walk fetched already.
var errSeen = errors.New("sitemap: redirect to a sitemap fetched already")

// errHopDisallowed ends a redirect to a URL robots.txt disallows.
var errHopDisallowed = errors.New("sitemap: redirect to a URL robots.txt disallows")
