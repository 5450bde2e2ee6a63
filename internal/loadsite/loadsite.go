// Package loadsite is a loopback test server that judges politeness as a
// server feels it: when each request arrived, when its work was done, and
// the most requests in flight at once.
package loadsite

import (
	"net/http"
	"net/http/httptest"
	"sort"
	"sync"
	"testing"
	"time"
)

// A Site is a loopback server that measures its load.
type Site struct {
	*httptest.Server

	mu       sync.Mutex // guards the fields below
	inFlight int
	peak     int
	spans    []Span
}

// A Span is one measured request as the server saw it.
type Span struct {
	Path       string
	Start, End time.Time
}

// New starts a Site that, for each request, works for work(r) and then
// answers with answer. A request for which work returns a negative
// duration is answered at once and not measured. The Site closes when the
// test ends.
func New(t testing.TB, work func(r *http.Request) time.Duration, answer http.HandlerFunc) *Site {
	t.Helper()
	s := &Site{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d := work(r)
		if d < 0 {
			answer(w, r)
			return
		}
		start := time.Now()
		s.mu.Lock()
		s.inFlight++
		s.peak = max(s.peak, s.inFlight)
		s.mu.Unlock()
		time.Sleep(d)
		// The work is done: the client sees nothing of the response
		// before this.
		s.mu.Lock()
		s.inFlight--
		s.spans = append(s.spans, Span{r.URL.Path, start, time.Now()})
		s.mu.Unlock()
		answer(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

// Result returns the most requests in flight at once and the measured
// requests in order of arrival.
func (s *Site) Result() (peak int, spans []Span) {
	s.mu.Lock()
	defer s.mu.Unlock()
	spans = append([]Span(nil), s.spans...)
	sort.Slice(spans, func(i, j int) bool { return spans[i].Start.Before(spans[j].Start) })
	return s.peak, spans
}

// MinIdle returns the shortest time from the end of one request's work to
// the arrival of the next, and the index of that next request.
func MinIdle(spans []Span) (time.Duration, int) {
	idle, at := time.Duration(1<<63-1), -1
	for i := 1; i < len(spans); i++ {
		if d := spans[i].Start.Sub(spans[i-1].End); d < idle {
			idle, at = d, i
		}
	}
	return idle, at
}
