package robotsmw

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"time"

	"github.com/gocolly/colly/v2"
	"github.com/gocolly/colly/v2/queue"

	"github.com/robotsmw/robotsmw/policy"
	"github.com/robotsmw/robotsmw/sitemap"
)

// Seeding configures Guard.Seed. Its zero value does the right thing: the
// sitemaps robots.txt lists (else /sitemap.xml), in the protocol's scope,
// every page once, fed to the collector as fast as it takes them.
type Seeding struct {
	// Options are the walk's start (the sitemaps of robots.txt, or given
	// Sitemaps, which may name a robots.txt), scope, filters (a per-entry
	// Filter that sees pages and index children and may drop or rewrite
	// them, lastmod since, include and exclude patterns, URLs per site),
	// index children to Follow, Rules that tag pages (the tag goes to the
	// request's Ctx under SitemapTagKey), hreflang Alternates, fallback,
	// depth, and the size limit (MaxSize) and warning size (WarnSize:
	// logged to Guard.Logger, counted in SeedStats.Large) of each sitemap
	// file; see sitemap.Options.
	sitemap.Options

	// Queue, if set, receives the pages (Queue.AddURL) instead of the
	// collector: for crawls that run through colly's queue. When the
	// queue is full (colly.ErrQueueFull), Seed waits until it has room.
	// colly's Queue.Run returns as soon as the queue is empty and runs
	// again only after Queue.Stop, so either let the queue hold the site
	// (MaxSize 0) and Seed before Run, or Seed in a goroutine and call
	// Run, then Stop, until Seed has returned and the queue is empty:
	//
	//	seeded := make(chan struct{})
	//	go func() { defer close(seeded); g.Seed(c, site) }()
	//	for done := false; ; {
	//		select {
	//		case <-seeded:
	//			done = true // read before IsEmpty: nothing comes after
	//		default:
	//		}
	//		if !q.IsEmpty() {
	//			q.Run(c)
	//			c.Wait()
	//			q.Stop()
	//			continue
	//		}
	//		if done {
	//			break
	//		}
	//		time.Sleep(10 * time.Millisecond) // Seed is reading a sitemap
	//	}
	//
	// examples/queue runs such a loop for the links its pages add. With
	// Rules or Alternates set, Seed adds pages with Queue.AddRequest
	// (their tag goes in the request's context), which in colly v2.3.0
	// blocks for good once the queue has run: then let the queue hold the
	// site (MaxSize 0) and Seed before Run.
	Queue *queue.Queue

	// Window bounds the requests Seed started on an asynchronous
	// collector that have not ended yet (sent, waiting for their host or
	// deferred); Seed waits for one to end before it visits the next page,
	// so a host paused for an hour holds Seed for that hour.
	// Zero means enough for the host to be busy without a page waiting
	// longer than MaxWait/2 at Rate: Rate×MaxWait/2, between 8 and 256
	// (256 without a rate). A synchronous collector visits one page at a
	// time and needs none. A page whose request an OnRequest callback
	// aborts frees its place at once if that callback was registered
	// before Seed's first call on the collector; one registered later is
	// not seen, and its requests hold their places until the Guard
	// forgets them: register callbacks that abort before calling Seed.
	Window int
}

// SeedStats is what Guard.Seed did: the walk's counts (sitemap.Stats:
// sitemaps read, URLs found, dropped by scope, filter, robots.txt,
// duplicate and limit, failures) and what became of the URLs.
type SeedStats struct {
	sitemap.Stats
	// Queued counts the pages the collector (or Queue) accepted.
	Queued int
	// Visited counts the pages the collector refused because it had
	// visited them already: reached through links while Seed ran, or
	// seeded before; with Guard.CleanParams, on a synchronous collector,
	// also those visited in their canonical form. (Dropped.Duplicate counts
	// the duplicates within the sitemaps.) With a Queue as the target it stays 0: the collector
	// refuses visited pages later, when the queue runs.
	Visited int
	// Rejected counts the pages the collector refused for another reason
	// (AllowedDomains, URL filters, MaxDepth, MaxRequests); Rejection is
	// the first such error.
	Rejected  int
	Rejection error
}

