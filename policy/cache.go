package policy

import (
	"context"
	"net/http"
	"net/url"
	"time"
)

// CONTRACT STUB — the exported names and signatures below are fixed; the
// implementation is being written (issue 3). Bodies panic until then.

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
	Err        error     // the last fetch's error (a *FetchError); nil if it succeeded
}

// A Cache fetches, parses and caches robots.txt per origin.
type Cache struct {
	Client    *http.Client
	UserAgent string
	Now       func() time.Time
}

// Get returns the entry for the origin of u (absolute http or https URL).
// Get never returns an Entry with a nil Robots. err is non-nil only when the
// returned policy is not a verdict about the site: robots.txt is unreachable
// and there is no usable copy (err is a *FetchError; Robots disallows all
// until Entry.RetryAt), or ctx ended first (err is ctx.Err()).
func (c *Cache) Get(ctx context.Context, u *url.URL) (Entry, error) { panic("unimplemented") }

// Peek returns the cached entry for the origin of u without fetching.
func (c *Cache) Peek(u *url.URL) (Entry, bool) { panic("unimplemented") }

// A FetchError records a failed robots.txt fetch.
type FetchError struct {
	URL        string // the robots.txt URL
	StatusCode int    // 0 if no response was received
	Err        error  // the underlying error, if any
}

func (e *FetchError) Error() string { panic("unimplemented") }
func (e *FetchError) Unwrap() error { return e.Err }
