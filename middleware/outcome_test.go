package robotsmw

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocolly/colly/v2"
	"github.com/gocolly/colly/v2/queue"
	"golang.org/x/time/rate"
)

// waitOrFail runs wait and fails the test if it does not return within the
// failsafe: the defects these tests cover made Wait hang.
func waitOrFail(t *testing.T, what string, wait func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(failsafe):
		t.Fatalf("%s did not return within %v", what, failsafe)
	}
}

// An outcomeLog records what colly's OnError and OnResponse callbacks saw,
// in order, per URL path.
type outcomeLog struct {
	mu   sync.Mutex // guards seen
	seen map[string][]string
}

func (l *outcomeLog) attach(c *colly.Collector) {
	c.OnResponse(func(r *colly.Response) { l.add(r.Request.URL.Path, fmt.Sprintf("ok %d", r.StatusCode)) })
	c.OnError(func(r *colly.Response, err error) {
		var de *DeferredError
		switch {
		case errors.As(err, &de):
			l.add(r.Request.URL.Path, fmt.Sprintf("retry %d", de.Attempt))
		case errors.Is(err, ErrGaveUp):
			l.add(r.Request.URL.Path, "gave up")
		case errors.Is(err, ErrDisallowed):
			l.add(r.Request.URL.Path, "blocked")
		default:
			l.add(r.Request.URL.Path, "error "+err.Error())
		}
	})
}

func (l *outcomeLog) add(path, s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.seen == nil {
		l.seen = make(map[string][]string)
	}
	l.seen[path] = append(l.seen[path], s)
}

func (l *outcomeLog) get(path string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.seen[path], ", ")
}

// Defect 1: a body cut short is a failed attempt. The retry count is not
// cleared when 200 headers arrive, so the URL is retried MaxRetries times,
// reported as given up, and Wait returns (it used to retry forever).
func TestBodyCutShortGivesUp(t *testing.T) {
	s := newSite(t, robots("", func(w http.ResponseWriter, r *http.Request) bool {
		if r.URL.Path != "/cut" {
			return false
		}
		conn, buf, err := w.(http.Hijacker).Hijack()
		if err != nil {
			return true
		}
		buf.WriteString("HTTP/1.1 200 OK\r\nContent-Length: 1000\r\nContent-Type: text/html\r\n\r\nshort!")
		buf.Flush()
		conn.Close()
		return true
	}))
	for _, async := range []bool{false, true} {
		var rep reports
		var log outcomeLog
		g := withReports(&Guard{Rate: rate.Inf, Backoff: 30 * time.Millisecond, MaxRetries: 2, MaxRobotsFailures: 2}, &rep)
		c := colly.NewCollector(g.Attach, colly.Async(async))
		log.attach(c)
		before := s.count("/cut")
		c.Visit(s.URL + "/cut")
		waitOrFail(t, "Wait", c.Wait)
		if n := s.count("/cut") - before; n != 3 {
			t.Errorf("async=%v: /cut fetched %d times, want 3", async, n)
		}
		if errs := rep.get(s.URL + "/cut"); len(errs) != 1 || !errors.Is(errs[0], ErrGaveUp) || !errors.Is(errs[0], io.ErrUnexpectedEOF) {
			t.Errorf("async=%v: ErrorHandler(/cut) = %v, want ErrGaveUp wrapping the cut body", async, errs)
		}
		if got, want := log.get("/cut"), "retry 1, retry 2, gave up"; got != want {
			t.Errorf("async=%v: OnError saw %q, want %q", async, got, want)
		}
		if st := g.Stats().Total; st.Retried != 2 || st.GaveUp != 1 || st.Backoffs == 0 {
			t.Errorf("async=%v: Stats = %+v, want Retried 2, GaveUp 1, Backoffs > 0", async, st)
		}
		if n := g.visits.count(); n != 0 {
			t.Errorf("async=%v: %d visits left", async, n)
		}
	}
}

