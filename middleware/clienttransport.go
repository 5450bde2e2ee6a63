package robotsmw

import (
	"context"
	"io"
	"net/http"
	"time"

	"github.com/robotsmw/robotsmw/policy"
)

// Transport returns an http.RoundTripper that makes any net/http client
// as polite as the Guard's colly collectors: API clients, link checkers,
// sitemap walkers. base sends the requests; nil means
// http.DefaultTransport. Every request through it:
//   - is checked against robots.txt (the Guard's Cache, the agent of
//     Guard.Agent or else of the request's User-Agent header): a
//     disallowed request fails with a *DisallowedError wrapping
//     ErrDisallowed and nothing is sent (RFC 9309 §2.2.2);
//   - waits for its host's pause and pacing (Rate, Crawl-delay), in the
//     same per-host state as the Guard's colly requests: requests made
//     through the Transport and through colly share one schedule per host;
//   - turns 429, 5xx and network errors into the host's back-off, exactly
//     as colly requests do (Retry-After as sent, else Backoff doubling).
//
// A request whose robots.txt is unreachable (429, 5xx or a network error:
// complete disallow for now, RFC 9309 §2.3.1.4) fails at once with an
// error wrapping ErrRobotsUnreachable and the *policy.FetchError; the
// Guard's cache tries robots.txt again on its schedule.
//
// A GET or HEAD without a body answered 429 or 503 is sent again after the
// host's pause, up to MaxRetries times; then the last response is returned.
// Other responses and errors are returned as they are. A pause beyond 24
// hours is not waited for: the request fails with an error wrapping
// ErrGaveUp and naming the pause's end. Waits end with the request's context, so
// give the request a deadline (http.Client.Timeout or a context) to bound
// them; the Guard's MaxWait and deferral queue apply to colly requests
// only.
//
// Transport decides what may be sent, not where it may connect: give it
// netguard's transport as base, g.Transport(netguard.Transport(nil)), so
// that a URL a stranger wrote (a sitemap line, a redirect, a link) cannot
// reach a loopback, private or link-local address.
//
// The returned RoundTripper is safe for concurrent use. Transport panics
// if g's settings are invalid (see the fields), as Attach does.
func (g *Guard) Transport(base http.RoundTripper) http.RoundTripper {
	if g == nil {
		panic("robotsmw: Guard.Transport: the Guard is nil")
	}
	g.mustValidate()
	if base == nil {
		base = http.DefaultTransport
	}
	return &clientTransport{g: g, next: base}
}

// noDeferral marks the context of a Guard.Transport request: it cannot be
// deferred, so the checks fail rather than wait for robots.txt's next try.
type noDeferral struct{}

// A clientTransport is the RoundTripper of Guard.Transport. It is not
// changed after it is made.
type clientTransport struct {
	g    *Guard
	next http.RoundTripper
}

// RoundTrip implements http.RoundTripper.
func (t *clientTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	g := t.g
	ctx := context.WithValue(req.Context(), noDeferral{}, true)
	agent := g.Agent
	if agent == "" {
		agent = req.Header.Get("User-Agent")
	}
	token := policy.ProductToken(agent)
	cache := g.cacheFor(nil, t.next)
	again := (req.Method == http.MethodGet || req.Method == http.MethodHead) &&
		(req.Body == nil || req.Body == http.NoBody)
	var retryOn *host // the host whose failed attempt this one retries
	for attempt := 0; ; attempt++ {
		lease, err := g.admit(ctx, cache, req.URL, token, maxDuration, false, true)
		if err != nil {
			closeBody(req)
			g.account(req.URL, err) // the outcome goes to the caller alone
			return nil, err
		}
		h := g.host(req.URL)
		if retryOn != nil {
			g.count(retryOn, cRetried) // the retry goes
			retryOn = nil
		}
		f := g.newFlight(h, lease, time.Time{})
		resp, err := t.next.RoundTrip(req)
		if err != nil && forbidden(err) {
			f.unsent() // nothing was sent, and nothing will be
			return nil, err
		}
		if err != nil {
			f.end(true) // an error or a timeout: loaded
			if !ended(req, err) {
				g.strikeFor(h, g.clock(), soft, req.URL, nil, 0, err, false)
			}
			return nil, err
		}
		cls := g.judge(h, resp)
		throttled := resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable
		if isRedirect(resp) {
			f.end(false) // loaded: the next hop may need the host's place
		}
		if !throttled || !again || attempt >= g.maxRetries() {
			resp.Body = &flightBody{ReadCloser: resp.Body, f: f, failed: cls == hard || cls == soft}
			return resp, nil
		}
		// Read a little of the body so the connection can be reused.
		io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
		resp.Body.Close()
		f.end(true)
		retryOn = h
	}
}
