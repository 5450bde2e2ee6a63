package robotsmw

// Operator trial "trial-a": crawls built the way users build them, against
// loopback servers that misbehave, judged at the server.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gocolly/colly/v2"
	"github.com/gocolly/colly/v2/queue"
	"golang.org/x/time/rate"
)

// A trialSpan is one request as the trial server saw it: from its arrival
// to the end of its handler (the response is flushed after that).
type trialSpan struct {
	host, path string
	start, end time.Time
	status     int
}

// A trialServer is one loopback listener that serves many host names and
// records, per host, the arrival and completion of every request and the
// most requests in flight at once.
type trialServer struct {
	*httptest.Server
	tr *http.Transport // dials every host name to the listener

	mu       sync.Mutex // guards the fields below
	inFlight map[string]int
	peak     map[string]int
	spans    []trialSpan
}

// newTrialServer serves serve(w, r, load), where load is the number of
// requests in flight to r's host, this one included.
func newTrialServer(t *testing.T, serve func(w http.ResponseWriter, r *http.Request, load int)) *trialServer {
	t.Helper()
	s := &trialServer{inFlight: map[string]int{}, peak: map[string]int{}}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host, _, err := net.SplitHostPort(r.Host)
		if err != nil {
			host = r.Host
		}
		start := time.Now()
		s.mu.Lock()
		s.inFlight[host]++
		load := s.inFlight[host]
		s.peak[host] = max(s.peak[host], load)
		s.mu.Unlock()
		rec := &trialWriter{ResponseWriter: w, status: http.StatusOK}
		defer func() {
			s.mu.Lock()
			s.inFlight[host]--
			s.spans = append(s.spans, trialSpan{host, r.URL.Path, start, time.Now(), rec.status})
			s.mu.Unlock()
		}()
		serve(rec, r, load)
	}))
	addr := strings.TrimPrefix(s.URL, "http://")
	s.tr = &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}}
	t.Cleanup(func() {
		s.tr.CloseIdleConnections()
		s.Close()
	})
	return s
}

// transport is a colly option installing the server's transport; pass it
// to NewCollector before the Guard's Attach.
func (s *trialServer) transport(c *colly.Collector) { c.WithTransport(s.tr) }

// hostSpans returns the requests host received, in order of arrival.
func (s *trialServer) hostSpans(host string) []trialSpan {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []trialSpan
	for _, sp := range s.spans {
		if sp.host == host {
			out = append(out, sp)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].start.Before(out[j].start) })
	return out
}

// all returns every request received, and the peak in flight per host.
func (s *trialServer) all() ([]trialSpan, map[string]int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	peak := make(map[string]int, len(s.peak))
	for h, p := range s.peak {
		peak[h] = p
	}
	return append([]trialSpan(nil), s.spans...), peak
}

// count returns how many requests for host and path arrived.
func (s *trialServer) count(host, path string) int {
	n := 0
	for _, sp := range s.hostSpans(host) {
		if sp.path == path {
			n++
		}
	}
	return n
}

// checkPeak fails t for each host that had more than limit(host)
// requests in flight at once.
func (s *trialServer) checkPeak(t *testing.T, limit func(host string) int) {
	t.Helper()
	_, peak := s.all()
	for h, p := range peak {
		if p > limit(h) {
			t.Errorf("host %s: peak in flight at the server %d, want ≤ %d", h, p, limit(h))
		}
	}
}

// checkGap fails t if a request to host arrived sooner than gap after the
// previous request to host ended (at the server, which is never later
// than the client sees the end).
func (s *trialServer) checkGap(t *testing.T, host string, gap time.Duration) {
	t.Helper()
	spans := s.hostSpans(host)
	for i := 1; i < len(spans); i++ {
		if d := spans[i].start.Sub(spans[i-1].end); d < gap-slack {
			t.Errorf("host %s: %s arrived %v after %s ended, want ≥ %v", host, spans[i].path, d, spans[i-1].path, gap)
		}
	}
}

// A trialWriter records the status of a response and passes Flush and
// Hijack through.
type trialWriter struct {
	http.ResponseWriter
	status int
}

func (w *trialWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}

func (w *trialWriter) Flush() { w.ResponseWriter.(http.Flusher).Flush() }