// Defect 1: a network error, then a malformed response, then a good one:
// each failure counts, the good response ends the count, nothing is left
// behind; with one retry allowed the URL is reported as given up.
func TestNetworkThenMalformedResponse(t *testing.T) {
	var n atomic.Int32
	s := newSite(t, robots("", func(w http.ResponseWriter, r *http.Request) bool {
		if r.URL.Path != "/odd" {
			return false
		}
		conn, buf, err := w.(http.Hijacker).Hijack()
		if err != nil {
			return true
		}
		defer conn.Close()
		// Bytes are sent before each failure, so net/http does not retry
		// on a new connection by itself.
		switch n.Add(1) % 3 {
		case 1: // cut inside the status line
			buf.WriteString("HTTP/1.1 2")
			buf.Flush()
		case 2:
			buf.WriteString("HTTP/1.1 two hundred\r\n\r\n")
			buf.Flush()
		default:
			buf.WriteString("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
			buf.Flush()
		}
		return true
	}))
	for _, tt := range []struct {
		retries int
		want    string
	}{{3, "retry 1, retry 2, ok 200"}, {1, "retry 1, gave up"}} {
		n.Store(0)
		var rep reports
		var log outcomeLog
		g := withReports(&Guard{Rate: rate.Inf, Backoff: 30 * time.Millisecond, MaxRetries: tt.retries}, &rep)
		c := colly.NewCollector(g.Attach, colly.Async())
		log.attach(c)
		c.Visit(s.URL + "/odd")
		waitOrFail(t, "Wait", c.Wait)
		if got := log.get("/odd"); got != tt.want {
			t.Errorf("MaxRetries %d: outcomes %q, want %q", tt.retries, got, tt.want)
		}
		if n := g.visits.count(); n != 0 {
			t.Errorf("MaxRetries %d: %d visits left", tt.retries, n)
		}
		if got, want := rep.len(), map[bool]int{true: 1, false: 0}[tt.retries == 1]; got != want {
			t.Errorf("MaxRetries %d: ErrorHandler called %d times, want %d", tt.retries, got, want)
		}
	}
}

// Defect 1: a body that stalls past the request timeout is a soft failure
// of the host (it used to count as healthy), and the request is retried.
//
// A retry of an asynchronous collector is a new client call, with a
// timeout of its own. A synchronous collector retries in place, inside
// the client's call (inplace.go): with the timeout set before Attach the
// Guard's transport bounds each attempt, and the retry gets the whole
// timeout again; set after Attach, net/http bounds the whole call, which
// the stalled attempt used up, and the request gives up at once with an
// error naming the client's timeout, rather than send a retry bound to
// run out.
func TestBodyReadTimeoutStrikes(t *testing.T) {
	for _, tc := range []struct {
		async, before bool
		want          string
	}{
		{async: true, want: "retry 1, ok 200"},
		{async: false, before: true, want: "retry 1, ok 200"},
		{async: false, want: "gave up"}, // the client's timeout ends before the retry could go
	} {
		name := fmt.Sprintf("async=%v, timeout before Attach=%v", tc.async, tc.before)
		s := stallOnce(t, true)
		var rep reports
		var log outcomeLog
		g := withReports(&Guard{Rate: rate.Inf, Backoff: 30 * time.Millisecond}, &rep)
		c := colly.NewCollector(colly.Async(tc.async))
		// The Guard cuts the stalled body 100 ms before this timeout; the
		// retry gets the whole timeout, ample on a loaded machine.
		if tc.before {
			c.SetRequestTimeout(time.Second)
		}
		g.Attach(c)
		if !tc.before {
			c.SetRequestTimeout(time.Second)
		}
		log.attach(c)
		err := c.Visit(s.URL + "/slow")
		waitOrFail(t, "Wait", c.Wait)
		if got := log.get("/slow"); got != tc.want {
			t.Errorf("%s: outcomes %q, want %q", name, got, tc.want)
		}
		retried := int64(1)
		if tc.want == "gave up" {
			retried = 0
		}
		if hs := hostStats(g, "127.0.0.1"); hs.Backoffs != 1 || hs.Retried != retried {
			t.Errorf("%s: Stats = %+v, want one back-off and %d retries for the stalled body", name, hs, retried)
		}
		if tc.async {
			continue
		}
		if tc.want == "retry 1, ok 200" {
			if err != nil {
				t.Errorf("%s: Visit(/slow) = %v, want nil", name, err)
			}
		} else if !IsFinal(err) || !strings.Contains(fmt.Sprint(err), "the client's timeout ends at") {
			t.Errorf("%s: Visit(/slow) = %v, want a final error naming the client's timeout", name, err)
		}
	}
}

// A transport under the Guard that returns late after the client's
// Timeout fired: net/http then hands colly its own timeout text instead of
// the Guard's outcome. The Guard still acts on its outcome — the request
// is retried and succeeds, its retry count is dropped, nothing is reported
// as given up — instead of losing it.
func TestSlowTransportTimeoutNotLost(t *testing.T) {
	s := newSite(t, robots("", nil))
	var slowOnce atomic.Bool
	late := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if r.URL.Path == "/late" && slowOnce.CompareAndSwap(false, true) {
			<-r.Context().Done()
			time.Sleep(300 * time.Millisecond) // returns after the client's Timeout
			return nil, r.Context().Err()
		}
		return http.DefaultTransport.RoundTrip(r)
	})
	var rep reports
	var log outcomeLog
	g := withReports(&Guard{Rate: rate.Inf, Backoff: 30 * time.Millisecond}, &rep)
	c := colly.NewCollector()
	c.WithTransport(late)
	// The Guard ends the request 100 ms before this timeout; the wrapper
	// returns 300 ms after that. The timeout leaves the retry ample time
	// on a loaded machine.
	c.SetRequestTimeout(time.Second)
	g.Attach(c)
	log.attach(c)
	c.Visit(s.URL + "/late")
	waitOrFail(t, "Wait", c.Wait)
	got := log.get("/late")
	if !strings.HasSuffix(got, "ok 200") || strings.Count(got, ",") != 1 {
		t.Errorf("outcomes %q, want one failed attempt, then ok 200", got)
	}
	if n := s.count("/late"); n != 1 {
		t.Errorf("server saw /late %d times, want 1 (the retry)", n)
	}
	if rep.len() != 0 {
		t.Errorf("ErrorHandler got %v, want nothing", rep.errs)
	}
	if n := g.visits.count(); n != 0 {
		t.Errorf("%d visits left", n)
	}
	if hs := hostStats(g, "127.0.0.1"); hs.Retried != 1 || hs.GaveUp != 0 {
		t.Errorf("Stats = %+v, want Retried 1, GaveUp 0", hs)
	}
}

