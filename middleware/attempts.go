package robotsmw

import (
	"net/url"
	"sync"
	"sync/atomic"
)

// An attemptTable counts the failed attempts of requests, by method and
// URL, so that concurrent requests for the same URL share a count and a
// retry, which colly sends as a new Request, finds the count of the
// request it retries. It also marks requests that come back from a
// deferral holding a slot of their host's schedule.
//
// A count is dropped when the request's outcome is final: a response that
// was read to its end (the body closed without a read error), a final
// error, or giving up. It is not dropped when headers arrive: a body cut
// short is a failed attempt too.
type attemptTable struct {
	// mu guards m.
	mu sync.Mutex
	m  map[string]*attempt
	// n is len(m), so that the hot path skips the lock when it is empty.
	n atomic.Int64
}

type attempt struct {
	failures int  // failed attempts so far
	reserved bool // the next attempt holds a slot of its host's schedule
}

// attemptKey returns the key of a request.
func attemptKey(method string, u *url.URL) string { return method + " " + u.String() }

// fail counts a failed attempt of key and returns the count.
func (t *attemptTable) fail(key string) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	a := t.entry(key)
	a.failures++
	return a.failures
}

// entry returns the attempt of key, creating it; t.mu must be held.
func (t *attemptTable) entry(key string) *attempt {
	a := t.m[key]
	if a == nil {
		if t.m == nil {
			t.m = make(map[string]*attempt)
		}
		a = &attempt{}
		t.m[key] = a
		t.n.Add(1)
	}
	return a
}

// reserve marks that the next attempt of key holds a schedule slot.
func (t *attemptTable) reserve(key string) {
	t.mu.Lock()
	t.entry(key).reserved = true
	t.mu.Unlock()
}

// reserved reports whether the next attempt of the request holds a
// schedule slot, and clears the mark. An entry left with nothing to
// remember is dropped. The key is only built when the table holds any.
func (t *attemptTable) reserved(method string, u *url.URL) bool {
	if t.n.Load() == 0 {
		return false
	}
	key := attemptKey(method, u)
	t.mu.Lock()
	defer t.mu.Unlock()
	a := t.m[key]
	if a == nil || !a.reserved {
		return false
	}
	a.reserved = false
	if a.failures == 0 {
		delete(t.m, key)
		t.n.Add(-1)
	}
	return true
}

// clear drops the count of the request: its outcome is final.
func (t *attemptTable) clear(method string, u *url.URL) {
	if t.n.Load() == 0 {
		return
	}
	key := attemptKey(method, u)
	t.mu.Lock()
	if _, ok := t.m[key]; ok {
		delete(t.m, key)
		t.n.Add(-1)
	}
	t.mu.Unlock()
}
