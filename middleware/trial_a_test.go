package robotsmw

// An operator's trial: crawls built the way users build them, against
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
	spans, _ := s.all()
	var out []trialSpan
	for _, sp := range spans {
		if sp.host == host {
			out = append(out, sp)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].start.Before(out[j].start) })
	return out
}

// all returns every request received, and the peak in flight per host,
// once no handler runs (or after a second): a handler may notice that its
// client went away a little after the client did.
func (s *trialServer) all() ([]trialSpan, map[string]int) {
	for deadline := time.Now().Add(time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		s.mu.Lock()
		busy := 0
		for _, n := range s.inFlight {
			busy += n
		}
		s.mu.Unlock()
		if busy == 0 {
			break
		}
	}
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
	errs     map[string][]string // every OnError, with its time
}

func newTrialOutcomes() *trialOutcomes {
	return &trialOutcomes{final: map[string][]string{}, deferred: map[string]int{}, retried: map[string]int{}, handler: map[string][]error{}, errs: map[string][]string{}}
}

// attach registers the callbacks on c; call it after the Guard's Attach.
// Outcomes are recorded under the URL first visited, which the request's
// Ctx keeps across redirects and retries.
func (o *trialOutcomes) attach(c *colly.Collector) {
	c.OnRequest(func(r *colly.Request) {
		if r.Ctx.Get("trial-url") == "" {
			r.Ctx.Put("trial-url", r.URL.String())
		}
	})
	c.OnResponse(func(r *colly.Response) { o.addFinal(trialURL(r.Request), fmt.Sprintf("ok %d", r.StatusCode)) })
	c.OnError(func(r *colly.Response, err error) {
		u := trialURL(r.Request)
		o.mu.Lock()
		o.errs[u] = append(o.errs[u], fmt.Sprintf("%s %v", time.Now().Format("05.000"), err))
		o.mu.Unlock()
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

// trialURL returns the URL r was first visited at.
func trialURL(r *colly.Request) string {
	if u := r.Ctx.Get("trial-url"); u != "" {
		return u
	}
	return r.URL.String()
}

// errorHandler is a Guard.ErrorHandler recording into o.
func (o *trialOutcomes) errorHandler(r *colly.Request, err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.handler[trialURL(r)] = append(o.handler[trialURL(r)], err)
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
			t.Errorf("%s: final outcomes %q (deferred %d, retried %d; OnError %q), want exactly one", u, f, o.deferred[u], o.retried[u], o.errs[u])
			continue
		}
		n[f[0]]++
		// The Guard's own final outcomes reach ErrorHandler once too.
		want := 0
		if f[0] == "blocked" || f[0] == "gave up" || f[0] == "unreachable" || f[0] == "crawl-delay" {
			want = 1
		}
		if strings.HasSuffix(f[0], context.Canceled.Error()) {
			// The end of the crawl's context reaches OnError as colly
			// reports it, ErrorHandler as ErrGaveUp (doc.go).
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
	t.Parallel() // no goroutine count: runs after the tests that take one
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
		for i := 0; i < 8; i++ {
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
		if k := out.kinds(t, visited); k["ok 200"] != 8 {
			t.Errorf("FixedPace %v: outcomes %v, want 8 ok 200", fixed, k)
		}
	}
	s.checkPeak(t, func(string) int { return 1 })
	// Each Guard is a crawler of its own: one host name each.
	s.checkGap(t, "spiky-false.test", delay)
	s.checkGap(t, "spiky-true.test", delay)
}

// 429 and 503 with Retry-After in seconds and as an HTTP-date (also from
// a server whose clock is an hour ahead), 0, junk, and without it: nothing
// reaches the host before the pause ends (counted from the end of the
// response at the server), each page is fetched in the end and the
// retries are counted; a Retry-After of two days ends the host's pages at
// once.
func TestTrialARetryAfter(t *testing.T) {
	t.Parallel() // no goroutine count: runs after the tests that take one
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
		if first && r.URL.Path == "/p1" && r.Host != "far.test" { // far.test: whichever page comes first
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
			case "skew.test": // the server's clock is an hour ahead
				w.Header().Set("Date", now.Add(time.Hour).Format(http.TimeFormat))
				w.Header().Set("Retry-After", now.Add(time.Hour+time.Second).Format(http.TimeFormat))
				w.WriteHeader(http.StatusServiceUnavailable)
			case "zero.test":
				w.Header().Set("Retry-After", "0")
				w.WriteHeader(http.StatusTooManyRequests)
			case "junk.test":
				w.Header().Set("Retry-After", "soon, please")
				w.WriteHeader(http.StatusServiceUnavailable)
			}
			return
		}
		if r.Host == "far.test" {
			w.Header().Set("Retry-After", "172800") // two days
			w.WriteHeader(http.StatusServiceUnavailable)
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
	for _, h := range []string{"secs.test", "date.test", "none.test", "skew.test", "zero.test", "junk.test", "far.test"} {
		for i := 0; i < 4; i++ {
			u := fmt.Sprintf("http://%s/p%d", h, i)
			visited = append(visited, u)
			c.Visit(u)
		}
	}
	waitOrFail(t, "Wait", c.Wait)
	s.checkPeak(t, func(string) int { return 1 })
	if k := out.kinds(t, visited); k["ok 200"] != 24 || k["gave up"] != 4 {
		t.Errorf("outcomes %v, want 24 ok 200, 4 gave up (far.test: a pause beyond 24 hours)", k)
	}
	if n := len(s.hostSpans("far.test")); n != 2 {
		t.Errorf("far.test saw %d requests, want 2 (robots.txt, the page that asked for two days)", n)
	}
	for _, tt := range []struct {
		host  string
		pause time.Duration
	}{
		{"secs.test", time.Second}, {"date.test", time.Second}, {"none.test", 100 * time.Millisecond},
		{"skew.test", time.Second}, {"zero.test", 100 * time.Millisecond}, {"junk.test", 100 * time.Millisecond},
	} {
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
	if st.Total.Retried != 6 || out.totalRetried() != 6 {
		t.Errorf("Stats Retried %d, OnError saw %d retries; want 6", st.Total.Retried, out.totalRetried())
	}
	spans, _ := s.all()
	if st.Total.Sent != int64(len(spans)) || st.Total.Pages != 24 || st.Total.GaveUp != 4 {
		t.Errorf("Stats Sent %d, Pages %d, GaveUp %d; server saw %d requests, want 24 pages, 4 gave up", st.Total.Sent, st.Total.Pages, st.Total.GaveUp, len(spans))
	}
}

// Pages that fail: 500 every time, a connection reset in the middle of the
// body once, a body that never ends until colly's timeout. Each page ends
// in exactly one final outcome, each failing one after MaxRetries retries,
// the host never sees two requests at once, and Stats counts what the
// server saw.
func TestTrialAFailingPages(t *testing.T) {
	leaks := trialGoroutines(t)
	var mu sync.Mutex
	seen := map[string]int{}
	s := newTrialServer(t, func(w http.ResponseWriter, r *http.Request, load int) {
		if r.URL.Path == "/robots.txt" {
			return
		}
		mu.Lock()
		seen[r.URL.Path]++
		n := seen[r.URL.Path]
		mu.Unlock()
		switch {
		case strings.HasPrefix(r.URL.Path, "/e500"):
			w.WriteHeader(http.StatusInternalServerError)
		case strings.HasPrefix(r.URL.Path, "/reset") && n == 1:
			w.Header().Set("Content-Length", "10000")
			w.Write([]byte(strings.Repeat("x", 100)))
			w.(http.Flusher).Flush()
			panic(http.ErrAbortHandler)
		case strings.HasPrefix(r.URL.Path, "/endless"):
			w.(http.Flusher).Flush()
			tick := time.NewTicker(5 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-r.Context().Done():
					return
				case <-tick.C:
					w.Write([]byte("x"))
					w.(http.Flusher).Flush()
				}
			}
		default:
			fmt.Fprint(w, "ok")
		}
	})
	out := newTrialOutcomes()
	g := &Guard{Rate: rate.Inf, Backoff: 30 * time.Millisecond, MaxRetries: 2, MaxRobotsFailures: 2, ErrorHandler: out.errorHandler}
	c := colly.NewCollector(s.transport, g.Attach, colly.Async(true))
	c.SetRequestTimeout(200 * time.Millisecond)
	c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: 8})
	out.attach(c)
	var visited []string
	// Few pages: each failure cuts the host's rate (an unlimited host from
	// 100ms), so failing pages space the host out quickly.
	for _, p := range []string{"/e500a", "/reset1", "/endless", "/ok1", "/ok2"} {
		u := "http://fail.test" + p
		visited = append(visited, u)
		c.Visit(u)
	}
	waitOrFail(t, "Wait", c.Wait)
	s.checkPeak(t, func(string) int { return 1 })
	k := out.kinds(t, visited)
	if k["ok 200"] != 3 || k["gave up"] != 2 {
		t.Errorf("outcomes %v, want 3 ok 200, 2 gave up", k)
	}
	for p, want := range map[string]int{"/e500a": 3, "/endless": 3, "/reset1": 2, "/ok1": 1} {
		if n := s.count("fail.test", p); n != want {
			t.Errorf("%s arrived %d times, want %d (MaxRetries 2); OnError saw %q", p, n, want, out.errsOf("http://fail.test"+p))
		}
	}
	spans, _ := s.all()
	st := g.Stats()
	if st.Total.Sent != int64(len(spans)) || st.Total.Pages != 3 || st.Total.GaveUp != 2 || st.Total.Retried != int64(out.totalRetried()) || st.Total.Retried != 5 {
		t.Errorf("Stats Sent %d, Pages %d, GaveUp %d, Retried %d; server saw %d requests, want 3 pages, 2 gave up, 5 retries (OnError saw %d)",
			st.Total.Sent, st.Total.Pages, st.Total.GaveUp, st.Total.Retried, len(spans), out.totalRetried())
	}
	if st.InFlight != 0 || st.Waiting != 0 {
		t.Errorf("after Wait Stats InFlight %d, Waiting %d; want 0, 0 (timeouts and resets give their flights back)", st.InFlight, st.Waiting)
	}
	if hs, _ := g.hostStats("fail.test"); hs.Latency <= 0 || hs.Gap < hs.Latency {
		t.Errorf("fail.test HostStats Latency %v, Gap %v; want a smoothed latency and a gap at least as long", hs.Latency, hs.Gap)
	}
	leaks(s)
}

// Redirects across hosts: into a path the target's robots.txt disallows
// (never requested, reported blocked), to an allowed page of a host that
// is being crawled at the same time (its place is shared: never two at
// once), and a chain through a host with a Crawl-delay.
func TestTrialARedirectsAcrossHosts(t *testing.T) {
	t.Parallel() // no goroutine count: runs after the tests that take one
	s := newTrialServer(t, func(w http.ResponseWriter, r *http.Request, load int) {
		if r.URL.Path == "/robots.txt" {
			switch r.Host {
			case "b.test":
				fmt.Fprint(w, "User-agent: *\nDisallow: /private\n")
			case "c.test":
				fmt.Fprint(w, "User-agent: *\nCrawl-delay: 0.05\n")
			}
			return
		}
		if r.Host == "a.test" && strings.HasPrefix(r.URL.Path, "/to-private") {
			http.Redirect(w, r, "http://b.test/private"+r.URL.Path, http.StatusFound)
			return
		}
		if r.Host == "a.test" && strings.HasPrefix(r.URL.Path, "/to-b") {
			http.Redirect(w, r, "http://b.test/page"+r.URL.Path, http.StatusMovedPermanently)
			return
		}
		if r.Host == "a.test" && strings.HasPrefix(r.URL.Path, "/to-c") {
			http.Redirect(w, r, "http://c.test"+r.URL.Path, http.StatusFound)
			return
		}
		time.Sleep(5 * time.Millisecond)
		fmt.Fprint(w, "ok")
	})
	out := newTrialOutcomes()
	g := &Guard{Rate: rate.Inf, ErrorHandler: out.errorHandler}
	c := colly.NewCollector(s.transport, g.Attach, colly.Async(true))
	c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: 8})
	out.attach(c)
	var visited []string
	visit := func(u string) {
		visited = append(visited, u)
		c.Visit(u)
	}
	for i := 0; i < 5; i++ {
		visit(fmt.Sprintf("http://a.test/to-private%d", i))
		visit(fmt.Sprintf("http://a.test/to-b%d", i))
		visit(fmt.Sprintf("http://a.test/to-c%d", i))
		visit(fmt.Sprintf("http://b.test/own%d", i))
		visit(fmt.Sprintf("http://c.test/own%d", i))
	}
	waitOrFail(t, "Wait", c.Wait)
	s.checkPeak(t, func(string) int { return 1 })
	s.checkGap(t, "c.test", 50*time.Millisecond)
	spans, _ := s.all()
	for _, sp := range spans {
		if strings.HasPrefix(sp.path, "/private") {
			t.Errorf("disallowed %s%s arrived", sp.host, sp.path)
		}
	}
	k := out.kinds(t, visited)
	if k["ok 200"] != 20 || k["blocked"] != 5 {
		t.Errorf("outcomes %v, want 20 ok 200, 5 blocked", k)
	}
	if st := g.Stats(); st.Total.Sent != int64(len(spans)) || st.Total.Pages != 20 || st.Total.Blocked != 5 {
		t.Errorf("Stats Sent %d, Pages %d, Blocked %d; server saw %d requests, want 20 pages, 5 blocked", st.Total.Sent, st.Total.Pages, st.Total.Blocked, len(spans))
	}
}