// Defect 5: with the one-liner and no ErrorHandler, every outcome reaches
// colly's OnError in order — each attempt once, "will be retried" told
// apart from final — in sync, Async and queue modes; a synchronous Visit
// returns the first attempt's outcome.
func TestOutcomesInEveryMode(t *testing.T) {
	var flaky, broken atomic.Int32
	s := newSite(t, robots("User-agent: *\nDisallow: /secret\n", func(w http.ResponseWriter, r *http.Request) bool {
		switch r.URL.Path {
		case "/flaky":
			if flaky.Add(1) == 1 {
				w.Header().Set("Retry-After", "1")
				w.WriteHeader(http.StatusServiceUnavailable)
				return true
			}
		case "/broken":
			broken.Add(1)
			w.WriteHeader(http.StatusBadGateway)
			return true
		}
		return false
	}))
	want := map[string]string{
		"/secret/x": "blocked",
		"/flaky":    "retry 1, ok 200",
		"/broken":   "retry 1, retry 2, retry 3, gave up",
		"/fine":     "ok 200",
	}
	paths := []string{"/secret/x", "/flaky", "/broken", "/fine"}
	for _, mode := range []string{"sync", "async", "queue"} {
		flaky.Store(0)
		broken.Store(0)
		clk := newFakeClock()
		// Soft back-off from 1 s: /broken's pauses (1, 2, 4 s) stay within
		// MaxWait, so the other pages wait rather than being deferred.
		g := fakeGuard(&Guard{Rate: rate.Inf, Backoff: 6 * time.Second}, clk, 0)
		c := colly.NewCollector(g.Attach, colly.Async(mode == "async"), colly.AllowURLRevisit())
		var log outcomeLog
		log.attach(c)
		visitErrs := map[string]error{}
		switch mode {
		case "queue":
			q, err := queue.New(2, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range paths {
				q.AddURL(s.URL + p)
			}
			waitOrFail(t, "queue.Run", func() { q.Run(c) })
		default:
			for _, p := range paths {
				visitErrs[p] = c.Visit(s.URL + p)
			}
		}
		waitOrFail(t, "Wait", c.Wait)
		for _, p := range paths {
			if got := log.get(p); got != want[p] {
				t.Errorf("%s: OnError/OnResponse for %s saw %q, want %q", mode, p, got, want[p])
			}
		}
		if mode == "sync" {
			if err := visitErrs["/secret/x"]; !errors.Is(err, ErrDisallowed) || !IsFinal(err) {
				t.Errorf("sync: Visit(/secret/x) = %v, want a final ErrDisallowed", err)
			}
			// Retried in place: Visit returns the final outcome, after
			// OnError saw each failed attempt (log, above).
			if err := visitErrs["/flaky"]; err != nil {
				t.Errorf("sync: Visit(/flaky) = %v, want nil (fetched on its retry)", err)
			}
			if err := visitErrs["/broken"]; !errors.Is(err, ErrGaveUp) || !IsFinal(err) {
				t.Errorf("sync: Visit(/broken) = %v, want a final ErrGaveUp", err)
			}
			if err := visitErrs["/fine"]; err != nil {
				t.Errorf("sync: Visit(/fine) = %v, want nil", err)
			}
		}
		if n := broken.Load(); n != 4 {
			t.Errorf("%s: /broken fetched %d times, want 4", mode, n)
		}
		if st := g.Stats(); st.Total.Blocked != 1 || st.Total.GaveUp != 1 || st.Total.Retried != 4 || st.Waiting != 0 {
			t.Errorf("%s: Stats = %+v, want Blocked 1, GaveUp 1, Retried 4, Waiting 0", mode, st)
		}
	}
}

// Defect 3: with colly's queue (4 threads), pages of a host that asks for
// an hour's pause, or answers 503 without Retry-After, or whose robots.txt
// answers 503, do not hold the threads: they are deferred, and a healthy
// host's 200 pages behind them are all fetched.
//
// This is the promise of MaxWait, and so of asynchronous collectors only:
// a synchronous collector's requests wait in place (inplace.go), on the
// queue's threads, and no callback of the user runs elsewhere.
// TestNoHeadOfLineBlockingSyncWaitsInPlace checks the counterpart.
func TestNoHeadOfLineBlocking(t *testing.T) {
	for _, slowCase := range []string{"retry-after 3600", "503 without retry-after", "robots.txt 503"} {
		slow := newSite(t, func(w http.ResponseWriter, r *http.Request) {
			switch {
			case r.URL.Path == "/robots.txt" && slowCase != "robots.txt 503":
				w.Write([]byte("User-agent: *\nAllow: /\n"))
			case slowCase == "retry-after 3600":
				w.Header().Set("Retry-After", "3600")
				w.WriteHeader(http.StatusServiceUnavailable)
			default:
				w.WriteHeader(http.StatusServiceUnavailable)
			}
		})
		healthy := newSite(t, robots("", nil))
		// Two host names: 127.0.0.1 for the slow site, localhost for the
		// healthy one.
		healthyURL := strings.Replace(healthy.URL, "127.0.0.1", "localhost", 1)
		ctx, cancel := context.WithCancel(context.Background())
		g := &Guard{Rate: rate.Inf}
		// Four threads, as the queue's: an asynchronous collector's queue
		// hands its requests to colly at once, and colly's LimitRule
		// holds them.
		c := colly.NewCollector(g.Attach, colly.StdlibContext(ctx), colly.Async(true))
		if err := c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: 4}); err != nil {
			t.Fatal(err)
		}
		q, err := queue.New(4, nil)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 8; i++ {
			q.AddURL(fmt.Sprintf("%s/slow%d", slow.URL, i))
		}
		for i := 0; i < 200; i++ {
			q.AddURL(fmt.Sprintf("%s/p%d", healthyURL, i))
		}
		var deferred atomic.Int32
		c.OnError(func(_ *colly.Response, err error) {
			if errors.Is(err, ErrDeferred) {
				deferred.Add(1)
			}
		})
		done := make(chan struct{})
		go func() { q.Run(c); close(done) }()
		for end := time.Now().Add(failsafe); len(healthy.log()) < 201 && time.Now().Before(end); {
			time.Sleep(10 * time.Millisecond)
		}
		if n := len(healthy.log()); n != 201 {
			t.Errorf("%s: healthy host got %d requests, want 201 (robots.txt and 200 pages)", slowCase, n)
		}
		for end := time.Now().Add(failsafe); deferred.Load() < 8 && time.Now().Before(end); {
			time.Sleep(10 * time.Millisecond)
		}
		if deferred.Load() < 8 {
			t.Errorf("%s: %d deferrals reported, want ≥ 8", slowCase, deferred.Load())
		}
		cancel() // the slow host's pages wait in the Guard's queue; end them
		waitOrFail(t, "Wait", c.Wait)
		<-done
	}
}

