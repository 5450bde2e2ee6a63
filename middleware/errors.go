package robotsmw

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/robotsmw/robotsmw/policy"
)

// Conditions reported to [Guard.ErrorHandler]. Each error the handler
// receives wraps exactly one of them; test with errors.Is.
var (
	// ErrDisallowed: robots.txt disallows the request (RFC 9309 §2.2.2).
	// The error is a *[DisallowedError] naming the deciding rule.
	ErrDisallowed = errors.New("robotsmw: disallowed by robots.txt")

	// ErrRobotsUnreachable: robots.txt stayed unreachable (429, 5xx or a
	// network error; RFC 9309 §2.3.1.4) each time the request was deferred
	// and retried, up to [Guard.MaxRetries] times. The error also wraps the
	// last *policy.FetchError.
	ErrRobotsUnreachable = errors.New("robotsmw: robots.txt unreachable")

	// ErrCrawlDelayTooLong: the host's robots.txt asks for a Crawl-delay
	// above [MaxCrawlDelay] and [Guard.ClampCrawlDelay] is off, so the host
	// is not crawled.
	ErrCrawlDelayTooLong = errors.New("robotsmw: crawl-delay too long")

	// ErrGaveUp: the request failed with 429, 5xx or a network error and
	// was retried [Guard.MaxRetries] times, or could not be retried, or its
	// host asked for a pause longer than 24 hours. The error also wraps the
	// last failure.
	ErrGaveUp = errors.New("robotsmw: gave up")
)

// A DisallowedError reports a request that robots.txt disallows, with the
// group and rule that decided it. It unwraps to [ErrDisallowed].
type DisallowedError struct {
	URL      *url.URL        // the request, or the redirect hop, that was blocked
	Agent    string          // the product token the rules were matched for
	Decision policy.Decision // the verdict, its group and its rule
}

func (e *DisallowedError) Error() string {
	return fmt.Sprintf("robotsmw: %s %s", e.URL.Redacted(), e.Decision)
}

// Unwrap returns ErrDisallowed.
func (e *DisallowedError) Unwrap() error { return ErrDisallowed }

// A hopDeferredError stops a redirect hop that may not be sent yet: its host
// is paused, its limiter would outlast the client's deadline, or the robots.txt
// of its origin is unreachable. The request is retried after until.
type hopDeferredError struct {
	until  time.Time
	robots bool // deferred because robots.txt is unreachable
	err    error

	// The hop, set by the redirect handler: the request resumes there.
	url    *url.URL
	method string
	header http.Header
	body   bool // the hop resends the request's body (307, 308)
}

func (e *hopDeferredError) Error() string {
	return "robotsmw: redirect hop deferred: " + e.err.Error()
}

func (e *hopDeferredError) Unwrap() error { return e.err }
