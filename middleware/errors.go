package robotsmw

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/gocolly/colly/v2"

	"github.com/robotsmw/robotsmw/policy"
)

// Outcomes the Guard reports. Every error it puts in a request's way wraps
// exactly one of them; test with errors.Is. ErrDeferred is the only one
// that is not final: the Guard sends the request again by itself.
var (
	// ErrDisallowed: robots.txt disallows the request (RFC 9309 §2.2.2).
	// Final. The error is a *[DisallowedError] naming the deciding rule.
	ErrDisallowed = errors.New("robotsmw: disallowed by robots.txt")

	// ErrRobotsUnreachable: robots.txt of the request's origin is
	// unreachable (429, 5xx or a network error; RFC 9309 §2.3.1.4) and has
	// failed [Guard.MaxRobotsFailures] times in a row, or asked for a Retry-After
	// beyond 24 hours. Final. The error also wraps the last
	// *policy.FetchError.
	ErrRobotsUnreachable = errors.New("robotsmw: robots.txt unreachable")

	// ErrCrawlDelayTooLong: the host's robots.txt asks for a Crawl-delay
	// above [policy.MaxCrawlDelay] and [Guard.ClampCrawlDelay] is off, so the host
	// is not crawled. Final.
	ErrCrawlDelayTooLong = errors.New("robotsmw: crawl-delay too long")

	// ErrGaveUp: the request failed (429, 5xx, a network error or a body
	// cut short) and was retried [Guard.MaxRetries] times, or could not be
	// retried, or its host asked for a pause beyond 24 hours (the error
	// then names the pause's end), or the collector's
	// context ended. Final. The error also wraps the last failure.
	ErrGaveUp = errors.New("robotsmw: gave up")

	// ErrDeferred: not final. The request was not sent, or its attempt
	// failed, and the Guard sends it again by itself at the time the
	// *[DeferredError] names; colly's Wait waits for it.
	ErrDeferred = errors.New("robotsmw: deferred")

	// errHostBusy is the cause of a deferral when the host's rate limit
	// would have made the request wait longer than [Guard.MaxWait].
	errHostBusy = errors.New("robotsmw: host's rate limit would make the request wait too long")
)

// A DisallowedError reports a request that robots.txt disallows, with the
// group and rule that decided it. It unwraps to [ErrDisallowed], and to
// colly.ErrRobotsTxtBlocked, so that code written for colly's own
// robots.txt check keeps working.
type DisallowedError struct {
	URL      *url.URL        // the request, or the redirect hop, that was blocked
	Agent    string          // the product token the rules were matched for
	Decision policy.Decision // the verdict, its group and its rule
}

// Error implements error.
func (e *DisallowedError) Error() string {
	return fmt.Sprintf("robotsmw: %s %s", e.URL.Redacted(), e.Decision)
}

// Unwrap returns ErrDisallowed and colly.ErrRobotsTxtBlocked.
func (e *DisallowedError) Unwrap() []error {
	return []error{ErrDisallowed, colly.ErrRobotsTxtBlocked}
}

// A DeferredError reports an attempt that the Guard will make again by
// itself: the request was not sent because it would have had to wait longer
// than [Guard.MaxWait] (its host paused or busy, its robots.txt unreachable
// for now), or it was sent and failed with a status or error the Guard
// retries. It unwraps to [ErrDeferred] and to its cause.
type DeferredError struct {
	// Until is the earliest time the request is sent again (at the
	// redirect hop it resumes at, if any: the URL of the request colly
	// hands OnError).
	Until time.Time
	// Attempt counts the failed attempts of the request so far; it is 0
	// when nothing was sent (a deferral costs no retry).
	Attempt int
	// Err is the cause: the host's pause, its schedule being further than MaxWait away, a
	// *policy.FetchError (robots.txt unreachable), a *[StatusError], or the
	// network error of the failed attempt.
	Err error

	url      *url.URL   // the request, or the redirect hop it resumes at
	pause    pauseEvent // the pause the failed attempt started, for its log line
	hop      *hopResume // the redirect hop the request resumes at, if any
	reserved bool       // the request keeps a slot of its host's schedule
	// parse is set when an attempt failed: its collector's
	// ParseHTTPErrorResponse then, which the retry keeps.
	parse parseSnapshot
}

// Error implements error.
func (e *DeferredError) Error() string {
	s := fmt.Sprintf("robotsmw: %s deferred until %s", e.url.Redacted(), e.Until.UTC().Format("2006-01-02T15:04:05.000Z07:00"))
	if e.Attempt > 0 {
		s += fmt.Sprintf(" (retry %d)", e.Attempt)
	}
	return s + ": " + e.Err.Error()
}

// Unwrap returns ErrDeferred and the cause.
func (e *DeferredError) Unwrap() []error { return []error{ErrDeferred, e.Err} }

// pausedError returns the cause of giving up on a request to host,
// paused until until: further away than the Guard waits for.
func pausedError(host string, until time.Time) error {
	return fmt.Errorf("robotsmw: host %s paused until %s", host, until.UTC().Format(time.RFC3339))
}

// A StatusError is the cause of a retry or of giving up when the response
// itself was the failure: 429, 500, 502, 503 or 504. Its body was not read.
type StatusError struct {
	StatusCode int
	Header     http.Header
}

// Error implements error.
func (e *StatusError) Error() string {
	return fmt.Sprintf("robotsmw: status %d %s", e.StatusCode, http.StatusText(e.StatusCode))
}

// A hopResume is the redirect hop a deferred request resumes at: the
// requests before it were answered.
type hopResume struct {
	url    *url.URL
	method string
	header http.Header
	body   bool // the hop resends the request's body (307, 308)
}

// IsFinal reports whether err, as a colly OnError callback or Visit
// receives it, is a final outcome: anything but a *DeferredError, after
// which the Guard sends the request again by itself.
func IsFinal(err error) bool { return err != nil && !errors.Is(err, ErrDeferred) }