// errsOf returns what OnError saw for u.
func (o *trialOutcomes) errsOf(u string) []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]string(nil), o.errs[u]...)
}

// robots.txt that is slow, 503, 404, 403, redirected to another host,
// hangs past its timeout, never ends, is huge, or asks for a Crawl-delay
// above policy.MaxCrawlDelay: one fetch per host, pages wait for it and
// never pass a rule, the unreachable ones end with ErrRobotsUnreachable and
// send nothing (MaxRobotsFailures 1: robots.txt asked once).
func TestTrialAMisbehavingRobots(t *testing.T) {
	leaks := trialGoroutines(t)
	huge := "User-agent: *\nDisallow: /early\n" + strings.Repeat("# padding padding padding padding padding padding padding\n", 12000) + "Disallow: /late\n"
	s := newTrialServer(t, func(w http.ResponseWriter, r *http.Request, load int) {
		if r.URL.Path != "/robots.txt" {
			fmt.Fprint(w, "ok")
			return
		}
		switch r.Host {
		case "slow.test":
			time.Sleep(150 * time.Millisecond)
			fmt.Fprint(w, "User-agent: *\nDisallow: /private\n")
		case "e503.test":
			w.WriteHeader(http.StatusServiceUnavailable)
		case "e404.test":
			http.NotFound(w, r)
		case "redir.test":
			http.Redirect(w, r, "http://other.test/robots.txt", http.StatusMovedPermanently)
		case "other.test":
			fmt.Fprint(w, "User-agent: *\nDisallow: /private\n")
		case "hang.test":
			<-r.Context().Done()
		case "huge.test":
			fmt.Fprint(w, huge)
		case "e403.test":
			w.WriteHeader(http.StatusForbidden)
		case "long.test":
			fmt.Fprint(w, "User-agent: *\nCrawl-delay: 400\n")
		case "drip.test": // a body that never ends, slowly
			fmt.Fprint(w, "User-agent: *\nDisallow: /private\n")
			for {
				w.(http.Flusher).Flush()
				select {
				case <-r.Context().Done():
					return
				case <-time.After(5 * time.Millisecond):
					fmt.Fprint(w, "# more\n")
				}
			}
		}
	})
	out := newTrialOutcomes()
	// robots.txt's fetch times out after 1 s: slow.test's answer (150 ms)
	// comes well within it even under -race on a loaded machine, hang.test's
	// and drip.test's never do.
	g := &Guard{Rate: rate.Inf, MaxRetries: -1, MaxRobotsFailures: 1, ErrorHandler: out.errorHandler, robotsLimit: time.Second}
	c := colly.NewCollector(s.transport, g.Attach, colly.Async(true))
	c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: 8})
	out.attach(c)
	want := map[string]string{}
	visit := func(u, outcome string) {
		want[u] = outcome
		c.Visit(u)
	}
	for i := 0; i < 3; i++ {
		visit(fmt.Sprintf("http://slow.test/a%d", i), "ok 200")
		visit(fmt.Sprintf("http://slow.test/private/%d", i), "blocked")
		visit(fmt.Sprintf("http://e503.test/a%d", i), "unreachable")
		visit(fmt.Sprintf("http://e404.test/private/%d", i), "ok 200")
		visit(fmt.Sprintf("http://redir.test/a%d", i), "ok 200")
		visit(fmt.Sprintf("http://redir.test/private/%d", i), "blocked")
		visit(fmt.Sprintf("http://hang.test/a%d", i), "unreachable")
		visit(fmt.Sprintf("http://huge.test/early/%d", i), "blocked")
		visit(fmt.Sprintf("http://huge.test/late/%d", i), "ok 200")
		visit(fmt.Sprintf("http://e403.test/private/%d", i), "ok 200") // 4xx: no rules (RFC 9309 §2.3.1.3)
		visit(fmt.Sprintf("http://drip.test/private/%d", i), "")       // blocked or unreachable, never sent
		visit(fmt.Sprintf("http://long.test/a%d", i), "crawl-delay")   // above policy.MaxCrawlDelay
	}
	trialWait(t, "Wait", c.Wait)
	s.checkPeak(t, func(string) int { return 1 })
	var visited []string
	for u := range want {
		visited = append(visited, u)
	}
	out.kinds(t, visited)
	out.mu.Lock()
	for u, w := range want {
		if f := out.final[u]; len(f) == 1 && w != "" && f[0] != w {
			t.Errorf("%s: final %q, want %q", u, f[0], w)
		}
	}
	out.mu.Unlock()
	spans, _ := s.all()
	for _, sp := range spans {
		if strings.HasPrefix(sp.path, "/private") && sp.host != "e404.test" && sp.host != "e403.test" || strings.HasPrefix(sp.path, "/early") ||
			sp.path != "/robots.txt" && (sp.host == "e503.test" || sp.host == "hang.test" || sp.host == "long.test") {
			t.Errorf("%s%s arrived, want it never sent", sp.host, sp.path)
		}
	}
	for _, h := range []string{"slow.test", "e503.test", "e404.test", "redir.test", "other.test", "hang.test", "huge.test", "e403.test", "drip.test", "long.test"} {
		if n := s.count(h, "/robots.txt"); n != 1 {
			t.Errorf("%s/robots.txt fetched %d times, want 1", h, n)
		}
	}
	st := g.Stats()
	if st.Total.Sent != int64(len(spans)) || st.Total.Pages != 15 || st.Total.Blocked+st.Total.GaveUp != 9+6+3+3 {
		t.Errorf("Stats Sent %d, Pages %d, Blocked %d, GaveUp %d; server saw %d requests, want 15 pages, 21 blocked or gave up",
			st.Total.Sent, st.Total.Pages, st.Total.Blocked, st.Total.GaveUp, len(spans))
	}
	leaks(s)
}

