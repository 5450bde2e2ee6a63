// Package robotsmw makes a colly collector obey robots.txt (RFC 9309) on
// every hop, pace each host, and turn 429 and 503 responses into back-off,
// without losing requests:
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
// # What happens to a request
//
// Before colly sends a request (any method, retries included; OnRequest),
// the [Guard]:
//
//  1. Checks robots.txt of the request's origin through a [policy.Cache]
//     (one fetch per origin however many requests wait for it). A
//     disallowed request is aborted and reported to [Guard.ErrorHandler]
//     with a *[DisallowedError] naming the deciding rule and its line.
//     Only /robots.txt itself is exempt (RFC 9309 §2.2.2).
//  2. While robots.txt is unreachable (429, 5xx, network error; RFC 9309
//     §2.3.1.4) the request is deferred: it waits until robots.txt is due
//     again and is checked anew, up to [Guard.MaxRetries] times, then it is
//     reported with [ErrRobotsUnreachable]. It is never let through.
//  3. Waits while the host is paused, then for the host's rate limiter
//     (golang.org/x/time/rate, burst 1). A host is the host name without
//     scheme or port (Google: the crawl rate applies to "the whole
//     hostname"). The limiter runs at [Guard.Rate], lowered to a
//     Crawl-delay when robots.txt asks for one (not part of RFC 9309;
//     Bing's reading: one request per delay). Crawl-delays above
//     [MaxCrawlDelay] exclude the host with [ErrCrawlDelayTooLong] unless
//     [Guard.ClampCrawlDelay] is set. The Guard's own robots.txt fetches
//     keep the host's pause and spacing too, but go ahead of the pages
//     waiting for the limiter; waiting for their slot never counts against
//     the fetch's timeout.
//
// These waits happen in an OnRequest callback, before colly's HTTP client is
// called, so colly's request timeout does not cut them short. They block
// the goroutine that runs the request: the collector's own in Async mode,
// the caller of Visit (or the queue thread) otherwise. They end when the
// collector's Context ends; the request is then reported with its error.
//
// Redirect hops are checked inside colly's HTTP client by a redirect
// handler: a hop into a disallowed path is never requested, and the request
// is reported with a *DisallowedError. A hop that would have to wait past
// the collector's request timeout, counted from when the first request of
// the chain was sent (paused host, busy limiter, Crawl-delay, unreachable
// robots.txt), is not sent either; once the wait is over the request is
// retried at the hop, without a back-off. (net/http gives the redirect
// handler a context without the client's deadline, so the Guard reads the
// timeout of colly's client itself.) Right before the client is called (OnRequestHeaders, after any
// LimitRule slot), a last gate waits again if the host was paused
// meanwhile, and spaces request starts by the host's interval, so requests
// that bunched up behind a LimitRule slot do not reach the host together.
//
// # Back-off
//
// Responses are classified as they arrive (OnResponseHeaders), following
// Google's documented behaviour and RFC 9110:
//   - 429 and 503 pause the whole host. The pause is the response's
//     Retry-After (delta-seconds, or an HTTP-date in any of the three
//     formats of RFC 9110 §5.6.7, measured against the response's Date),
//     never shortened; without one, [Guard.Backoff] doubled per failure in a
//     row, lengthened by up to a quarter at random, capped at
//     [Guard.MaxBackoff]. The host's rate is also halved, at most once per
//     interval.
//   - 500, 502, 504 and network errors do the same, softer: a sixth of the
//     back-off and a cut to 0.8 of the rate.
//   - Healthy responses (1xx–3xx, 404, 410) let a cut host recover
//     gradually; other 4xx responses do not change the rate.
//
// The failed request itself is retried (Request.Retry, from OnError, or from
// OnResponse with ParseHTTPErrorResponse) after the pause, up to
// [Guard.MaxRetries] times, then reported with [ErrGaveUp]. colly's own
// OnError callbacks still see each failed attempt, and a synchronous Visit
// returns the first attempt's error after its retries have run. Retries are counted per
// method and URL, so concurrent requests for the same URL share a count.
//
// # Working with colly
//
// Attach turns colly's own robots.txt check off and keeps it off: colly's
// check fails open on a 5xx robots.txt and skips redirect hops and HEAD.
// NewCollector applies COLLY_IGNORE_ROBOTSTXT after its options, and colly
// runs its check before any callback, so that variable, set to anything
// but 1, y, yes or true, turns the check back on behind the Guard's back.
// Attach therefore also wraps the transport of colly's HTTP client: the
// robots.txt requests of colly's own check are answered there with an
// empty robots.txt, which colly reads as "allow all", and never reach the
// host. colly's check then blocks nothing, the Guard alone decides, and
// the Guard's own robots.txt fetch is the only one the host sees. The
// wrapper keeps the transport the client had (a WithTransport or
// SetProxyFunc before Attach) and passes every other request to it,
// requests for /robots.txt made with Visit included.
//
// A WithTransport, SetProxyFunc or SetClient after Attach replaces the
// wrapper. The Guard's first OnRequest then turns colly's check off, but
// colly checks the requests of Visit calls made before it: a request that
// colly's check blocks never reaches the Guard (Visit returns
// colly.ErrRobotsTxtBlocked, and neither ErrorHandler nor Stats learn of
// it). Install such transports before Attach, or attach after them:
//
//	c := colly.NewCollector()
//	c.SetProxyFunc(proxies)
//	g.Attach(c)
//
// Async mode, LimitRules and the queue package work with the Guard. A
// LimitRule's Delay adds to the Guard's pacing; a rule with a DomainGlob
// of "*" and a Parallelism remains useful as a global concurrency cap. With
// CacheDir, colly replays cached responses, 429 included, which the Guard
// then counts again.
//
// The Guard reports through [Guard.ErrorHandler] and [Guard.Stats] only; it
// never logs.
package robotsmw