func (w *trialWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	return w.ResponseWriter.(http.Hijacker).Hijack()
}

// trialOutcomes records what a collector's callbacks and the Guard's
// ErrorHandler reported, per URL.
type trialOutcomes struct {
	mu       sync.Mutex // guards the maps
	final    map[string][]string
	deferred map[string]int // *DeferredError with Attempt 0
	retried  map[string]int // *DeferredError with Attempt > 0
	handler  map[string][]error
}

func newTrialOutcomes() *trialOutcomes {
	return &trialOutcomes{final: map[string][]string{}, deferred: map[string]int{}, retried: map[string]int{}, handler: map[string][]error{}}
}

// attach registers the callbacks on c; call it after the Guard's Attach.
func (o *trialOutcomes) attach(c *colly.Collector) {
	c.OnResponse(func(r *colly.Response) { o.addFinal(r.Request.URL.String(), fmt.Sprintf("ok %d", r.StatusCode)) })
	c.OnError(func(r *colly.Response, err error) {
		u := r.Request.URL.String()
		var de *DeferredError
		if errors.As(err, &de) {
			o.mu.Lock()
			if de.Attempt > 0 {
				o.retried[u]++
			} else {
				o.deferred[u]++
			}
			o.mu.Unlock()
			return
		}
		o.addFinal(u, trialKind(err))
	})
}

// errorHandler is a Guard.ErrorHandler recording into o.
func (o *trialOutcomes) errorHandler(r *colly.Request, err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.handler[r.URL.String()] = append(o.handler[r.URL.String()], err)
}

func (o *trialOutcomes) addFinal(u, kind string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.final[u] = append(o.final[u], kind)
}

// trialKind names a final outcome.
func trialKind(err error) string {
	switch {
	case errors.Is(err, ErrDisallowed):
		return "blocked"
	case errors.Is(err, ErrRobotsUnreachable):
		return "unreachable"
	case errors.Is(err, ErrGaveUp):
		return "gave up"
	case errors.Is(err, ErrCrawlDelayTooLong):
		return "crawl-delay"
	}
	return "error " + err.Error()
}

// kinds returns how many URLs ended with each final outcome, and fails t
// for each visited URL without exactly one final outcome.
func (o *trialOutcomes) kinds(t *testing.T, visited []string) map[string]int {
	t.Helper()
	o.mu.Lock()
	defer o.mu.Unlock()
	n := map[string]int{}
	for _, u := range visited {
		f := o.final[u]
		if len(f) != 1 {
			t.Errorf("%s: final outcomes %q (deferred %d, retried %d), want exactly one", u, f, o.deferred[u], o.retried[u])
			continue
		}
		n[f[0]]++
		// The Guard's own final outcomes reach ErrorHandler once too.
		want := 0
		if f[0] == "blocked" || f[0] == "gave up" || f[0] == "unreachable" || f[0] == "crawl-delay" {
			want = 1
		}
		if got := len(o.handler[u]); got != want {
			t.Errorf("%s: final %q reached ErrorHandler %d times (%v), want %d", u, f[0], got, o.handler[u], want)
		}
	}
	return n
}

// totalRetried returns the retries OnError saw.
func (o *trialOutcomes) totalRetried() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	n := 0
	for _, k := range o.retried {
		n += k
	}
	return n
}

// trialGoroutines returns a func that fails t if goroutines are left over
// (after a short poll) once the server and its connections are closed.
func trialGoroutines(t *testing.T) func(s *trialServer) {
	before := runtime.NumGoroutine()
	return func(s *trialServer) {
		t.Helper()
		s.tr.CloseIdleConnections()
		s.Close()
		deadline := time.Now().Add(2 * time.Second)
		for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if n := runtime.NumGoroutine(); n > before {
			buf := make([]byte, 1<<16)
			buf = buf[:runtime.Stack(buf, true)]
			t.Errorf("%d goroutines after Wait, %d before:\n%s", n, before, buf)
		}
	}
}