// A short MaxWait with a host that answers slowly and a host that answers
// 503 with Retry-After: requests are deferred rather than hold colly's
// threads, each deferral and retry reaches OnError and Stats alike, and
// every page ends fetched exactly once; hosts with per-host rules keep
// their own limits at the server.
func TestTrialADeferralsAndHostRules(t *testing.T) {
	t.Parallel() // no goroutine count: runs after the tests that take one
	var mu sync.Mutex
	n503 := 0
	s := newTrialServer(t, func(w http.ResponseWriter, r *http.Request, load int) {
		if r.URL.Path == "/robots.txt" {
			if r.Host == "delay.test" {
				fmt.Fprint(w, "User-agent: *\nCrawl-delay: 0.04\n")
			}
			return
		}
		switch r.Host {
		case "busy.test":
			mu.Lock()
			n503++
			first := n503 == 1
			mu.Unlock()
			if first {
				w.Header().Set("Retry-After", "1")
				w.WriteHeader(http.StatusServiceUnavailable)
				return
			}
		case "slow.test", "wide.test":
			time.Sleep(time.Duration(load) * 20 * time.Millisecond)
		}
		fmt.Fprint(w, "ok")
	})
	out := newTrialOutcomes()
	g := &Guard{
		Rate:         rate.Inf,
		MaxWait:      30 * time.Millisecond,
		ErrorHandler: out.errorHandler,
		Hosts: []HostRule{
			{Host: "wide.test", InFlight: 3},
			{Host: "delay.*", Rate: rate.Inf, InFlight: 4}, // never faster than its Crawl-delay
		},
	}
	c := colly.NewCollector(s.transport, g.Attach, colly.Async(true))
	c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: 8})
	out.attach(c)
	var visited []string
	for i := 0; i < 6; i++ {
		for _, h := range []string{"busy.test", "slow.test", "wide.test", "delay.test", "fast.test"} {
			u := fmt.Sprintf("http://%s/p%d", h, i)
			visited = append(visited, u)
			c.Visit(u)
		}
	}
	waitOrFail(t, "Wait", c.Wait)
	s.checkPeak(t, func(h string) int {
		switch h {
		case "wide.test":
			return 3
		case "delay.test":
			return 4
		}
		return 1
	})
	s.checkGap(t, "delay.test", 40*time.Millisecond)
	if k := out.kinds(t, visited); k["ok 200"] != len(visited) {
		t.Errorf("outcomes %v, want %d ok 200", k, len(visited))
	}
	busy := s.hostSpans("busy.test")
	for i := 1; i < len(busy); i++ {
		if busy[0].status == http.StatusServiceUnavailable && busy[i].start.Sub(busy[0].end) < time.Second-slack {
			t.Errorf("busy.test: %s arrived %v after the 503 with Retry-After: 1 ended", busy[i].path, busy[i].start.Sub(busy[0].end))
		}
	}
	spans, _ := s.all()
	st := g.Stats()
	out.mu.Lock()
	deferred := 0
	for _, n := range out.deferred {
		deferred += n
	}
	out.mu.Unlock()
	if st.Total.Sent != int64(len(spans)) || st.Total.Pages != int64(len(visited)) || st.Total.Retried != 1 ||
		st.Total.Deferred != int64(deferred) || st.Total.GaveUp != 0 {
		t.Errorf("Stats %+v; server saw %d requests, OnError saw %d deferrals; want %d pages, 1 retry",
			st.Total, len(spans), deferred, len(visited))
	}
	if deferred == 0 {
		t.Errorf("no request deferred with MaxWait 30ms")
	}
}

