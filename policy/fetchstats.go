package policy

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
)

// FetchStats counts a Cache's robots.txt fetches by what they found (see
// Cache.Stats). Each fetch counts once, in one of the first six fields,
// however many look-ups waited for it; look-ups the cache answered count
// nothing.
type FetchStats struct {
	// Parsed counts the fetches answered 2xx: the rules read apply.
	Parsed int64
	// AllowAll counts the fetches answered 4xx other than 429, or
	// redirected too often: everything is allowed (RFC 9309 §2.3.1.3).
	AllowAll int64
	// The fetches that found robots.txt unreachable (RFC 9309 §2.3.1.4),
	// by cause: answered 429; answered 5xx; no answer within the fetch's
	// timeout; any other failure (connection refused or reset, DNS, TLS,
	// an address netguard refused, a body cut short).
	Status429, Status5xx, Timeout, Network int64
	// Unreachable is the number of origins whose last robots.txt fetch
	// found it unreachable, now; an origin leaves it when a fetch gives a
	// verdict again. At most 10,000 origins are tracked.
	Unreachable int
}

// maxRobotsDown bounds the origins robotsDown tracks: a broad crawl meets
// many dead sites, and the gauge is not worth unbounded memory.
const maxRobotsDown = 10_000

// fetchCounts is what FetchStats is made from. Safe for concurrent use.
type fetchCounts struct {
	parsed, allowAll, status429, status5xx, timeout, network atomic.Int64

	mu   sync.Mutex          // guards down
	down map[string]struct{} // origins whose last fetch failed
}

// add counts one fetch of origin's robots.txt that made rec.
func (r *fetchCounts) add(origin string, rec Record) {
	switch rec.State {
	case StateParsed:
		r.parsed.Add(1)
	case StateUnavailable:
		r.allowAll.Add(1)
	case StateUnreachable:
		switch {
		case rec.StatusCode == http.StatusTooManyRequests:
			r.status429.Add(1)
		case rec.StatusCode >= 500:
			r.status5xx.Add(1)
		case rec.Err != nil && isTimeout(rec.Err.Err):
			r.timeout.Add(1)
		default:
			r.network.Add(1)
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if rec.State != StateUnreachable {
		delete(r.down, origin)
		return
	}
	if r.down == nil {
		r.down = make(map[string]struct{})
	}
	if len(r.down) < maxRobotsDown {
		r.down[origin] = struct{}{}
	}
}

// isTimeout reports whether err is a timeout: a deadline that passed, or
// a network error that says so.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout()
}

// snapshot returns the counts.
func (r *fetchCounts) snapshot() FetchStats {
	r.mu.Lock()
	down := len(r.down)
	r.mu.Unlock()
	return FetchStats{
		Parsed: r.parsed.Load(), AllowAll: r.allowAll.Load(),
		Status429: r.status429.Load(), Status5xx: r.status5xx.Load(),
		Timeout: r.timeout.Load(), Network: r.network.Load(),
		Unreachable: down,
	}
}

// Stats returns the counts of c's robots.txt fetches so far (since c was
// made: a shared Store's records fetched by other processes count there).
// It is safe to call at any time, concurrently with look-ups.
func (c *Cache) Stats() FetchStats { return c.counts.snapshot() }