// The synchronous counterpart of TestNoHeadOfLineBlocking: with colly's
// queue over a synchronous collector, the pages of a host that asks for
// an hour's pause wait in place, on the queue's threads (inplace.go):
// nothing is deferred to the Guard's goroutines, and once the crawl ends
// each of them gets exactly one final outcome, on a queue thread, before
// queue.Run returns.
func TestNoHeadOfLineBlockingSyncWaitsInPlace(t *testing.T) {
	slow := newSite(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			w.Write([]byte("User-agent: *\nAllow: /\n"))
			return
		}
		w.Header().Set("Retry-After", "3600")
		w.WriteHeader(http.StatusServiceUnavailable)
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	g := &Guard{Rate: rate.Inf}
	c := colly.NewCollector(g.Attach, colly.StdlibContext(ctx))
	q, err := queue.New(4, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 8; i++ {
		q.AddURL(fmt.Sprintf("%s/slow%d", slow.URL, i))
	}
	var mu sync.Mutex
	finals := map[string]int{}
	var deferrals int // deferrals that are no failed attempt
	c.OnError(func(r *colly.Response, err error) {
		mu.Lock()
		defer mu.Unlock()
		var de *DeferredError
		switch {
		case errors.As(err, &de) && de.Attempt == 0:
			deferrals++
		case IsFinal(err):
			finals[r.Request.URL.Path]++
		}
	})
	done := make(chan struct{})
	go func() { q.Run(c); close(done) }()
	for end := time.Now().Add(failsafe); len(slow.log()) < 2; { // robots.txt and the first 503
		if time.Now().After(end) {
			t.Fatalf("no page of the slow host was sent within %v", failsafe)
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond) // the pages wait for the hour's pause
	if n := g.later.len(); n != 0 {
		t.Errorf("the Guard's deferral queue holds %d requests, want 0", n)
	}
	cancel()
	select {
	case <-done:
	case <-time.After(failsafe):
		t.Fatalf("queue.Run still held %v after the crawl ended", failsafe)
	}
	mu.Lock()
	defer mu.Unlock()
	if deferrals != 0 {
		t.Errorf("OnError got %d deferrals, want none: a synchronous collector waits in place", deferrals)
	}
	for i := 0; i < 8; i++ {
		if p := fmt.Sprintf("/slow%d", i); finals[p] != 1 {
			t.Errorf("OnError got %d final outcomes for %s, want 1", finals[p], p)
		}
	}
}

// Defect 3: once an origin's robots.txt has failed MaxRobotsFailures times in a
// row, its further pages fail at once with ErrRobotsUnreachable, without
// waiting and without asking robots.txt again before it is due.
func TestRobotsFailedPagesFailFast(t *testing.T) {
	s := newSite(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
	})
	clk := newFakeClock()
	var rep reports
	g := fakeGuard(withReports(&Guard{Rate: rate.Inf, MaxRetries: 2, MaxRobotsFailures: 2, Backoff: time.Millisecond}, &rep), clk, 0)
	c := colly.NewCollector(g.Attach)
	c.Visit(s.URL + "/first")
	waitOrFail(t, "Wait", c.Wait)
	robotsBefore := s.count("/robots.txt")
	start := clk.now()
	for i := 0; i < 20; i++ {
		err := c.Visit(fmt.Sprintf("%s/p%d", s.URL, i))
		if !errors.Is(err, ErrRobotsUnreachable) {
			t.Errorf("Visit(/p%d) = %v, want ErrRobotsUnreachable", i, err)
		}
	}
	if d := clk.now().Sub(start); d != 0 {
		t.Errorf("the 20 pages waited %v, want no wait", d)
	}
	if n := s.count("/robots.txt") - robotsBefore; n != 0 {
		t.Errorf("robots.txt asked %d more times before it was due", n)
	}
	if n := len(s.log()) - s.count("/robots.txt"); n != 0 {
		t.Errorf("server received %d pages", n)
	}
	if errs := rep.get(s.URL + "/first"); len(errs) != 1 || !errors.Is(errs[0], ErrRobotsUnreachable) {
		t.Errorf("ErrorHandler(/first) = %v, want ErrRobotsUnreachable", errs)
	}
}

// Defect 3: a Retry-After beyond 24 hours follows one rule on robots.txt
// and on pages: requests give up at once, with the time they may go.
func TestHugeRetryAfterOneRule(t *testing.T) {
	const huge = "172800" // 48 h
	for _, where := range []string{"robots.txt", "page"} {
		s := newSite(t, func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/robots.txt" && where == "page" {
				w.Write([]byte("User-agent: *\nAllow: /\n"))
				return
			}
			w.Header().Set("Retry-After", huge)
			w.WriteHeader(http.StatusServiceUnavailable)
		})
		clk := newFakeClock()
		g := fakeGuard(&Guard{Rate: rate.Inf}, clk, 0)
		c := colly.NewCollector(g.Attach)
		start := clk.now()
		c.Visit(s.URL + "/a") // the 503 that sets the pause
		waitOrFail(t, "Wait", c.Wait)
		err := c.Visit(s.URL + "/b")
		// A synchronous collector's request is not bounded by MaxWait
		// (inplace.go), so with robots.txt paused it asks robots.txt's
		// cache, whose failure names the pause ("robots.txt asked for a
		// pause until"); a request bounded by MaxWait meets the host's
		// pause first ("host paused until"). Final either way, at once.
		if !IsFinal(err) || !strings.Contains(fmt.Sprint(err), " until "+start.Add(48*time.Hour).UTC().Format(time.RFC3339)) {
			t.Errorf("%s: Visit(/b) = %v, want a final error naming the pause's end, +48h", where, err)
		}
		if d := clk.now().Sub(start); d > time.Minute {
			t.Errorf("%s: requests waited %v, want no wait", where, d)
		}
	}
}