// robots.txt answering 429 with Retry-After once: the origin's pages wait
// (deferred, nothing sent) until robots.txt is asked again after the
// pause, then are fetched; a synchronous collector's Visit waits for
// robots.txt's retry in place (inplace.go) and returns the page's final
// outcome.
func TestTrialARobotsRetryAfterSync(t *testing.T) {
	t.Parallel() // no goroutine count: runs after the tests that take one
	var mu sync.Mutex
	asked := 0
	s := newTrialServer(t, func(w http.ResponseWriter, r *http.Request, load int) {
		if r.URL.Path == "/robots.txt" {
			mu.Lock()
			asked++
			first := asked == 1
			mu.Unlock()
			if first {
				w.Header().Set("Retry-After", "1")
				w.WriteHeader(http.StatusTooManyRequests)
				return
			}
			fmt.Fprint(w, "User-agent: *\nDisallow: /private\n")
			return
		}
		fmt.Fprint(w, "ok")
	})
	out := newTrialOutcomes()
	g := &Guard{Rate: rate.Inf, MaxWait: 50 * time.Millisecond, ErrorHandler: out.errorHandler}
	c := colly.NewCollector(s.transport, g.Attach)
	out.attach(c)
	var visited []string
	for i := 0; i < 3; i++ {
		for _, p := range []string{"/a", "/private/"} {
			u := fmt.Sprintf("http://ra.test%s%d", p, i)
			visited = append(visited, u)
			if err := c.Visit(u); i == 0 && p == "/a" && err != nil {
				t.Errorf("Visit(%s) = %v, want nil (fetched once robots.txt was asked again)", u, err)
			}
		}
	}
	waitOrFail(t, "Wait", c.Wait)
	s.checkPeak(t, func(string) int { return 1 })
	if k := out.kinds(t, visited); k["ok 200"] != 3 || k["blocked"] != 3 {
		t.Errorf("outcomes %v, want 3 ok 200, 3 blocked", k)
	}
	spans := s.hostSpans("ra.test")
	if len(spans) < 2 || spans[0].status != http.StatusTooManyRequests {
		t.Fatalf("server saw %d requests, first %+v; want robots.txt's 429 first", len(spans), spans)
	}
	for _, sp := range spans[1:] {
		if d := sp.start.Sub(spans[0].end); d < time.Second-slack {
			t.Errorf("%s arrived %v after robots.txt's 429 with Retry-After: 1 ended", sp.path, d)
		}
		if strings.HasPrefix(sp.path, "/private") {
			t.Errorf("disallowed %s arrived", sp.path)
		}
	}
	if st := g.Stats(); st.Total.Sent != int64(len(spans)) || st.Total.Pages != 3 || st.Total.Blocked != 3 || st.Total.GaveUp != 0 {
		t.Errorf("Stats %+v; server saw %d requests; want 3 pages, 3 blocked", st.Total, len(spans))
	}
}

// A redirect loop across two hosts ends after colly's 10 hops with one
// final error, each hop paced by its host (never two at once), and a
// cancelled crawl of many hosts, two of whose pages wait for a robots.txt
// that never answers, ends every request with a final outcome and leaves
// no goroutine behind.
func TestTrialARedirectLoopAndCancel(t *testing.T) {
	leaks := trialGoroutines(t)
	s := newTrialServer(t, func(w http.ResponseWriter, r *http.Request, load int) {
		if r.URL.Path == "/robots.txt" {
			if r.Host == "hang.test" {
				<-r.Context().Done() // until the client gives up
			}
			return
		}
		switch {
		case r.URL.Path == "/loop" && r.Host == "ping.test":
			http.Redirect(w, r, "http://pong.test/loop", http.StatusFound)
			return
		case r.URL.Path == "/loop":
			http.Redirect(w, r, "http://ping.test/loop", http.StatusFound)
			return
		}
		time.Sleep(10 * time.Millisecond)
		fmt.Fprint(w, "ok")
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := newTrialOutcomes()
	g := &Guard{Rate: 20, ErrorHandler: out.errorHandler}
	c := colly.NewCollector(s.transport, g.Attach, colly.Async(true), colly.StdlibContext(ctx))
	c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: 8})
	out.attach(c)
	visited := []string{"http://ping.test/loop", "http://hang.test/a", "http://hang.test/b"}
	for _, u := range visited {
		c.Visit(u)
	}
	for i := 0; i < 40; i++ {
		for j := 0; j < 5; j++ {
			u := fmt.Sprintf("http://h%02d.test/p%d", i, j)
			visited = append(visited, u)
			c.Visit(u)
		}
	}
	time.Sleep(700 * time.Millisecond)
	cancel()
	sentAtCancel := g.Stats().Total.Sent
	srvAtCancel, _ := s.all()
	waitOrFail(t, "Wait", c.Wait)
	// Once the crawl's context has ended nothing is sent; at most the
	// requests then past their gate (Parallelism 8) are counted later.
	if after := g.Stats().Total.Sent; after-sentAtCancel > 8 {
		t.Errorf("Stats Sent %d when the context ended (the server had seen %d), %d after Wait; want at most 8 more", sentAtCancel, len(srvAtCancel), after)
	}
	s.checkPeak(t, func(string) int { return 1 })
	k := out.kinds(t, visited)
	out.mu.Lock()
	loop := out.final[visited[0]]
	out.mu.Unlock()
	if len(loop) != 1 || !strings.Contains(loop[0], "redirect") && !strings.Contains(loop[0], "already visited") {
		t.Errorf("redirect loop: final %q, want colly's error about redirects or a URL visited already", loop)
	}
	spans, _ := s.all()
	st := g.Stats()
	// Requests past their gate when the context ended may never reach
	// the server: Sent may exceed what it saw, never fall short. The
	// loop's last redirect, which colly did not follow, is its page.
	if st.Total.Sent < int64(len(spans)) || st.Total.Pages != int64(k["ok 200"])+1 || st.Waiting != 0 || st.InFlight != 0 {
		t.Errorf("Stats %+v Waiting %d InFlight %d; server saw %d requests, %d pages fetched (outcomes %v)", st.Total, st.Waiting, st.InFlight, len(spans), k["ok 200"], k)
	}
	leaks(s)
}