// A broad crawl of 60 small hosts and one large one, whose responses slow
// down with the requests in flight to them, through colly's queue, a
// clone and an async collector with Parallelism 8: every page is fetched
// once, no host sees two requests at once, Stats agrees with the server,
// no goroutine is left.
func TestTrialABroadCrawlUnderLoad(t *testing.T) {
	leaks := trialGoroutines(t)
	s := newTrialServer(t, func(w http.ResponseWriter, r *http.Request, load int) {
		if r.URL.Path == "/robots.txt" {
			fmt.Fprint(w, "User-agent: *\nDisallow: /private\n")
			return
		}
		time.Sleep(time.Duration(load) * 2 * time.Millisecond) // a queue: slower under load
		fmt.Fprint(w, "<html><body>ok</body></html>")
	})
	out := newTrialOutcomes()
	g := &Guard{Rate: rate.Inf, ErrorHandler: out.errorHandler}
	c := colly.NewCollector(s.transport, g.Attach, colly.Async(true))
	c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: 8})
	out.attach(c)
	d := c.Clone()
	g.Attach(d)
	out.attach(d)
	q, err := queue.New(4, &queue.InMemoryQueueStorage{MaxSize: 10000})
	if err != nil {
		t.Fatal(err)
	}
	var visited []string
	for i := 0; i < 60; i++ {
		for _, p := range []string{"/a", "/b", "/private/x"} {
			u := fmt.Sprintf("http://h%02d.test%s", i, p)
			visited = append(visited, u)
			q.AddURL(u)
		}
	}
	for i := 0; i < 150; i++ {
		u := fmt.Sprintf("http://big.test/p%d", i)
		visited = append(visited, u)
		if i%2 == 0 {
			q.AddURL(u)
		} else if err := d.Visit(u); err != nil && IsFinal(err) {
			t.Errorf("clone Visit(%s) = %v", u, err)
		}
	}
	if err := q.Run(c); err != nil {
		t.Fatal(err)
	}
	waitOrFail(t, "c.Wait", c.Wait)
	waitOrFail(t, "d.Wait", d.Wait)

	s.checkPeak(t, func(string) int { return 1 })
	kinds := out.kinds(t, visited)
	if kinds["ok 200"] != 60*2+150 || kinds["blocked"] != 60 {
		t.Errorf("outcomes %v, want %d ok 200, 60 blocked", kinds, 60*2+150)
	}
	spans, _ := s.all()
	for _, sp := range spans {
		if strings.HasPrefix(sp.path, "/private") {
			t.Errorf("disallowed %s%s arrived", sp.host, sp.path)
		}
	}
	st := g.Stats()
	if st.Total.Sent != int64(len(spans)) || st.Total.Pages != int64(kinds["ok 200"]) || st.Total.Blocked != int64(kinds["blocked"]) {
		t.Errorf("Stats Sent %d, Pages %d, Blocked %d; server saw %d requests, %d pages fetched, %d blocked",
			st.Total.Sent, st.Total.Pages, st.Total.Blocked, len(spans), kinds["ok 200"], kinds["blocked"])
	}
	if st.Waiting != 0 || st.InFlight != 0 {
		t.Errorf("after Wait Stats Waiting %d, InFlight %d; want 0, 0", st.Waiting, st.InFlight)
	}
	leaks(s)
}

// Crawl-delay, counted from the end of each response, holds at the server
// while the host's latency spikes, with Parallelism 8 and a clone.
func TestTrialACrawlDelayWithLatencySpikes(t *testing.T) {
	const delay = 50 * time.Millisecond
	s := newTrialServer(t, func(w http.ResponseWriter, r *http.Request, load int) {
		if r.URL.Path == "/robots.txt" {
			if strings.HasPrefix(r.Host, "spiky") {
				fmt.Fprint(w, "User-agent: *\nCrawl-delay: 0.05\n")
			}
			return
		}
		if strings.HasSuffix(r.URL.Path, "0") {
			time.Sleep(60 * time.Millisecond) // a spike
		} else {
			time.Sleep(2 * time.Millisecond)
		}
		fmt.Fprint(w, "ok")
	})
	for _, fixed := range []bool{false, true} {
		out := newTrialOutcomes()
		g := &Guard{Rate: rate.Inf, FixedPace: fixed, ErrorHandler: out.errorHandler}
		c := colly.NewCollector(s.transport, g.Attach, colly.Async(true))
		c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: 8})
		out.attach(c)
		d := c.Clone()
		g.Attach(d)
		out.attach(d)
		var visited []string
		for i := 0; i < 12; i++ {
			u := fmt.Sprintf("http://spiky-%v.test/p%d", fixed, i)
			visited = append(visited, u)
			if i%2 == 0 {
				c.Visit(u)
			} else {
				d.Visit(u)
			}
		}
		waitOrFail(t, "Wait", c.Wait)
		waitOrFail(t, "Wait", d.Wait)
		if k := out.kinds(t, visited); k["ok 200"] != 12 {
			t.Errorf("FixedPace %v: outcomes %v, want 12 ok 200", fixed, k)
		}
	}
	s.checkPeak(t, func(string) int { return 1 })
	// Each Guard is a crawler of its own: one host name each.
	s.checkGap(t, "spiky-false.test", delay)
	s.checkGap(t, "spiky-true.test", delay)
}