// Defect 6: a clone the Guard was not attached to shares the HTTP client,
// and so the Guard's transport, which admits its requests itself.
func TestCloneWithoutAttachFailsClosed(t *testing.T) {
	s := newSite(t, robots("User-agent: *\nDisallow: /private\n", nil))
	c := colly.NewCollector(Attach())
	d := c.Clone()
	var onErr error
	d.OnError(func(_ *colly.Response, err error) { onErr = err })
	if err := d.Visit(s.URL + "/private/a"); !errors.Is(err, ErrDisallowed) {
		t.Errorf("clone's Visit(/private/a) = %v, want ErrDisallowed", err)
	}
	if !errors.Is(onErr, ErrDisallowed) {
		t.Errorf("clone's OnError got %v, want ErrDisallowed", onErr)
	}
	if err := d.Visit(s.URL + "/public"); err != nil {
		t.Errorf("clone's Visit(/public) = %v, want nil", err)
	}
	if n := s.count("/private/a"); n != 0 {
		t.Errorf("server received /private/a %d times", n)
	}
	if n := s.count("/robots.txt"); n != 1 {
		t.Errorf("robots.txt requested %d times, want 1", n)
	}
}

// A request of a clone the Guard was not attached to that would wait
// longer than MaxWait for its host is not deferred: nothing would send it
// again. Its error is final, wraps ErrGaveUp, says why, and counts as no
// deferral.
func TestCloneWithoutAttachIsNeverDeferred(t *testing.T) {
	s := newSite(t, robots("", nil))
	u, err := url.Parse(s.URL)
	if err != nil {
		t.Fatal(err)
	}
	clk := newFakeClock()
	g := fakeGuard(&Guard{Rate: rate.Inf}, clk, 0)
	c := colly.NewCollector(g.Attach)
	g.host(u).strike(clk.now(), hard, 2*time.Hour, true, time.Second, time.Hour, 0, 0) // a pause beyond MaxWait
	d := c.Clone()
	var onErr error
	d.OnError(func(_ *colly.Response, err error) { onErr = err })
	err = d.Visit(s.URL + "/page")
	if !IsFinal(err) || !errors.Is(err, ErrGaveUp) || errors.Is(err, ErrDeferred) || !strings.Contains(err.Error(), "Attach the clone") {
		t.Errorf("clone's Visit(/page) with its host paused for 2h = %v, want a final ErrGaveUp that says to attach the clone", err)
	}
	if onErr == nil || onErr.Error() != err.Error() {
		t.Errorf("clone's OnError got %v, want Visit's error", onErr)
	}
	if st := g.Stats(); st.Total.Deferred != 0 || st.Waiting != 0 {
		t.Errorf("Stats() Deferred, Waiting = %d, %d; want 0, 0", st.Total.Deferred, st.Waiting)
	}
	if n := len(s.log()); n != 0 {
		t.Errorf("server received %d requests, want 0", n)
	}

	// A redirect hop of an asynchronous clone into a host paused beyond
	// MaxWait (a synchronous collector's hop waits in place).
	var hs *site
	hs = newSite(t, robots("", func(w http.ResponseWriter, r *http.Request) bool {
		if r.URL.Path == "/r" { // to the same server under another name
			http.Redirect(w, r, strings.Replace(hs.URL, "127.0.0.1", "localhost", 1)+"/page", http.StatusFound)
			return true
		}
		return false
	}))
	hop, err := url.Parse(strings.Replace(hs.URL, "127.0.0.1", "localhost", 1))
	if err != nil {
		t.Fatal(err)
	}
	g = fakeGuard(&Guard{Rate: rate.Inf}, clk, 0)
	d = colly.NewCollector(g.Attach, colly.Async()).Clone()
	var hopErr error
	d.OnError(func(_ *colly.Response, err error) { hopErr = err })
	g.host(hop).strike(clk.now(), hard, 2*time.Hour, true, time.Second, time.Hour, 0, 0)
	if err := d.Visit(hs.URL + "/r"); err != nil {
		t.Fatal(err)
	}
	d.Wait()
	if !IsFinal(hopErr) || !errors.Is(hopErr, ErrGaveUp) || errors.Is(hopErr, ErrDeferred) || !strings.Contains(hopErr.Error(), "Attach the clone") {
		t.Errorf("async clone's /r redirected into a host paused for 2h: OnError got %v, want a final ErrGaveUp that says to attach the clone", hopErr)
	}
	if st := g.Stats(); st.Total.Deferred != 0 || st.Waiting != 0 {
		t.Errorf("after the hop: Stats() Deferred, Waiting = %d, %d; want 0, 0", st.Total.Deferred, st.Waiting)
	}
	if n := hs.count("/page"); n != 0 {
		t.Errorf("server received the hop /page %d times, want 0", n)
	}
}

