package robotsmw

import (
	"net/http"
	"time"
)

// Back-off constants. The values and their sources are in docs/politeness.md.
const (
	// maxRetryAfter is the longest Retry-After the Guard waits out. A
	// longer one is never shortened: requests to the host give up instead.
	maxRetryAfter = 24 * time.Hour
	// jitter is the largest fraction added to an own back-off pause.
	// It only lengthens: the pause never drops below the exponential step.
	jitter = 0.25
	// softDivisor: a soft failure (500, 502, 504, network error) starts
	// its back-off at Backoff/softDivisor.
	softDivisor = 6
)

// A class sorts a response by what it says about the host's load.
type class uint8

const (
	// neutral: 4xx other than 429; no effect on the rate (Google: "4xx
	// errors except 429 have no effect on crawl rate").
	neutral class = iota
	// healthy: 1xx, 2xx, 3xx, 404 and 410; counts toward recovery.
	healthy
	// soft: 500, 502, 504 or a network error; a short pause and a mild cut.
	soft
	// hard: 429 (RFC 6585 §4) or 503 (RFC 9110 §15.6.4); pause and halve.
	hard
)

// classify returns the class of an HTTP status code; 0 means a network
// error.
func classify(status int) class {
	switch {
	case status == 0:
		return soft
	case status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable:
		return hard
	case status == http.StatusInternalServerError || status == http.StatusBadGateway ||
		status == http.StatusGatewayTimeout:
		return soft
	case status < 400 || status == http.StatusNotFound || status == http.StatusGone:
		return healthy
	}
	return neutral
}

// backoff returns the pause after the n-th strike (n ≥ 1) in a row:
// base·2^(n−1), lengthened by the fraction jitter·u (u in [0, 1)), capped
// at limit. Jitter only lengthens, so a host is never retried before the
// exponential step (AWS "Exponential Backoff And Jitter", upward variant).
func backoff(base, limit time.Duration, n int, u float64) time.Duration {
	d := base
	for i := 1; i < n && d < limit; i++ {
		d *= 2
	}
	d = time.Duration(float64(d) * (1 + jitter*u))
	return min(d, limit)
}

// maxDuration is the longest time.Duration.
const maxDuration = time.Duration(1<<63 - 1)