// Seed walks the sitemaps of site (a URL of the site; without a scheme,
// https is assumed) and visits each page they list once through c, which
// must have g attached: each page then gets the Guard's checks, pacing and
// outcomes like any other request.
//
// The sitemaps are fetched through the Guard (Transport over the transport
// c had before Attach, the Guard's robots.txt cache, c's UserAgent), so
// robots.txt is fetched once, a sitemap robots.txt disallows is not
// fetched, and sitemap fetches share each host's schedule with the pages:
// together they never go faster than Rate. A page robots.txt disallows is
// not visited: it is counted in SeedStats (Dropped.Robots) and logged to
// Guard.Logger at Debug ("page disallowed", with the rule and its line).
// See sitemap.Walker.Walk for
// the walk: its scope, the loops it ends, its retries, and the error
// (*sitemap.WalkError) returned when some sitemaps failed after the others
// were walked.
//
// Only pages of the site are visited: a sitemap on another host (one an
// attacker's robots.txt may name, on an internal address) is read for the
// site's pages only; fetch through netguard's transport (see the package
// documentation) so that it is not even read.
//
// Seed scales to sites of millions of URLs: it holds the entries of a few
// sitemap files at a time, never the site (a file it is still reading
// when the collector falls behind is read to its end, at most MaxSize in
// memory, so that its fetch gives its host's place back for the pages;
// see sitemap.Walker.Walk), and starts no goroutine per URL.
// A walk passes at most Seeding.MaxURLs pages on (sitemap.DefaultMaxURLs,
// a million, by default) and SeedStats.Cut names each bound that cut it;
// its duplicate check costs at most 15 bytes a URL. colly's own visited
// set (its Storage) still keeps every page visited, as for any crawl.
// On an asynchronous collector it keeps at most Seeding.Window requests of
// its own in flight and waits for one to end before it visits the next;
// a synchronous collector visits the pages one by one. So Seed returns
// when every page was handed over; call c.Wait (or run the queue) for the
// crawl to finish. The crawl's end (c.Context) ends Seed too.
//
// Options are in g.Seeding, read at each Seed. The sitemaps' ETag and
// Last-Modified are kept by the Guard once all their pages were handed
// over, so a later Seed of the same site skips the sitemaps that did not
// change. Seed is safe for concurrent use.
func (g *Guard) Seed(c *colly.Collector, site string) (SeedStats, error) {
	if c == nil {
		return SeedStats{}, errors.New("robotsmw: Seed: the collector is nil")
	}
	t := guarded(c)
	if t == nil || t.g != g {
		return SeedStats{}, errors.New("robotsmw: Seed: the Guard is not attached to the collector")
	}
	w := g.seedWalker(c, t.next)
	ctx := collectorContext(c)
	var st SeedStats
	var feed func(e sitemap.Entry) error
	switch {
	case g.Seeding.Queue != nil:
		feed = func(e sitemap.Entry) error { return addToQueue(ctx, g.Seeding.Queue, e) }
	case c.Async:
		g.seeds.watch(c)
		run := g.seeds.open(g.seedWindow())
		feed = func(e sitemap.Entry) error { return g.seeds.request(ctx, run, c, e) }
	default:
		feed = func(e sitemap.Entry) error { return c.Request("GET", e.Loc, nil, seedContext(nil, e), nil) }
	}
	ws, err := w.Walk(ctx, site, func(e sitemap.Entry) error {
		ferr := feed(e)
		var av *colly.AlreadyVisitedError
		switch {
		case ferr == nil:
			st.Queued++
		case errors.As(ferr, &av), errors.Is(ferr, ErrDuplicate):
			// Visited already, as such or (CleanParams) in canonical form.
			st.Visited++
		case notSent(ferr) || errors.Is(ferr, errQueue):
			st.Rejected++
			if st.Rejection == nil {
				st.Rejection = ferr
			}
		case ctx.Err() != nil && errors.Is(ferr, ctx.Err()):
			return ferr
		default:
			// The outcome of a synchronous visit: colly's and the
			// Guard's to report.
			st.Queued++
		}
		return nil
	})
	st.Stats = ws
	return st, err
}

// seedWalker returns a sitemap walker for one Seed through collector c:
// Guard.Transport over next, the transport c had before Attach, the Guard's
// robots.txt cache, c's UserAgent, the Guard's sitemap validators, and the
// Seeding options as they are now. The transport retries 429 and 503
// itself, so the walker does not (Options.Retries < 0), and paces each
// host, so the walker does not either (Options.Interval < 0).
func (g *Guard) seedWalker(c *colly.Collector, next http.RoundTripper) *sitemap.Walker {
	opts := g.Seeding.Options
	opts.Retries = -1
	opts.Interval = -1 // the Guard paces every request of the walk
	return &sitemap.Walker{
		Client:     &http.Client{Transport: g.Transport(next)},
		Robots:     g.cacheFor(c, nil),
		UserAgent:  c.UserAgent,
		Agent:      g.agent(c),
		Validators: &g.seedValidators,
		Options:    opts,
		Logger:     g.Logger,
	}
}

// RobotsCache returns the robots.txt cache the Guard uses: Cache, or the
// Guard's own. Give it to a sitemap.Walker whose Client goes through
// Guard.Transport, so that robots.txt is fetched once for both. The
// Guard's own cache is made by the first call (or request, or Seed), with
// the collector's UserAgent as it is then; its fields may be set before
// the crawl starts: RetryMin and RetryMax bound the wait before an
// unreachable robots.txt is tried again, besides its host's pause
// (Guard.Backoff, or the site's Retry-After).
func (g *Guard) RobotsCache() *policy.Cache {
	return g.cacheFor(nil, nil)
}

// seedWindow returns the number of requests Seed keeps in flight on an
// asynchronous collector.
func (g *Guard) seedWindow() int {
	if g.Seeding.Window > 0 {
		return g.Seeding.Window
	}
	floor := g.rateFloor() // the spacing Rate asks for; 0 without a rate
	if floor == 0 {
		return 256
	}
	return int(min(256, max(8, g.maxWait()/2/floor)))
}

// errQueue marks a URL the queue refused.
var errQueue = errors.New("robotsmw: queue refused the URL")

// addToQueue adds the page e to q, waiting while q is full: from 10 ms,
// doubling to 1 s, until ctx ends.
func addToQueue(ctx context.Context, q *queue.Queue, e sitemap.Entry) error {
	wait := 10 * time.Millisecond
	add := func() error { return q.AddURL(e.Loc) }
	if e.Tag != "" || e.AlternateOf != "" {
		u, err := url.Parse(e.Loc)
		if err != nil {
			return errors.Join(errQueue, err)
		}
		add = func() error { return q.AddRequest(&colly.Request{URL: u, Method: "GET", Ctx: seedContext(nil, e)}) }
	}
	for {
		err := add()
		if !errors.Is(err, colly.ErrQueueFull) {
			if err != nil {
				return errors.Join(errQueue, err)
			}
			return nil
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		}
		wait = min(2*wait, time.Second)
	}
}