// Defect 7: the Guard fetches robots.txt through the collector's transport
// (its proxy and TLS settings), as it was before Attach.
func TestRobotsThroughCollectorTransport(t *testing.T) {
	s := newSite(t, robots("User-agent: *\nDisallow: /private\n", nil))
	var mu sync.Mutex
	var seen []string
	spy := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		mu.Lock()
		seen = append(seen, r.URL.Path)
		mu.Unlock()
		return http.DefaultTransport.RoundTrip(r)
	})
	c := colly.NewCollector()
	c.WithTransport(spy)
	Attach()(c)
	c.Visit(s.URL + "/page")
	mu.Lock()
	defer mu.Unlock()
	if got := strings.Join(seen, " "); got != "/robots.txt /page" {
		t.Errorf("the collector's transport saw %q, want %q", got, "/robots.txt /page")
	}
}

// Defect 8: in Async mode the Guard's robots.txt fetches are bounded
// (MaxRobotsFetches), however many hosts are cold.
func TestRobotsFetchesBounded(t *testing.T) {
	var inFlight, peak atomic.Int32
	s := newSite(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			n := inFlight.Add(1)
			for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
			}
			time.Sleep(20 * time.Millisecond)
			inFlight.Add(-1)
		}
		w.Write([]byte("ok"))
	})
	addr := strings.TrimPrefix(s.URL, "http://")
	tr := &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}}
	defer tr.CloseIdleConnections()
	c := colly.NewCollector(colly.Async())
	c.WithTransport(tr)
	g := &Guard{Rate: rate.Inf, MaxRobotsFetches: 5}
	g.Attach(c)
	const hosts = 150
	for i := 0; i < hosts; i++ {
		c.Visit(fmt.Sprintf("http://h%03d.test/page", i))
	}
	waitOrFail(t, "Wait", c.Wait)
	if n := s.count("/page"); n != hosts {
		t.Errorf("%d pages fetched, want %d", n, hosts)
	}
	if p, limit := peak.Load(), int32(5); p > limit {
		t.Errorf("%d robots.txt fetches ran at once, want ≤ %d", p, limit)
	}
}