// A redirect into a host that is paused (503 with Retry-After) is not
// sent before the pause ends: the request is deferred and resumes at the
// hop, the hop's host sees nothing early, and each page ends once.
func TestTrialARedirectIntoPausedHost(t *testing.T) {
	t.Parallel() // no goroutine count: runs after the tests that take one
	var mu sync.Mutex
	first := true
	s := newTrialServer(t, func(w http.ResponseWriter, r *http.Request, load int) {
		if r.URL.Path == "/robots.txt" {
			return
		}
		if r.Host == "from.test" {
			http.Redirect(w, r, "http://to.test/landing"+r.URL.Path, http.StatusFound)
			return
		}
		mu.Lock()
		f := first
		first = false
		mu.Unlock()
		if f {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		fmt.Fprint(w, "ok")
	})
	out := newTrialOutcomes()
	g := &Guard{Rate: rate.Inf, MaxWait: 100 * time.Millisecond, ErrorHandler: out.errorHandler}
	c := colly.NewCollector(s.transport, g.Attach, colly.Async(true))
	c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: 8})
	out.attach(c)
	visited := []string{"http://to.test/first"}
	c.Visit(visited[0])
	time.Sleep(50 * time.Millisecond) // to.test answers 503 first
	for i := 0; i < 4; i++ {
		u := fmt.Sprintf("http://from.test/r%d", i)
		visited = append(visited, u)
		c.Visit(u)
	}
	waitOrFail(t, "Wait", c.Wait)
	s.checkPeak(t, func(string) int { return 1 })
	if k := out.kinds(t, visited); k["ok 200"] != len(visited) {
		t.Errorf("outcomes %v, want %d ok 200", k, len(visited))
	}
	to := s.hostSpans("to.test")
	if len(to) < 2 || to[1].status != http.StatusServiceUnavailable && to[0].status != http.StatusServiceUnavailable {
		t.Fatalf("to.test saw %+v, want its first page answered 503", to)
	}
	var pauseEnd time.Time
	for _, sp := range to {
		if sp.status == http.StatusServiceUnavailable {
			pauseEnd = sp.end.Add(time.Second)
			continue
		}
		if !pauseEnd.IsZero() && sp.start.Before(pauseEnd.Add(-slack)) {
			t.Errorf("to.test%s arrived %v before the end of its pause", sp.path, pauseEnd.Sub(sp.start))
		}
	}
	for i := 0; i < 4; i++ {
		if n := s.count("from.test", fmt.Sprintf("/r%d", i)); n != 1 {
			t.Errorf("from.test/r%d arrived %d times, want 1 (the request resumes at the hop)", i, n)
		}
		if n := s.count("to.test", fmt.Sprintf("/landing/r%d", i)); n != 1 {
			t.Errorf("to.test/landing/r%d arrived %d times, want 1", i, n)
		}
	}
	spans, _ := s.all()
	if st := g.Stats(); st.Total.Sent != int64(len(spans)) || st.Total.Pages != int64(len(visited)) || st.Total.GaveUp != 0 {
		t.Errorf("Stats %+v; server saw %d requests, want %d pages", st.Total, len(spans), len(visited))
	}
}

// With ParseHTTPErrorResponse a 503 is delivered to OnResponse, final,
// and still pauses the host for its Retry-After; a clone the Guard was
// not attached to is still held to robots.txt and the host's place.
func TestTrialAErrorPagesAndBareClone(t *testing.T) {
	t.Parallel() // no goroutine count: runs after the tests that take one
	var mu sync.Mutex
	first := true
	s := newTrialServer(t, func(w http.ResponseWriter, r *http.Request, load int) {
		if r.URL.Path == "/robots.txt" {
			fmt.Fprint(w, "User-agent: *\nDisallow: /private\n")
			return
		}
		mu.Lock()
		f := first && r.Host == "err.test"
		if f {
			first = false
		}
		mu.Unlock()
		if f {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		time.Sleep(5 * time.Millisecond)
		fmt.Fprint(w, "ok")
	})
	out := newTrialOutcomes()
	g := &Guard{Rate: rate.Inf, MaxWait: 50 * time.Millisecond, ErrorHandler: out.errorHandler}
	c := colly.NewCollector(s.transport, g.Attach, colly.Async(true), colly.ParseHTTPErrorResponse())
	c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: 8})
	out.attach(c)
	bare := c.Clone() // no Attach: the Guard's transport still admits its requests
	bare.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: 8})
	var bareErrs sync.Map
	bare.OnError(func(r *colly.Response, err error) { bareErrs.Store(r.Request.URL.String(), err) })
	var visited []string
	for i := 0; i < 4; i++ {
		u := fmt.Sprintf("http://err.test/p%d", i)
		visited = append(visited, u)
		c.Visit(u)
		if i == 0 {
			time.Sleep(30 * time.Millisecond)
		}
	}
	for i := 0; i < 3; i++ {
		bare.Visit(fmt.Sprintf("http://err.test/private/%d", i))
		bare.Visit(fmt.Sprintf("http://err.test/bare%d", i))
	}
	waitOrFail(t, "Wait", c.Wait)
	waitOrFail(t, "bare.Wait", bare.Wait)
	s.checkPeak(t, func(string) int { return 1 })
	k := out.kinds(t, visited)
	if k["ok 503"] != 1 || k["ok 200"] != 3 {
		t.Errorf("outcomes %v, want 1 ok 503 (ParseHTTPErrorResponse), 3 ok 200", k)
	}
	spans := s.hostSpans("err.test")
	var pauseEnd time.Time
	for _, sp := range spans {
		if strings.HasPrefix(sp.path, "/private") {
			t.Errorf("disallowed %s arrived (clone without Attach)", sp.path)
		}
		if sp.status == http.StatusServiceUnavailable {
			pauseEnd = sp.end.Add(time.Second)
		} else if !pauseEnd.IsZero() && sp.start.Before(pauseEnd.Add(-slack)) {
			t.Errorf("%s arrived %v before the end of the pause a 503 delivered to OnResponse asked for", sp.path, pauseEnd.Sub(sp.start))
		}
	}
	for i := 0; i < 3; i++ {
		u := fmt.Sprintf("http://err.test/private/%d", i)
		if err, _ := bareErrs.Load(u); err == nil || !errors.Is(err.(error), ErrDisallowed) {
			t.Errorf("clone without Attach: OnError(%s) = %v, want ErrDisallowed", u, err)
		}
	}

}

// colly's MaxRequests(3) on a host the Guard paces. colly counts every
// attempt, a deferral (nothing sent) included, so the deferred requests'
// re-sends are refused once three attempts were made, as doc.go and the
// README's outcome table say: each such URL ends given up, once, with
// colly's reason; none is lost, and no more than three requests reach the
// server.
func TestTrialAMaxRequestsWithDeferrals(t *testing.T) {
	s := newTrialServer(t, func(w http.ResponseWriter, r *http.Request, load int) { fmt.Fprint(w, "ok") })
	out := newTrialOutcomes()
	g := &Guard{Rate: 10, MaxWait: 20 * time.Millisecond, ErrorHandler: out.errorHandler}
	c := colly.NewCollector(s.transport, g.Attach, colly.Async(true), colly.MaxRequests(3))
	out.attach(c)
	var visited []string
	for i := 0; i < 6; i++ {
		u := fmt.Sprintf("http://max.test/p%d", i)
		if err := c.Visit(u); err != nil {
			continue // colly refused it at once: Visit's error is its outcome
		}
		visited = append(visited, u)
	}
	waitOrFail(t, "Wait", c.Wait)
	k := out.kinds(t, visited) // exactly one final outcome each
	if k["ok 200"]+k["gave up"] != len(visited) {
		t.Errorf("MaxRequests(3): outcomes %v of %d visits, want each fetched or given up", k, len(visited))
	}
	pages := 0
	for _, sp := range s.hostSpans("max.test") {
		if sp.path != "/robots.txt" {
			pages++
		}
	}
	if pages > 3 || pages != k["ok 200"] {
		t.Errorf("MaxRequests(3): server saw %d pages, %d fetched; want at most 3, all of them fetched", pages, k["ok 200"])
	}
}

