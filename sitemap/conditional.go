package sitemap

import (
	"net/http"
	"sync"
)

// maxValidators bounds the sitemaps a Walker remembers validators for; past
// it the oldest half is forgotten (those are then fetched in full once).
const maxValidators = 100_000

// A validator is what a sitemap's last full read sent to revalidate it
// with (RFC 9110 §8.8): its ETag and Last-Modified fields.
type validator struct {
	etag, lastModified string
}

// Validators remembers, across walks, the validators (ETag,
// Last-Modified) of the urlsets (not indexes) whose every page was passed
// on, so that a later walk asks with If-None-Match and If-Modified-Since
// and skips those answered 304. A sitemap cut short (MaxURLs, an error,
// the end of the walk) is not remembered: its pages are read again next
// time. Indexes are always fetched again: a 304 for one would hide its
// children, which may have changed on their own. It keeps at most 100,000
// sitemaps, forgetting the oldest half past that.
//
// The zero value is ready to use; it is safe for concurrent use. Share one
// between Walkers (Walker.Validators) to keep it across Walker values.
type Validators struct {
	mu    sync.Mutex // guards m and order
	m     map[string]validator
	order []string // insertion order, for forgetting the oldest
}

func (v *Validators) get(u string) (validator, bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	val, ok := v.m[u]
	return val, ok
}

// put records the validators of resp for u, or forgets u when resp has
// none.
func (v *Validators) put(u string, h http.Header) {
	val := validator{etag: h.Get("ETag"), lastModified: h.Get("Last-Modified")}
	v.mu.Lock()
	defer v.mu.Unlock()
	if val == (validator{}) {
		delete(v.m, u)
		return
	}
	if v.m == nil {
		v.m = make(map[string]validator)
	}
	if _, ok := v.m[u]; !ok {
		if len(v.order) >= maxValidators {
			half := len(v.order) / 2
			for _, old := range v.order[:half] {
				delete(v.m, old)
			}
			v.order = append(v.order[:0], v.order[half:]...)
		}
		v.order = append(v.order, u)
	}
	v.m[u] = val
}

// forget drops what is known of u.
func (v *Validators) forget(u string) {
	v.mu.Lock()
	defer v.mu.Unlock()
	delete(v.m, u)
}

// apply sets the conditional request fields for val on req.
func (val validator) apply(req *http.Request) {
	if val.etag != "" {
		req.Header.Set("If-None-Match", val.etag)
	}
	if val.lastModified != "" {
		req.Header.Set("If-Modified-Since", val.lastModified)
	}
}