// A request that a later OnRequest callback of the user aborts never
// reaches the transport: its visit does not keep it alive, and sweeps
// drop such visits, so a crawl that filters in OnRequest keeps a bounded
// index.
func TestAbortedRequestsDoNotAccumulate(t *testing.T) {
	s := newSite(t, robots("", nil))
	g := &Guard{Rate: rate.Inf}
	c := colly.NewCollector(g.Attach)
	c.OnRequest(func(r *colly.Request) { r.Abort() })
	const n = 20000
	for i := 0; i < n; i++ {
		c.Visit(fmt.Sprintf("%s/p%d", s.URL, i))
		if i%1000 == 0 {
			runtime.GC()
		}
	}
	left := g.visits.count()
	if left > 2*sweepVisits {
		t.Errorf("%d visits kept after %d aborted requests, want ≤ %d", left, n, 2*sweepVisits)
	}
	if got := s.count("/p0"); got != 0 {
		t.Errorf("aborted /p0 sent %d times", got)
	}
}

// A synchronous collector's request takes its position in its host's
// schedule at its gate, with its lease: requests that a later OnRequest
// callback of the user aborts take none, and neither they nor the request
// after a thousand of them wait a thousand intervals of the host's Rate
// (on the Guard's clock).
func TestAbortedRequestsTakeNoPosition(t *testing.T) {
	s := newSite(t, robots("", nil))
	clock := newFakeClock()
	g := fakeGuard(&Guard{Rate: 10}, clock, 0)
	c := colly.NewCollector(g.Attach)
	c.OnRequest(func(r *colly.Request) {
		if strings.HasPrefix(r.URL.Path, "/skip") {
			r.Abort()
		}
	})
	const n = 1000
	start := clock.now()
	for i := 0; i < n; i++ {
		c.Visit(fmt.Sprintf("%s/skip%d", s.URL, i))
	}
	if err := c.Visit(s.URL + "/page"); err != nil {
		t.Fatalf("Visit(/page): %v", err)
	}
	// robots.txt's fetch, then /page one interval after it.
	if took, want := clock.now().Sub(start), 2*100*time.Millisecond; took > want+slack {
		t.Errorf("%d aborted Visits and Visit(/page) took %v on the Guard's clock, want ≤ %v", n, took, want)
	}
	if got := s.count("/page"); got != 1 {
		t.Errorf("/page sent %d times, want 1", got)
	}
	if got := s.count("/skip0"); got != 0 {
		t.Errorf("aborted /skip0 sent %d times", got)
	}
}