// A plain net/http client through Guard.Transport and a colly crawl share
// each host: one request in flight per host at the server, the host's
// 503 with Retry-After pauses both, and a host rule's InFlight 2 holds
// for both while its latency grows with its load.
func TestTrialATransportAndCollyShareHosts(t *testing.T) {
	leaks := trialGoroutines(t)
	var mu sync.Mutex
	served := 0
	s := newTrialServer(t, func(w http.ResponseWriter, r *http.Request, load int) {
		if r.URL.Path == "/robots.txt" {
			return
		}
		if r.Host == "shared.test" {
			mu.Lock()
			served++
			n := served
			mu.Unlock()
			if n == 3 {
				w.Header().Set("Retry-After", "1")
				w.WriteHeader(http.StatusServiceUnavailable)
				return
			}
		}
		time.Sleep(time.Duration(load) * 10 * time.Millisecond)
		fmt.Fprint(w, "ok")
	})
	out := newTrialOutcomes()
	g := &Guard{Rate: rate.Inf, ErrorHandler: out.errorHandler, Hosts: []HostRule{{Host: "pair.test", InFlight: 2}}}
	c := colly.NewCollector(s.transport, g.Attach, colly.Async(true))
	c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: 8})
	out.attach(c)
	client := &http.Client{Transport: g.Transport(s.tr), Timeout: 5 * time.Second}
	var visited []string
	var wg sync.WaitGroup
	var failed sync.Map
	for i := 0; i < 5; i++ {
		for _, h := range []string{"shared.test", "pair.test"} {
			u := fmt.Sprintf("http://%s/c%d", h, i)
			visited = append(visited, u)
			c.Visit(u)
			wg.Add(1)
			go func(u string) {
				defer wg.Done()
				resp, err := client.Get(u)
				if err != nil {
					failed.Store(u, err)
					return
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					failed.Store(u, resp.Status)
				}
			}(fmt.Sprintf("http://%s/t%d", h, i))
		}
	}
	wg.Wait()
	waitOrFail(t, "Wait", c.Wait)
	s.checkPeak(t, func(h string) int {
		if h == "pair.test" {
			return 2
		}
		return 1
	})
	failed.Range(func(u, err any) bool {
		t.Errorf("Guard.Transport GET %s: %v, want 200 (a 503 is retried after its Retry-After)", u, err)
		return true
	})
	if k := out.kinds(t, visited); k["ok 200"] != len(visited) {
		t.Errorf("colly outcomes %v, want %d ok 200", k, len(visited))
	}
	var pauseEnd time.Time
	for _, sp := range s.hostSpans("shared.test") {
		if sp.status == http.StatusServiceUnavailable {
			pauseEnd = sp.end.Add(time.Second)
		} else if !pauseEnd.IsZero() && sp.start.Before(pauseEnd.Add(-slack)) {
			t.Errorf("shared.test%s arrived %v before the end of the pause", sp.path, pauseEnd.Sub(sp.start))
		}
	}
	if pauseEnd.IsZero() {
		t.Errorf("shared.test never answered 503")
	}
	spans, _ := s.all()
	if st := g.Stats(); st.Total.Sent != int64(len(spans)) {
		t.Errorf("Stats Sent %d, server saw %d requests", st.Total.Sent, len(spans))
	}
	leaks(s)
}

// Redirects within a host with a Crawl-delay: each hop waits the delay
// after the redirect's response ended; a hop answered 429 with
// Retry-After is retried after the pause; nothing is lost.
func TestTrialASameHostRedirectsWithCrawlDelay(t *testing.T) {
	t.Parallel() // no goroutine count: runs after the tests that take one
	var mu sync.Mutex
	hop429 := true
	s := newTrialServer(t, func(w http.ResponseWriter, r *http.Request, load int) {
		if r.URL.Path == "/robots.txt" {
			fmt.Fprint(w, "User-agent: *\nCrawl-delay: 0.05\nDisallow: /private\n")
			return
		}
		switch {
		case strings.HasPrefix(r.URL.Path, "/old"):
			http.Redirect(w, r, "/new"+strings.TrimPrefix(r.URL.Path, "/old"), http.StatusMovedPermanently)
			return
		case strings.HasPrefix(r.URL.Path, "/gone"):
			http.Redirect(w, r, "/private"+r.URL.Path, http.StatusFound)
			return
		case r.URL.Path == "/new1":
			mu.Lock()
			f := hop429
			hop429 = false
			mu.Unlock()
			if f {
				w.Header().Set("Retry-After", "1")
				w.WriteHeader(http.StatusTooManyRequests)
				return
			}
		}
		time.Sleep(5 * time.Millisecond)
		fmt.Fprint(w, "ok")
	})
	out := newTrialOutcomes()
	g := &Guard{Rate: rate.Inf, ErrorHandler: out.errorHandler}
	c := colly.NewCollector(s.transport, g.Attach, colly.Async(true))
	c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: 8})
	out.attach(c)
	var visited []string
	for i := 0; i < 3; i++ {
		for _, p := range []string{"/old", "/gone", "/plain"} {
			u := fmt.Sprintf("http://cd.test%s%d", p, i)
			visited = append(visited, u)
			c.Visit(u)
		}
	}
	waitOrFail(t, "Wait", c.Wait)
	s.checkPeak(t, func(string) int { return 1 })
	spans := s.hostSpans("cd.test")
	for i := 1; i < len(spans); i++ {
		gap := 50 * time.Millisecond
		if spans[i-1].status == http.StatusTooManyRequests {
			gap = time.Second
		}
		if d := spans[i].start.Sub(spans[i-1].end); d < gap-slack {
			t.Errorf("cd.test: %s arrived %v after %s (%d) ended, want ≥ %v", spans[i].path, d, spans[i-1].path, spans[i-1].status, gap)
		}
		if strings.HasPrefix(spans[i].path, "/private") {
			t.Errorf("disallowed %s arrived", spans[i].path)
		}
	}
	if k := out.kinds(t, visited); k["ok 200"] != 6 || k["blocked"] != 3 {
		t.Errorf("outcomes %v, want 6 ok 200, 3 blocked", k)
	}
	// A failed hop is retried from the first URL (colly's Retry); only
	// a deferred hop resumes at the hop (doc.go).
	if n, m := s.count("cd.test", "/old1"), s.count("cd.test", "/new1"); n != 2 || m != 2 {
		t.Errorf("/old1 arrived %d times, /new1 %d; want 2, 2 (the retry starts again at /old1)", n, m)
	}
	if st := g.Stats(); st.Total.Sent != int64(len(spans)) || st.Total.Pages != 6 || st.Total.Blocked != 3 || st.Total.Retried != 1 {
		t.Errorf("Stats %+v; server saw %d requests; want 6 pages, 3 blocked, 1 retried", st.Total, len(spans))
	}
}

