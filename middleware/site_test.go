package robotsmw

import (
	"net/http"
	"net/http/httptest"
	"sort"
	"sync"
	"testing"
	"time"
)

// A hit is one request a test server received.
type hit struct {
	method, path string
	at           time.Time
}

// A site is a loopback test server that records every request it receives,
// so tests judge the Guard from the server's side.
type site struct {
	*httptest.Server
	mu   sync.Mutex // guards hits
	hits []hit
}

// newSite serves h, recording each request first.
func newSite(t testing.TB, h http.HandlerFunc) *site {
	t.Helper()
	s := &site{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.hits = append(s.hits, hit{r.Method, r.URL.Path, time.Now()})
		s.mu.Unlock()
		h(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

// log returns the requests received so far, in order of arrival.
func (s *site) log() []hit {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := append([]hit(nil), s.hits...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].at.Before(out[j].at) })
	return out
}

// count returns how many requests for path arrived.
func (s *site) count(path string) int {
	n := 0
	for _, h := range s.log() {
		if h.path == path {
			n++
		}
	}
	return n
}

// robots returns a handler serving body as /robots.txt and 200 "ok" pages
// (with a link-free HTML body) elsewhere, delegating to pages first.
func robots(body string, pages func(w http.ResponseWriter, r *http.Request) bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			w.Header().Set("Content-Type", "text/plain")
			w.Write([]byte(body))
			return
		}
		if pages != nil && pages(w, r) {
			return
		}
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte("<html><body>ok</body></html>"))
	}
}

// reports collects what a Guard's ErrorHandler receives.
type reports struct {
	mu   sync.Mutex // guards errs
	errs map[string][]error
}

func (r *reports) add(url string, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.errs == nil {
		r.errs = make(map[string][]error)
	}
	r.errs[url] = append(r.errs[url], err)
}

func (r *reports) get(url string) []error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]error(nil), r.errs[url]...)
}

func (r *reports) len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, e := range r.errs {
		n += len(e)
	}
	return n
}