// A synchronous collector whose transport was replaced after Attach has
// no gate of the Guard: its requests take their positions in OnRequest,
// which paces them by the host's Rate (on the Guard's clock), as an
// asynchronous collector's are.
func TestReplacedTransportStillPaced(t *testing.T) {
	for _, async := range []bool{false, true} {
		s := newSite(t, robots("", nil))
		clock := newFakeClock()
		g := fakeGuard(&Guard{Rate: 1}, clock, 0)
		c := colly.NewCollector(g.Attach, colly.Async(async))
		c.WithTransport(&http.Transport{})
		start := clock.now()
		const n = 5
		for i := 0; i < n; i++ {
			if err := c.Visit(fmt.Sprintf("%s/p%d", s.URL, i)); err != nil {
				t.Fatalf("async=%v: Visit(/p%d): %v", async, i, err)
			}
		}
		c.Wait()
		// robots.txt, then the pages one second apart.
		if took, want := clock.now().Sub(start), time.Duration(n)*time.Second; took < want {
			t.Errorf("async=%v: %d Visits through a replaced transport took %v on the Guard's clock, want ≥ %v", async, n, took, want)
		}
		if got := s.count("/p0"); got != 1 {
			t.Errorf("async=%v: /p0 sent %d times, want 1", async, got)
		}
	}
}

// Sweeps run on whichever request's OnRequest grows the index past its
// mark, beside other requests passing their gates and ending: an
// asynchronous crawl with more requests waiting for colly's LimitRule
// slots than a sweep's mark passes -race, fetches every page once, and
// leaves the index empty.
func TestSweepBesideGates(t *testing.T) {
	s := newSite(t, robots("", nil))
	g := &Guard{Rate: rate.Inf, FixedPace: true, InFlight: 64}
	c := colly.NewCollector(g.Attach, colly.Async(true))
	if err := c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: 8}); err != nil {
		t.Fatalf("Limit: %v", err)
	}
	var pages atomic.Int64
	c.OnResponse(func(*colly.Response) { pages.Add(1) })
	c.OnError(func(r *colly.Response, err error) { t.Errorf("OnError(%s): %v", r.Request.URL, err) })
	const n = sweepVisits + sweepVisits/2
	for i := 0; i < n; i++ {
		if err := c.Visit(fmt.Sprintf("%s/p%d", s.URL, i)); err != nil {
			t.Fatalf("Visit(/p%d): %v", i, err)
		}
	}
	// Thousands of requests under -race on a busy machine may take longer
	// than failsafe: a hang is the test binary's timeout, with its dump.
	c.Wait()
	if got := pages.Load(); got != n {
		t.Errorf("OnResponse ran %d times, want %d", got, n)
	}
	if got := s.count("/p0"); got != 1 {
		t.Errorf("/p0 sent %d times, want 1", got)
	}
	if left := g.visits.count(); left != 0 {
		t.Errorf("%d visits kept after the crawl, want 0", left)
	}
}

// Blocked counts a verdict of robots.txt as it is delivered: a request
// that a later OnRequest callback of the user's aborted is reported
// nowhere by colly, and so is counted and logged nowhere either.
func TestBlockedCountedWhenDelivered(t *testing.T) {
	s := newSite(t, robots("User-agent: *\nDisallow: /x\n", nil))
	var rep reports
	g := &Guard{Rate: rate.Inf, ErrorHandler: func(r *colly.Request, err error) { rep.add(r.URL.Path, err) }}
	c := colly.NewCollector()
	g.Attach(c)
	c.OnRequest(func(r *colly.Request) {
		if r.URL.Path == "/x/aborted" {
			r.Abort()
		}
	})
	c.Visit(s.URL + "/x/aborted")
	if st := g.Stats().Total; st.Blocked != 0 || rep.len() != 0 {
		t.Errorf("Visit(/x/aborted), aborted by a later OnRequest: Blocked = %d, ErrorHandler calls = %d; want 0 and 0", st.Blocked, rep.len())
	}
	err := c.Visit(s.URL + "/x/kept")
	if !errors.Is(err, ErrDisallowed) {
		t.Fatalf("Visit(/x/kept) = %v, want ErrDisallowed", err)
	}
	if st := g.Stats().Total; st.Blocked != 1 || rep.len() != 1 {
		t.Errorf("Visit(/x/kept): Blocked = %d, ErrorHandler calls = %d; want 1 and 1", st.Blocked, rep.len())
	}
}