// A synchronous crawl whose retried request redirects out of the
// collector's AllowedDomains: colly's redirect check refuses the hop (an
// outcome colly reports to OnError), and the page ends once, not also as
// given up.
func TestTrialASyncRetryRedirectsOutOfDomains(t *testing.T) {
	t.Parallel() // no goroutine count: runs after the tests that take one
	var mu sync.Mutex
	first := true
	s := newTrialServer(t, func(w http.ResponseWriter, r *http.Request, load int) {
		if r.URL.Path == "/robots.txt" {
			return
		}
		if r.URL.Path == "/moved" {
			mu.Lock()
			f := first
			first = false
			mu.Unlock()
			if f {
				w.WriteHeader(http.StatusBadGateway)
				return
			}
			http.Redirect(w, r, "http://elsewhere.test/x", http.StatusFound)
			return
		}
		fmt.Fprint(w, "ok")
	})
	out := newTrialOutcomes()
	g := &Guard{Rate: rate.Inf, Backoff: 60 * time.Millisecond, ErrorHandler: out.errorHandler}
	c := colly.NewCollector(s.transport, g.Attach, colly.AllowedDomains("sync.test"))
	out.attach(c)
	visited := []string{"http://sync.test/home", "http://sync.test/moved", "http://sync.test/other"}
	for _, u := range visited {
		c.Visit(u)
	}
	waitOrFail(t, "Wait", c.Wait)
	s.checkPeak(t, func(string) int { return 1 })
	k := out.kinds(t, visited)
	if k["ok 200"] != 2 {
		t.Errorf("outcomes %v, want 2 ok 200 and /moved's one final outcome", k)
	}
	if n := s.count("sync.test", "/moved"); n != 2 {
		t.Errorf("/moved arrived %d times, want 2", n)
	}
	if n := len(s.hostSpans("elsewhere.test")); n != 0 {
		t.Errorf("elsewhere.test saw %d requests, want none (not in AllowedDomains)", n)
	}
}

// colly's queue with two threads over 100 small hosts, a host with a
// Crawl-delay and many pages, and a host that pauses with a 503, with a
// short MaxWait: the threads keep moving, every page is fetched exactly
// once, and each host's limits hold at the server.
func TestTrialAQueueWithSlowHosts(t *testing.T) {
	t.Parallel() // no goroutine count: runs after the tests that take one
	var mu sync.Mutex
	first := true
	s := newTrialServer(t, func(w http.ResponseWriter, r *http.Request, load int) {
		if r.URL.Path == "/robots.txt" {
			if r.Host == "delay.test" {
				fmt.Fprint(w, "User-agent: *\nCrawl-delay: 0.03\n")
			}
			return
		}
		if r.Host == "pause.test" {
			mu.Lock()
			f := first
			first = false
			mu.Unlock()
			if f {
				w.Header().Set("Retry-After", "1")
				w.WriteHeader(http.StatusServiceUnavailable)
				return
			}
		}
		time.Sleep(2 * time.Millisecond)
		fmt.Fprint(w, "ok")
	})
	out := newTrialOutcomes()
	g := &Guard{Rate: rate.Inf, MaxWait: 50 * time.Millisecond, ErrorHandler: out.errorHandler}
	c := colly.NewCollector(s.transport, g.Attach)
	out.attach(c)
	q, err := queue.New(2, &queue.InMemoryQueueStorage{MaxSize: 10000})
	if err != nil {
		t.Fatal(err)
	}
	var visited []string
	add := func(u string) {
		visited = append(visited, u)
		q.AddURL(u)
	}
	for i := 0; i < 20; i++ {
		add(fmt.Sprintf("http://delay.test/p%d", i))
		if i < 6 {
			add(fmt.Sprintf("http://pause.test/p%d", i))
		}
		for j := 0; j < 5; j++ {
			add(fmt.Sprintf("http://h%02d.test/p%d", 5*i+j, i))
			add(fmt.Sprintf("http://h%02d.test/q%d", 5*i+j, i))
		}
	}
	if err := q.Run(c); err != nil {
		t.Fatal(err)
	}
	waitOrFail(t, "Wait", c.Wait)
	s.checkPeak(t, func(string) int { return 1 })
	s.checkGap(t, "delay.test", 30*time.Millisecond)
	if k := out.kinds(t, visited); k["ok 200"] != len(visited) {
		t.Errorf("outcomes %v, want %d ok 200", k, len(visited))
	}
	spans, _ := s.all()
	seen := map[string]int{}
	for _, sp := range spans {
		if sp.status == http.StatusOK {
			seen[sp.host+sp.path]++
		}
	}
	for u, n := range seen {
		if n > 1 && !strings.HasSuffix(u, "/robots.txt") {
			t.Errorf("%s fetched %d times, want once", u, n)
		}
	}
	if st := g.Stats(); st.Total.Sent != int64(len(spans)) || st.Total.Pages != int64(len(visited)) || st.Total.Retried != 1 || st.Waiting != 0 {
		t.Errorf("Stats %+v Waiting %d; server saw %d requests, want %d pages, 1 retry", st.Total, st.Waiting, len(spans), len(visited))
	}
}

// trialWait runs wait and, if it does not return within the failsafe,
// fails t with every goroutine's stack.
func trialWait(t *testing.T, what string, wait func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(failsafe):
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		t.Fatalf("%s did not return within %v:\n%s", what, failsafe, buf)
	}
}

