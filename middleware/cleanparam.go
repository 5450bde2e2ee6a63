package robotsmw

import (
	"errors"
	"hash/maphash"
	"net/url"
	"sync"

	"github.com/robotsmw/robotsmw/policy"
)

// ErrDuplicate: Guard.CleanParams is set and the request's canonical form
// under its robots.txt's Clean-param lines (Yandex) was requested before
// under another URL, so it was not sent. Final. The error names the
// request and its canonical form.
var ErrDuplicate = errors.New("robotsmw: duplicate under clean-param")

// A canonSet remembers the canonical forms of the URLs requested whose
// path a Clean-param line applies to, each with the request that claimed
// it first, by 64-bit hashes (as colly's visited set). Its zero value is
// ready; it is safe for concurrent use.
type canonSet struct {
	once sync.Once
	seed maphash.Seed

	mu sync.Mutex        // guards m
	m  map[uint64]uint64 // hash of method and canonical URL → hash of method and URL
}

// check claims the canonical form of u for the request (method, u), and
// returns an error wrapping ErrDuplicate if another request claimed it. A request
// checked again (a retry, a deferral) keeps its claim. Only robots.txt
// already in cache is read: check runs after the request was admitted.
func (s *canonSet) check(cache *policy.Cache, method string, u *url.URL) error {
	e, ok := cache.Peek(u)
	if !ok || e.Robots == nil || len(e.Robots.CleanParams()) == 0 {
		return nil
	}
	path := u.EscapedPath()
	if path == "" {
		path = "/"
	}
	applies := false
	for _, cp := range e.Robots.CleanParams() {
		if cp.Applies(path) {
			applies = true
			break
		}
	}
	if !applies {
		return nil
	}
	canon := e.Robots.Canonical(u)
	s.once.Do(func() { s.seed = maphash.MakeSeed() })
	ck := maphash.String(s.seed, method+" "+canon.String())
	rk := maphash.String(s.seed, method+" "+u.String())
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = make(map[uint64]uint64)
	}
	if first, ok := s.m[ck]; ok && first != rk {
		return duplicateError(u, canon)
	}
	s.m[ck] = rk
	return nil
}