// 429 and 503 with Retry-After in seconds and as an HTTP-date, and
// without it: nothing reaches the host before the pause ends (counted from
// the end of the response at the server), each page is fetched in the end
// and the retries are counted.
func TestTrialARetryAfter(t *testing.T) {
	var mu sync.Mutex
	failed := map[string]bool{}
	s := newTrialServer(t, func(w http.ResponseWriter, r *http.Request, load int) {
		if r.URL.Path == "/robots.txt" {
			return
		}
		mu.Lock()
		first := !failed[r.Host+r.URL.Path]
		failed[r.Host+r.URL.Path] = true
		mu.Unlock()
		if first && r.URL.Path == "/p1" {
			now := time.Now().UTC()
			w.Header().Set("Date", now.Format(http.TimeFormat))
			switch r.Host {
			case "secs.test":
				w.Header().Set("Retry-After", "1")
				w.WriteHeader(http.StatusTooManyRequests)
			case "date.test":
				w.Header().Set("Retry-After", now.Add(time.Second).Format(http.TimeFormat))
				w.WriteHeader(http.StatusServiceUnavailable)
			case "none.test":
				w.WriteHeader(http.StatusTooManyRequests)
			}
			return
		}
		fmt.Fprint(w, "ok")
	})
	out := newTrialOutcomes()
	g := &Guard{Rate: rate.Inf, Backoff: 100 * time.Millisecond, ErrorHandler: out.errorHandler}
	c := colly.NewCollector(s.transport, g.Attach, colly.Async(true))
	c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: 8})
	out.attach(c)
	var visited []string
	for _, h := range []string{"secs.test", "date.test", "none.test"} {
		for i := 0; i < 4; i++ {
			u := fmt.Sprintf("http://%s/p%d", h, i)
			visited = append(visited, u)
			c.Visit(u)
		}
	}
	waitOrFail(t, "Wait", c.Wait)
	s.checkPeak(t, func(string) int { return 1 })
	if k := out.kinds(t, visited); k["ok 200"] != 12 {
		t.Errorf("outcomes %v, want 12 ok 200", k)
	}
	for _, tt := range []struct {
		host  string
		pause time.Duration
	}{{"secs.test", time.Second}, {"date.test", time.Second}, {"none.test", 100 * time.Millisecond}} {
		spans := s.hostSpans(tt.host)
		for i, sp := range spans {
			if sp.status != http.StatusOK && i+1 < len(spans) {
				if d := spans[i+1].start.Sub(sp.end); d < tt.pause-slack {
					t.Errorf("%s: %s arrived %v after the %d ended, want ≥ %v", tt.host, spans[i+1].path, d, sp.status, tt.pause)
				}
			}
		}
		if n := s.count(tt.host, "/p1"); n != 2 {
			t.Errorf("%s/p1 arrived %d times, want 2", tt.host, n)
		}
	}
	st := g.Stats()
	if st.Total.Retried != 3 || out.totalRetried() != 3 {
		t.Errorf("Stats Retried %d, OnError saw %d retries; want 3", st.Total.Retried, out.totalRetried())
	}
	spans, _ := s.all()
	if st.Total.Sent != int64(len(spans)) || st.Total.Pages != 12 {
		t.Errorf("Stats Sent %d, Pages %d; server saw %d requests, want 12 pages", st.Total.Sent, st.Total.Pages, len(spans))
	}
}