// robots.txt answering 503 (no Retry-After) strikes its host, which is
// then paused for the back-off (about a minute). With MaxRetries -1
// (robots.txt asked once; README: "its pages end with
// ErrRobotsUnreachable after one failed fetch, 30 s at most") a page
// visited after that failure must end at once with ErrRobotsUnreachable,
// as the pages that waited for the fetch did, not be deferred to the end
// of the host's pause.
func TestTrialARobotsFailedThenPausedHost(t *testing.T) {
	t.Parallel() // no goroutine count: runs after the tests that take one
	s := newTrialServer(t, func(w http.ResponseWriter, r *http.Request, load int) {
		if r.URL.Path == "/robots.txt" {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		fmt.Fprint(w, "ok")
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := newTrialOutcomes()
	g := &Guard{Rate: rate.Inf, MaxRetries: -1, MaxRobotsFailures: 1, ErrorHandler: out.errorHandler}
	c := colly.NewCollector(s.transport, g.Attach, colly.StdlibContext(ctx))
	out.attach(c)
	for i := 0; i < 3; i++ {
		u := fmt.Sprintf("http://down.test/a%d", i)
		if err := c.Visit(u); !errors.Is(err, ErrRobotsUnreachable) {
			t.Errorf("Visit(%s) after robots.txt answered 503 = %v, want ErrRobotsUnreachable at once", u, err)
		}
	}
	cancel() // nothing is left to wait for; a deferred page would hold Wait for a minute
	waitOrFail(t, "Wait", c.Wait)
	if n := s.count("down.test", "/robots.txt"); n != 1 {
		t.Errorf("robots.txt fetched %d times, want 1 (MaxRetries -1)", n)
	}
	if n := len(s.hostSpans("down.test")); n != 1 {
		t.Errorf("down.test saw %d requests, want only robots.txt", n)
	}
}

// A storm of 500s over 30 hosts: every page is tried 1+MaxRetries times
// at the server, then ends once with ErrGaveUp, and Stats agrees; a
// fragile host's rule (a slower Rate) spaces its starts, with Jitter
// never sooner.
func TestTrialAErrorStormAndFragileHost(t *testing.T) {
	t.Parallel() // no goroutine count: runs after the tests that take one
	s := newTrialServer(t, func(w http.ResponseWriter, r *http.Request, load int) {
		if r.URL.Path == "/robots.txt" {
			return
		}
		if r.Host == "fragile.test" {
			fmt.Fprint(w, "ok")
			return
		}
		w.WriteHeader(http.StatusInternalServerError)
	})
	out := newTrialOutcomes()
	g := &Guard{
		Rate: rate.Inf, Backoff: 20 * time.Millisecond, MaxRetries: 1, MaxRobotsFailures: 1, Jitter: 0.5, ErrorHandler: out.errorHandler,
		Hosts: []HostRule{{Host: "fragile.test", Rate: 10}},
	}
	c := colly.NewCollector(s.transport, g.Attach, colly.Async(true))
	c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: 8})
	out.attach(c)
	var visited []string
	for i := 0; i < 30; i++ {
		for j := 0; j < 2; j++ {
			u := fmt.Sprintf("http://s%02d.test/p%d", i, j)
			visited = append(visited, u)
			c.Visit(u)
		}
	}
	for i := 0; i < 6; i++ {
		u := fmt.Sprintf("http://fragile.test/p%d", i)
		visited = append(visited, u)
		c.Visit(u)
	}
	waitOrFail(t, "Wait", c.Wait)
	s.checkPeak(t, func(string) int { return 1 })
	if k := out.kinds(t, visited); k["gave up"] != 60 || k["ok 200"] != 6 {
		t.Errorf("outcomes %v, want 60 gave up, 6 ok 200", k)
	}
	spans, _ := s.all()
	per := map[string]int{}
	for _, sp := range spans {
		per[sp.host+sp.path]++
	}
	for _, u := range visited {
		want := 2
		if strings.Contains(u, "fragile") {
			want = 1
		}
		if n := per[strings.TrimPrefix(u, "http://")]; n != want {
			t.Errorf("%s arrived %d times, want %d (MaxRetries 1)", u, n, want)
		}
	}
	fragile := s.hostSpans("fragile.test")
	for i := 1; i < len(fragile); i++ {
		if d := fragile[i].start.Sub(fragile[i-1].start); d < 100*time.Millisecond-arrivalJitter {
			t.Errorf("fragile.test: %s started %v after %s, want ≥ 100ms (its rule's Rate 10)", fragile[i].path, d, fragile[i-1].path)
		}
	}
	st := g.Stats()
	if st.Total.Sent != int64(len(spans)) || st.Total.GaveUp != 60 || st.Total.Retried != 60 || st.Total.Pages != 6 || st.Total.Backoffs == 0 {
		t.Errorf("Stats %+v; server saw %d requests; want 60 gave up, 60 retried, 6 pages, back-offs", st.Total, len(spans))
	}
}

// A synchronous collector over 20 hosts that each answer their first page
// 503 with Retry-After: 1: more retries at once than the Guard's 16
// goroutines for them; each page is fetched once in the end, each host
// sees one request at a time and nothing before its pause ends, and no
// goroutine is left after Wait.
func TestTrialASyncManyRetries(t *testing.T) {
	leaks := trialGoroutines(t)
	var mu sync.Mutex
	failed := map[string]bool{}
	s := newTrialServer(t, func(w http.ResponseWriter, r *http.Request, load int) {
		if r.URL.Path == "/robots.txt" {
			return
		}
		mu.Lock()
		first := !failed[r.Host]
		failed[r.Host] = true
		mu.Unlock()
		if first {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		fmt.Fprint(w, "ok")
	})
	out := newTrialOutcomes()
	g := &Guard{Rate: rate.Inf, MaxWait: 50 * time.Millisecond, ErrorHandler: out.errorHandler}
	c := colly.NewCollector(s.transport, g.Attach)
	out.attach(c)
	var visited []string
	for i := 0; i < 20; i++ {
		for j := 0; j < 2; j++ {
			u := fmt.Sprintf("http://r%02d.test/p%d", i, j)
			visited = append(visited, u)
			c.Visit(u)
		}
	}
	waitOrFail(t, "Wait", c.Wait)
	s.checkPeak(t, func(string) int { return 1 })
	if k := out.kinds(t, visited); k["ok 200"] != 40 {
		t.Errorf("outcomes %v, want 40 ok 200", k)
	}
	for i := 0; i < 20; i++ {
		spans := s.hostSpans(fmt.Sprintf("r%02d.test", i))
		var end time.Time
		for _, sp := range spans {
			if sp.status == http.StatusServiceUnavailable {
				end = sp.end.Add(time.Second)
			} else if sp.path != "/robots.txt" && !end.IsZero() && sp.start.Before(end.Add(-slack)) {
				t.Errorf("r%02d.test%s arrived %v before its host's pause ended", i, sp.path, end.Sub(sp.start))
			}
		}
	}
	spans, _ := s.all()
	if st := g.Stats(); st.Total.Sent != int64(len(spans)) || st.Total.Pages != 40 || st.Total.Retried != 20 || st.Waiting != 0 {
		t.Errorf("Stats %+v Waiting %d; server saw %d requests, want 40 pages, 20 retries", st.Total, st.Waiting, len(spans))
	}
	leaks(s)
}

// Seed's sitemap walk and the pages it visits share the host's one place
// and its Crawl-delay at the server, on a host that slows down under load.
func TestTrialASeedSharesHost(t *testing.T) {
	t.Parallel() // no goroutine count: runs after the tests that take one
	s := newTrialServer(t, func(w http.ResponseWriter, r *http.Request, load int) {
		time.Sleep(time.Duration(load) * 3 * time.Millisecond)
		switch {
		case r.URL.Path == "/robots.txt":
			fmt.Fprint(w, "User-agent: *\nCrawl-delay: 0.02\nDisallow: /private\nSitemap: http://seed.test/index.xml\n")
		case r.URL.Path == "/index.xml":
			fmt.Fprint(w, `<?xml version="1.0"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`+
				`<sitemap><loc>http://seed.test/s1.xml</loc></sitemap><sitemap><loc>http://seed.test/s2.xml</loc></sitemap></sitemapindex>`)
		case strings.HasSuffix(r.URL.Path, ".xml"):
			fmt.Fprint(w, `<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`)
			for i := 0; i < 6; i++ {
				fmt.Fprintf(w, "<url><loc>http://seed.test%s/p%d</loc></url>", strings.TrimSuffix(r.URL.Path, ".xml"), i)
			}
			fmt.Fprintf(w, "<url><loc>http://seed.test/private%s</loc></url></urlset>", strings.TrimSuffix(r.URL.Path, ".xml"))
		default:
			fmt.Fprint(w, "ok")
		}
	})
	out := newTrialOutcomes()
	g := &Guard{Rate: rate.Inf, ErrorHandler: out.errorHandler}
	c := colly.NewCollector(s.transport, g.Attach, colly.Async(true))
	c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: 8})
	out.attach(c)
	st, err := g.Seed(c, "http://seed.test")
	if err != nil {
		t.Fatalf("Seed: %v", err)
	}
	waitOrFail(t, "Wait", c.Wait)
	s.checkPeak(t, func(string) int { return 1 })
	s.checkGap(t, "seed.test", 20*time.Millisecond)
	var visited []string
	for _, sm := range []string{"/s1", "/s2"} {
		for i := 0; i < 6; i++ {
			visited = append(visited, fmt.Sprintf("http://seed.test%s/p%d", sm, i))
		}
	}
	if k := out.kinds(t, visited); k["ok 200"] != 12 || st.Queued != 12 {
		t.Errorf("outcomes %v, Seed queued %d; want 12 ok 200, 12 queued (SeedStats %+v)", k, st.Queued, st)
	}
	spans, _ := s.all()
	for _, sp := range spans {
		if strings.HasPrefix(sp.path, "/private") {
			t.Errorf("disallowed %s arrived", sp.path)
		}
	}
	if gs := g.Stats(); gs.Total.Sent != int64(len(spans)) || gs.Total.Pages != 12 {
		t.Errorf("Stats Sent %d, Pages %d; server saw %d requests, want 12 pages", gs.Total.Sent, gs.Total.Pages, len(spans))
	}
}
