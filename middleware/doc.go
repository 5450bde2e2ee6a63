// Package robotsmw makes a colly collector obey robots.txt (RFC 9309) on
// every hop, pace each host, and turn 429 and 503 responses into back-off,
// without losing requests and without holding colly's threads:
//
//	c := colly.NewCollector(robotsmw.Attach())
//
// or, configured and shared with a clone:
//
//	g := &robotsmw.Guard{Agent: "ExampleBot", Rate: rate.Every(2 * time.Second)}
//	c := colly.NewCollector(colly.UserAgent("ExampleBot/1.0 (+https://example.org/bot)"), g.Attach)
//	d := c.Clone()
//	g.Attach(d) // Clone drops callbacks; the same Guard shares cache and hosts
//
// # What a colly user sees
//
// Every request handed to the collector ends in exactly one final outcome,
// and each attempt on the way is reported where colly reports things:
//
//	outcome      OnError error              sync Visit returns    ErrorHandler  Stats
//	fetched      — (OnResponse as usual)    nil                   —             Pages (Sent)
//	blocked      *DisallowedError           the same error        yes           Blocked
//	             (ErrDisallowed), or an
//	             error wrapping
//	             ErrCrawlDelayTooLong
//	deferred     *DeferredError, Attempt 0  — (async only: a      —             Deferred, Waiting
//	                                        sync request waits)
//	retried      *DeferredError, Attempt n  — (the final outcome  —             Retried, Backoffs
//	                                        once retried)
//	given up     ErrGaveUp or               the same error        yes           GaveUp
//	             ErrRobotsUnreachable
//
// A *DisallowedError also matches colly.ErrRobotsTxtBlocked, so code
// written for colly's own check keeps working. A deferred request that
// colly refuses to send again (MaxRequests reached, a URL filter or
// AllowedDomains refusing the hop it resumes at, MaxDepth) or that the
// crawl's end leaves unsent gets its final outcome, ErrGaveUp wrapping
// colly's reason, in OnError too, from the Guard, before Wait returns. With
// ParseHTTPErrorResponse set, a 429 or 5xx response is delivered to
// OnResponse as the final outcome, as colly does, and not retried (the
// host is still paused and slowed for later requests): a user who asked
// for error pages gets them.
//
// A *[DeferredError] (errors.Is(err, [ErrDeferred])) is the only outcome
// that is not final: the request is sent again at or after its Until (an
// asynchronous collector's retry after the requests then waiting for its
// host, see Guard.MaxRetries), and colly's Wait waits for it. Every other
// error is final ([IsFinal]). colly's own errors (a 404 as "Not Found", an
// AlreadyVisitedError, a URL filter) reach OnError as they always did; they
// are final too. Attempts of one request reach OnError once each, in
// order: an asynchronous collector's Guard never starts the next attempt
// sooner than 50 ms after colly called OnError for the previous one, so
// they arrive in order as long as OnError callbacks return within that
// time; a synchronous collector's attempts reach OnError in order, before
// the final outcome (below).
//
// Attach registers the Guard's OnError callback before yours: pass Attach
// to NewCollector before options that add callbacks, or call g.Attach
// before c.OnError. Call c.Wait() with an asynchronous collector: Visit
// returns while deferred requests wait in the Guard; Wait returns once
// each has its final outcome.
//
// A synchronous collector (Async false) keeps colly's contract: no
// callback runs concurrently with another, nor on a goroutine other than
// the one inside Visit (or Request, queue.Run's threads). Its requests are
// never deferred to the Guard's goroutines; they wait and are retried in
// place, and Visit returns the request's final outcome:
//   - its waits for robots.txt, its host's pause and pacing are not bounded
//     by MaxWait (there is no thread to free: the caller waits for its
//     page either way), and a redirect hop waits for its host too;
//   - a failed attempt (429, 5xx, a network error, a body cut short) is
//     counted (Stats.Retried) and logged ("request retried"), and then the
//     request waits for its host and is sent again inside the same Visit,
//     up to MaxRetries times. This happens inside colly's HTTP client,
//     which holds the collector's LimitRule slot, so OnError gets each
//     failed attempt, with its *DeferredError, once the client returned,
//     right before the final outcome (OnResponse, or OnError): an OnError
//     callback may visit or retry, as it could without the Guard. A
//     request whose body cannot be read again (no GetBody) is not sent
//     again; its outcome is final at once. To see a body cut short before
//     colly does, the Guard reads a response's body (up to MaxBodySize)
//     before colly's OnResponseHeaders callbacks run, so aborting a
//     download there no longer saves its bytes: bound it with MaxBodySize;
//   - each attempt sent again counts against colly's MaxRequests, as
//     Request.Retry does, and so does an asynchronous collector's deferred
//     request each time the Guard hands it back to colly, though it was
//     not sent (colly counts requests, not responses; a host that defers
//     many requests uses MaxRequests up faster): once reached, the request
//     ends with ErrGaveUp wrapping colly.ErrMaxRequests;
//   - the client's request timeout bounds each attempt when it was set
//     before Attach (the Guard enforces it, per attempt and per redirect
//     hop from its gate). Set after Attach, net/http bounds the whole
//     Visit, retries and hops included: a retry or hop that could not be
//     sent before it runs out ends the request with ErrGaveUp naming the
//     client's timeout.
//
// With colly's queue over a synchronous collector, a request that waits
// holds its queue thread; use an asynchronous collector (see Broad
// crawls) where slow hosts must not hold threads.
//
// # What happens to a request
//
// Before colly sends a request (any method, retries included; OnRequest),
// the [Guard]:
//
//  1. Checks robots.txt of the request's origin through a [policy.Cache]
//     (one fetch per origin however many requests wait for it; at most
//     [Guard.MaxRobotsFetches] fetches at once). A disallowed request
//     fails with a *[DisallowedError] naming the deciding rule and its
//     line. Only /robots.txt itself is exempt (RFC 9309 §2.2.2).
//  2. While robots.txt is unreachable (429, 5xx, network error; RFC 9309
//     §2.3.1.4: complete disallow, which is temporary) the request waits
//     until robots.txt is due again, or is deferred if that is further
//     away than [Guard.MaxWait]. It is never let through. Once robots.txt
//     has failed [Guard.MaxRobotsFailures] times in a row, the origin's requests
//     fail at once with [ErrRobotsUnreachable] until it is due again.
//  3. Takes a slot in the host's schedule, after any pause, and waits for
//     it, or is deferred to it if it is further away than MaxWait (the
//     slot stays taken, so deferred requests come back spread out). A host
//     is the host name without scheme or port (Google: the crawl rate
//     applies to "the whole hostname"). The schedule runs at
//     [Guard.Rate], lowered to a Crawl-delay when robots.txt asks for one
//     (not part of RFC 9309; Bing's reading: one request per delay).
//     Crawl-delays above [policy.MaxCrawlDelay] exclude the host with
//     [ErrCrawlDelayTooLong] unless [Guard.ClampCrawlDelay] is set. The
//     Guard's own robots.txt fetches keep the host's pause and spacing
//     too; waiting for their slot never counts against the fetch's
//     timeout, and each redirect hop gets the whole timeout once it may
//     go. Positions are spaced by the host's expected time per request
//     (its smoothed response time and gap) when that is longer, so
//     requests reach a slow host's gate about when it is free.
//
// Right before colly's HTTP client is called (OnRequestHeaders, after any
// LimitRule slot and every OnRequest callback), the host's gate takes the
// request's lease of one of the host's in-flight places ([Guard.InFlight],
// 1 by default), waiting at most MaxWait (then the request is deferred):
// once any pause is over, the start is the interval after the last one,
// and the previous response ended at least the host's gap before — its
// Crawl-delay, counted from the end of the response as Yandex defines
// it ("after loading one page, before starting to load another"), or its
// smoothed response time if that is longer ([Guard.FixedPace] turns that
// off). The lease is given back when the response's body is read to its
// end, fails or is closed, when the request fails or times out, and for a
// redirect when its headers arrive. The schedule lives in the Guard's
// state of each host (a [pace.Local]), or in [Guard.Pacer] if it is set.
//
// The callbacks never abort a request: their verdict travels to the
// transport the Guard installs under colly's HTTP client, which fails the
// request with it before anything is sent. That is what makes colly report
// the outcome to OnError and to Visit. (colly's CacheDir is bypassed for
// such a request.)
//
// Redirect hops are checked inside colly's HTTP client by a redirect
// handler: a hop into a disallowed path is never requested. A hop that
// would have to wait past MaxWait or the collector's request timeout,
// counted from when the first request of the chain passed its gate, is not
// sent either: the request is deferred and resumes at the hop.
//
// # Back-off and retries
//
// The transport classifies each response as it arrives, following Google's
// documented behaviour and RFC 9110:
//   - 429 and 503 pause the whole host. The pause is the response's
//     Retry-After as [policy.RetryAfter] reads it (delta-seconds or an
//     HTTP-date measured against the response's Date; never shortened, at
//     least 1 s), or, without a usable one (none, 0, a past date),
//     [Guard.Backoff] doubled per failure in a row, lengthened by up to a
//     quarter at random, capped at [Guard.MaxBackoff]. A new incident also
//     halves the host's rate (doubles its interval), at most once per
//     interval.
//   - 500, 502, 504, network errors, timeouts and bodies cut short do the
//     same, softer: a sixth of the back-off, and the rate cut to 0.8.
//   - Healthy responses (1xx–3xx, 404, 410) let a cut host recover
//     gradually; other 4xx responses do not change the rate.
//   - A pause voids the host's schedule: requests waiting for a slot wake
//     and take new slots after the pause, so nothing idles once it ends.
//   - A Retry-After beyond 24 hours, on a page or on robots.txt, is never
//     shortened: requests for that host, or origin, fail at once with a
//     final error naming the pause's end.
//
// The failed attempt itself (one of those statuses, which never reaches
// OnResponse; a network error; a body cut short) fails with a
// *DeferredError and is sent again after the pause, up to
// [Guard.MaxRetries] times, then reported with [ErrGaveUp]. A request
// whose method is not idempotent (POST, PATCH; RFC 9110 §9.2.2) is sent
// again only after 429 or 503; after any other failure the server may
// have acted on it, and it is reported with [ErrGaveUp] at once. Retries are
// counted per method and URL, so concurrent requests for the same URL
// share a count, and a count ends only when a response was read to its
// end. colly requests end a little before colly's request timeout, so that
// a timeout reaches OnError as the Guard's typed outcome rather than as
// net/http's untyped timeout text. Should a transport under the Guard be
// too slow to give up for that, OnError gets net/http's text, but the
// Guard acts on its own outcome all the same: the request is retried or
// reported to ErrorHandler and Stats, never lost.
//
// Failures count "in a row" until a healthy response arrives after the
// pause: then the next failure's pause starts from Backoff again, while
// the rate, once cut, recovers one step per five healthy responses. A strike is also forgotten after 30 minutes.
// Cuts never space a host's requests further apart than MaxBackoff or
// 60 s, whichever is shorter (a slower Crawl-delay or Rate still holds).
//
// # Broad crawls
//
// A request of an asynchronous collector waits inside a colly callback at
// most MaxWait (30 s); longer waits are deferred to the Guard's queue, where they cost no goroutine
// until they are due. Waits up to MaxWait hold colly's thread: with the
// queue package, few threads and slow or failing hosts, a MaxWait of a
// second or two keeps the threads moving to other hosts. The Guard's own
// re-sends go around the queue and do not take its threads. A host's state (about 180 bytes) is forgotten once it
// has been quiet for [Guard.IdleTimeout]; hosts that are paused, cut or
// have a Crawl-delay are kept. [Guard.Stats] keeps totals as they happen;
// listing the busiest hosts scans the host table (about 90 ns per host),
// so call it for a progress line, not per request.
//
// # Working with colly
//
// Attach turns colly's own robots.txt check off and keeps it off: colly's
// check fails open on a 5xx robots.txt and skips redirect hops and HEAD.
// NewCollector applies COLLY_IGNORE_ROBOTSTXT after its options, so that
// variable, set to anything but 1, y, yes or true, turns the check back on
// behind the Guard's back. The Guard's transport therefore answers the
// robots.txt requests of colly's own check with an empty robots.txt, which
// colly reads as "allow all", and never sends them. The Guard's own
// robots.txt fetches go through the transport the client had before
// Attach (a WithTransport or SetProxyFunc before Attach: its proxy and TLS
// settings), with their own timeout and redirect rules (RFC 9309
// §2.3.1.2).
//
// Clones share the HTTP client, so the Guard's transport serves a clone
// the Guard was not attached to as well: it admits such requests itself
// (robots.txt, pause, schedule and gate, at most MaxWait), so a forgotten
// Attach fails closed. Such a clone's failures are not retried, nor its
// requests deferred: one that would wait longer than MaxWait fails, final,
// with ErrGaveUp. Its outcomes reach its own OnError callbacks, not
// ErrorHandler; Stats counts its requests as sent, blocked, backed off or
// given up, but not its pages.
//
// A WithTransport, SetProxyFunc or SetClient after Attach replaces the
// Guard's transport. The callbacks then decide alone: they abort what they
// do not admit and report it to ErrorHandler, Stats and the collector's
// OnError callbacks themselves (colly reports nothing for an aborted
// request: Visit returns nil), a request that would wait longer than
// MaxWait is given up (ErrGaveUp) rather than deferred, failures are not
// retried, and colly checks the requests of
// Visit calls made before the first OnRequest against robots.txt itself
// if COLLY_IGNORE_ROBOTSTXT asks it to. Install such transports before
// Attach:
//
//	c := colly.NewCollector()
//	c.SetProxyFunc(proxies)
//	g.Attach(c)
//
// Async mode, LimitRules and the queue package work with the Guard. With
// an asynchronous collector, queue.Run returns once the queue is empty,
// while the Guard may still resend deferred requests whose pages add links
// to it: run the queue again until it stays empty after c.Wait (q.Run, then
// c.Wait, then q.Stop if q.IsEmpty() is false; examples/queue does so).
// Such a queue.Run returns as soon as it has handed its requests to
// colly's goroutines: the crawl happens inside c.Wait. From callbacks, add
// to the queue with Queue.AddURL, never Queue.AddRequest: colly v2.3.0's
// AddRequest blocks for ever once the queue's Run has returned (see
// [Links].Queue). A LimitRule's Delay adds to the Guard's pacing; a rule with a DomainGlob
// of "*" and a Parallelism remains useful as a global concurrency cap. With
// CacheDir, colly replays cached responses, 429 included, without the
// Guard's transport: they do not strike the host and are not retried.
//
// # Plain net/http clients
//
// [Guard.Transport] wraps any http.RoundTripper with the same rules:
// robots.txt, the host's pause and pacing (one schedule per host shared
// with the Guard's collectors), and back-off on 429 and 5xx. A GET or HEAD
// answered 429 or 503 is retried after the pause up to MaxRetries times.
// Its waits end with the request's context, not MaxWait: bound them with
// the client's Timeout.
//
// # Seeding from sitemaps
//
// [Guard.Seed] walks a site's sitemaps (package sitemap: the Sitemap lines
// of robots.txt, indexes, every format) through the Guard's Transport and
// robots.txt cache, and visits each page once through the collector, with
// back-pressure: a window of requests in flight on an async collector, one
// page at a time on a synchronous one, or a colly queue as the target
// ([Seeding]). The walk's counts come back in [SeedStats]; sitemaps that
// failed, in a *sitemap.WalkError, after the others were walked. Seeding
// can start from given sitemaps, follow chosen index children, tag pages
// by rules (the tag is in the request's Ctx under [SitemapTagKey]) and seed
// hreflang alternates, as Scrapy's SitemapSpider does.
//
// # Clean-param
//
// With [Guard.CleanParams], URLs that differ only in query parameters a
// Clean-param line of their robots.txt names (Yandex) are fetched once;
// later ones end with an error wrapping [ErrDuplicate].
//
// # Page directives and links
//
// [Guard.Directives] reads the page-level robots directives of a response
// (X-Robots-Tag fields, robots <meta> tags; Google's "Robots meta tag,
// data-nosnippet, and X-Robots-Tag specifications") for the Guard's agent,
// from any callback. [Guard.FollowLinks] follows a page's links as the
// usual OnHTML("a[href]") callback does, unless the page says nofollow or
// the link is rel="nofollow"; each link left out is counted (NotFollowed)
// and reported to ErrorHandler with a *[NotFollowedError].
//
// colly gives a page and the requests made from it one shared Ctx, so a
// page's directives are never stored in it (they would leak into the
// pages it links to): Directives reads them from the response itself, and
// FollowLinks from colly's parsed document of that very page, in its
// OnHTML callback. Nothing per page outlives the page's callbacks.
//
// With [Links].Queue set, FollowLinks adds the links to a colly queue
// instead of visiting them (a queue shared by a fleet spreads them).
//
// # Hostile sites and private networks
//
// A crawler fetches what strangers write: a robots.txt Sitemap line, a
// sitemap entry, a redirect, a link may name http://127.0.0.1:6379/ or the
// cloud metadata service at 169.254.169.254. By default [Guard.Seed]
// queues only pages of the site seeded (and of hosts whose own robots.txt
// cross-submits the sitemap): a sitemap elsewhere is read for the site's
// pages only. Walks are bounded (sitemap.DefaultMaxURLs pages, 15 bytes
// each for the duplicate check, and the protocol's limits per file);
// SeedStats.Cut names each bound that cut one. robots.txt fetches are
// bounded as a whole, redirects included, and a stalled one gives its
// fetch slot up.
//
// Where the crawl may connect is the transport's decision: install
// netguard's transport, which refuses loopback, private, link-local,
// CGNAT and other non-public addresses on the resolved address, before
// Attach, so that the Guard wraps it and its own robots.txt and sitemap
// fetches go through it too:
//
//	c := colly.NewCollector()
//	c.WithTransport(netguard.Transport(nil)) // or netguard.SiteTransport(ctx, site)
//	g.Attach(c)
//
// With [Guard.Transport]: g.Transport(netguard.Transport(nil)).
//
// The end of the collector's context (StdlibContext) is final and never
// the host's fault: a request it cuts is not retried, strikes no host, and
// reaches OnError with the context's error as colly reports it. A
// robots.txt fetch it cuts is abandoned, not failed: the collectors that
// share the Guard and did not end fetch that robots.txt again at once. colly's
// own test suite passes with a Guard attached to every collector, but for
// three tests of colly's robots.txt check (internal/collysuite).
//
// # Fleets
//
// Guards in several processes share politeness through [Guard.Pacer] and
// [Guard.RobotsStore]: each request takes its slot from the [pace.Pacer] (one
// call, at the gate), each 429, 503 or failure is reported to it, and a
// pause any member learns wakes the requests waiting in every member.
// Guard.Rate is then the rate of the whole fleet per host. While the
// Pacer cannot be reached, requests are deferred (cause
// [pace.ErrUnavailable]) and sent again after as long as the outage has
// lasted so far (1 s to 30 s, however many requests met it); a
// RobotsStore that cannot be read defers them too ([policy.ErrStore]).
// [pace.Memory] shares pacing among the Guards of one process; package
// redisstore shares both over Redis.
//
// # Seeing what the crawl does
//
// The Guard reports through OnError, [Guard.ErrorHandler], [Guard.Stats]
// and, if [Guard.Logger] is set, a log/slog Logger; it never writes to
// stderr. Stats counts requests sent (Sent: every request through the
// gate, robots.txt and sitemaps included) apart from pages fetched
// (Pages), and has the hosts paused, the requests in flight and a
// histogram of waits. [GuardOf] finds the Guard of a collector made with
// the one-liner:
//
//	c := colly.NewCollector(robotsmw.Attach())
//	...
//	st := robotsmw.GuardOf(c).Stats()
//
// The log's events and their levels are listed on [Guard.Logger]: Debug
// for waits, Info for outcomes (blocked with the rule and its line,
// retried, robots.txt fetched, sitemap read), Warn for failures (host
// paused with its cause and end, gave up, robots.txt unreachable). A nil
// Logger, or a level it does not enable, costs a check and no allocation.
// The module github.com/robotsmw/robotsmw/robotsprom exports Stats to
// Prometheus.
package robotsmw
