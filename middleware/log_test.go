package robotsmw

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gocolly/colly/v2"
	"golang.org/x/time/rate"
)

// A recorder is a slog.Handler that keeps every record it is given, its
// attributes flattened to strings.
type recorder struct {
	level slog.Level
	mu    *sync.Mutex // guards recs, shared by the handlers WithAttrs makes
	recs  *[]record
	attrs []slog.Attr
}

// A record is one log record as the recorder kept it.
type record struct {
	level slog.Level
	msg   string
	attrs map[string]string
}

func newRecorder(level slog.Level) *recorder {
	return &recorder{level: level, mu: new(sync.Mutex), recs: new([]record)}
}

func (h *recorder) Enabled(_ context.Context, l slog.Level) bool { return l >= h.level }

func (h *recorder) Handle(_ context.Context, r slog.Record) error {
	rec := record{level: r.Level, msg: r.Message, attrs: map[string]string{}}
	add := func(a slog.Attr) bool {
		v := a.Value.Resolve()
		if v.Kind() == slog.KindTime {
			rec.attrs[a.Key] = v.Time().UTC().Format(time.RFC3339Nano)
		} else {
			rec.attrs[a.Key] = v.String()
		}
		return true
	}
	for _, a := range h.attrs {
		add(a)
	}
	r.Attrs(add)
	h.mu.Lock()
	*h.recs = append(*h.recs, rec)
	h.mu.Unlock()
	return nil
}

func (h *recorder) WithAttrs(as []slog.Attr) slog.Handler {
	c := *h
	c.attrs = append(append([]slog.Attr(nil), h.attrs...), as...)
	return &c
}

func (h *recorder) WithGroup(string) slog.Handler { return h }

func (h *recorder) records() []record {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]record(nil), *h.recs...)
}

// find returns the records with message msg whose attributes include
// want's (a value ending in "*" matches as a prefix).
func (h *recorder) find(level slog.Level, msg string, want map[string]string) []record {
	var out []record
	for _, r := range h.records() {
		if r.msg != msg || r.level != level {
			continue
		}
		ok := true
		for k, v := range want {
			got, has := r.attrs[k]
			if p, prefix := strings.CutSuffix(v, "*"); !has || (prefix && !strings.HasPrefix(got, p)) || (!prefix && got != v) {
				ok = false
				break
			}
		}
		if ok {
			out = append(out, r)
		}
	}
	return out
}

// misbehaving returns two loopback sites: a, whose robots.txt disallows
// /private and lists a sitemap of /ok, and which answers /busy 503 with
// Retry-After: 1 the first time and /broken 500 always; and b (named
// localhost, another host), whose robots.txt answers 500.
func misbehaving(t *testing.T) (a, b *site) {
	var mu sync.Mutex
	busy := 0
	a = newSite(t, robots("User-agent: *\nDisallow: /private\nSitemap: /sitemap.xml\n", func(w http.ResponseWriter, r *http.Request) bool {
		switch r.URL.Path {
		case "/sitemap.xml":
			fmt.Fprintf(w, `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>http://%s/ok</loc></url></urlset>`, r.Host)
		case "/busy":
			mu.Lock()
			busy++
			first := busy == 1
			mu.Unlock()
			if !first {
				return false
			}
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusServiceUnavailable)
		case "/broken":
			w.WriteHeader(http.StatusInternalServerError)
		default:
			return false
		}
		return true
	}))
	b = newSite(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
	})
	return a, b
}

// TestLogRecords crawls misbehaving sites and checks the Guard's log: each
// event the Logger lists, at its level, with its attributes.
//
// A request that would wait beyond MaxWait is deferred, with a DEBUG
// record, only by an asynchronous collector: a synchronous one waits in
// place (inplace.go), and logs no deferral.
func TestLogRecords(t *testing.T) {
	for _, async := range []bool{true, false} {
		t.Run(fmt.Sprintf("async=%v", async), func(t *testing.T) { testLogRecords(t, async) })
	}
}

func testLogRecords(t *testing.T, async bool) {
	a, b := misbehaving(t)
	bURL := strings.Replace(b.URL, "127.0.0.1", "localhost", 1)
	rec := newRecorder(slog.LevelDebug)
	g := &Guard{Rate: rate.Inf, Backoff: 60 * time.Millisecond, MaxRetries: 1, MaxRobotsFailures: 1, MaxWait: 100 * time.Millisecond,
		Logger: slog.New(rec)}
	c := colly.NewCollector(g.Attach, colly.Async(async))
	deferrals := 0 // some
	if !async {
		deferrals = -1 // none
	}
	if _, err := g.Seed(c, a.URL); err != nil {
		t.Fatalf("Seed(%s): %v", a.URL, err)
	}
	for _, u := range []string{a.URL + "/private/x", a.URL + "/busy", a.URL + "/broken", bURL + "/page"} {
		c.Visit(u)
	}
	waitOrFail(t, "Wait", c.Wait)

	host := strings.TrimPrefix(a.URL, "http://")
	host = host[:strings.IndexByte(host, ':')]
	for _, tc := range []struct {
		level slog.Level
		msg   string
		attrs map[string]string
		n     int // how many; 0 means at least one, -1 none
	}{
		{slog.LevelInfo, "robots.txt fetched", map[string]string{"origin": a.URL, "status": "200", "state": "parsed"}, 1},
		{slog.LevelInfo, "sitemap read", map[string]string{"url": a.URL + "/sitemap.xml", "depth": "0", "pages": "1"}, 1},
		{slog.LevelInfo, "request blocked", map[string]string{"host": host, "url": a.URL + "/private/x",
			"agent": "colly", "group": "*", "rule": "disallow: /private", "line": "2"}, 1},
		// A retried 503: one line, with the pause it started and the
		// earliest the retry may go; no "host paused" line of its own.
		{slog.LevelInfo, "request retried", map[string]string{"host": host, "url": a.URL + "/busy", "attempt": "1",
			"cause": "robotsmw: status 503 Service Unavailable", "next_attempt": "*", "host_pause": "1s", "retry_after": "1s"}, 1},
		{slog.LevelWarn, "host paused", map[string]string{"url": a.URL + "/busy"}, -1},
		{slog.LevelInfo, "request retried", map[string]string{"url": a.URL + "/broken", "attempt": "1", "host_pause": "*"}, 1},
		// The final attempt's pause is logged before its outcome.
		{slog.LevelWarn, "host paused", map[string]string{"url": a.URL + "/broken", "status": "500", "pause": "*", "paused_until": "*"}, 1},
		{slog.LevelWarn, "request gave up", map[string]string{"host": host, "url": a.URL + "/broken",
			"error": "robotsmw: gave up: GET " + a.URL + "/broken after 1 retries: robotsmw: status 500 Internal Server Error"}, 1},
		{slog.LevelDebug, "request deferred", map[string]string{"host": host, "cause": "robotsmw: host " + host + " paused until*"}, deferrals},
		{slog.LevelWarn, "robots.txt unreachable", map[string]string{"origin": bURL, "status": "500", "failures": "1",
			"error": "policy: robots.txt " + bURL + "/robots.txt: 500 Internal Server Error", "next_fetch": "*"}, 1},
		{slog.LevelWarn, "host paused", map[string]string{"host": "localhost", "url": bURL + "/robots.txt", "status": "500"}, 1},
		{slog.LevelWarn, "request gave up", map[string]string{"host": "localhost", "url": bURL + "/page",
			"error": "robotsmw: robots.txt unreachable*"}, 1},
	} {
		got := rec.find(tc.level, tc.msg, tc.attrs)
		if (tc.n == 0 && len(got) == 0) || (tc.n != 0 && len(got) != max(tc.n, 0)) {
			t.Errorf("log has %d %v %q records with %v, want %d (0: some, -1: none); log:\n%s", len(got), tc.level, tc.msg, tc.attrs, tc.n, dump(rec.records()))
		}
	}
	// Every record names its host or origin or URL.
	for _, r := range rec.records() {
		if r.attrs["host"] == "" && r.attrs["origin"] == "" && r.attrs["url"] == "" {
			t.Errorf("record %q %v names no host, origin or url", r.msg, r.attrs)
		}
	}
}

func dump(rs []record) string {
	var b strings.Builder
	for _, r := range rs {
		fmt.Fprintf(&b, "  %v %q %v\n", r.level, r.msg, r.attrs)
	}
	return b.String()
}

// TestLogLevelOff: a Logger whose level is above every event's gets no
// record, and a nil Logger is not called.
func TestLogLevelOff(t *testing.T) {
	a, _ := misbehaving(t)
	rec := newRecorder(slog.LevelError)
	g := &Guard{Rate: rate.Inf, Backoff: 60 * time.Millisecond, MaxRetries: 1, MaxRobotsFailures: 1, Logger: slog.New(rec)}
	c := colly.NewCollector(g.Attach)
	c.Visit(a.URL + "/private/x")
	c.Visit(a.URL + "/broken")
	waitOrFail(t, "Wait", c.Wait)
	if rs := rec.records(); len(rs) != 0 {
		t.Errorf("a Logger at Error got %d records:\n%s", len(rs), dump(rs))
	}
	if st := g.Stats().Total; st.Blocked != 1 || st.GaveUp != 1 {
		t.Errorf("Stats().Total = %+v, want Blocked 1, GaveUp 1", st)
	}
}

// TestGuardOfOneLiner: the Stats of a collector made with the one-liner,
// through GuardOf, after a crawl of a misbehaving site: requests sent
// apart from pages fetched, each outcome, the waits, nothing in flight.
func TestGuardOfOneLiner(t *testing.T) {
	t.Parallel() // the default rate, one request a second: 3 s
	a, _ := misbehaving(t)
	c := colly.NewCollector(Attach())
	g := GuardOf(c)
	if g == nil {
		t.Fatal("GuardOf(NewCollector(Attach())) = nil")
	}
	if d := GuardOf(c.Clone()); d != g {
		t.Errorf("GuardOf(clone) = %p, want the collector's %p", d, g)
	}
	if GuardOf(colly.NewCollector()) != nil {
		t.Error("GuardOf(a collector without a Guard) != nil")
	}
	for _, p := range []string{"/ok", "/private/x", "/busy"} {
		c.Visit(a.URL + p)
	}
	waitOrFail(t, "Wait", c.Wait)
	st := g.Stats()
	// robots.txt, /ok, /busy (503), /busy again.
	want := HostStats{Sent: 4, Pages: 2, Blocked: 1, Retried: 1, Backoffs: 1}
	got := st.Total
	got.PausedUntil = time.Time{}
	if got != want {
		t.Errorf("GuardOf(c).Stats().Total = %+v, want %+v", got, want)
	}
	if st.Waits.Count != 3 || st.InFlight != 0 || st.PausedHosts != 0 || st.Hosts != 1 {
		t.Errorf("GuardOf(c).Stats() = waits %d, in flight %d, paused %d, hosts %d; want 3, 0, 0, 1",
			st.Waits.Count, st.InFlight, st.PausedHosts, st.Hosts)
	}
	if n := len(st.Busiest); n != 1 || st.Busiest[0].Sent != 4 || st.Busiest[0].Pages != 2 {
		t.Errorf("GuardOf(c).Stats().Busiest = %+v, want one host with Sent 4, Pages 2", st.Busiest)
	}
}

// TestStatsGauges: hosts paused and requests in flight are counted while
// they are, and the waits land in their buckets.
func TestStatsGauges(t *testing.T) {
	release := make(chan struct{})
	s := newSite(t, robots("", func(w http.ResponseWriter, r *http.Request) bool {
		if r.URL.Path == "/slow" {
			<-release
		}
		return false
	}))
	g := &Guard{Rate: rate.Inf}
	c := colly.NewCollector(g.Attach, colly.Async())
	c.Visit(s.URL + "/slow")
	deadline := time.Now().Add(failsafe)
	for g.Stats().InFlight != 1 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if n := g.Stats().InFlight; n != 1 {
		t.Errorf("Stats().InFlight while /slow is answered = %d, want 1", n)
	}
	close(release)
	waitOrFail(t, "Wait", c.Wait)
	if n := g.Stats().InFlight; n != 0 {
		t.Errorf("Stats().InFlight after Wait = %d, want 0", n)
	}
	u := mustURL(t, s.URL+"/x")
	g.strike(g.host(u), g.clock(), hard, http.Header{"Retry-After": {"60"}})
	if n := g.Stats().PausedHosts; n != 1 {
		t.Errorf("Stats().PausedHosts after a Retry-After: 60 = %d, want 1", n)
	}

	var w waitHistogram
	for _, d := range []time.Duration{0, time.Millisecond, 2 * time.Millisecond, time.Second, time.Hour} {
		w.observe(d)
	}
	ws := w.snapshot()
	if ws.Count != 5 || ws.Sum != time.Hour+time.Second+3*time.Millisecond {
		t.Errorf("waitHistogram.snapshot() count %d sum %v, want 5 and 1h0m1.003s", ws.Count, ws.Sum)
	}
	for _, b := range []struct {
		upTo time.Duration
		n    int64
	}{{time.Millisecond, 2}, {10 * time.Millisecond, 3}, {500 * time.Millisecond, 3}, {time.Second, 4}, {time.Minute, 4}} {
		for _, got := range ws.Buckets {
			if got.UpTo == b.upTo && got.Count != b.n {
				t.Errorf("waitHistogram.snapshot() bucket ≤%v = %d, want %d", b.upTo, got.Count, b.n)
			}
		}
	}
}

// TestLogUnreachable: a site that refuses connections is not silent: its
// robots.txt is logged unreachable with the network error, the host
// paused with it, and the page given up.
func TestLogUnreachable(t *testing.T) {
	s := newSite(t, robots("", nil))
	s.Close() // connections are refused from now on
	rec := newRecorder(slog.LevelInfo)
	g := &Guard{Rate: rate.Inf, MaxRetries: -1, MaxRobotsFailures: 1, Logger: slog.New(rec)}
	c := colly.NewCollector(g.Attach)
	c.Visit(s.URL + "/page")
	waitOrFail(t, "Wait", c.Wait)
	for _, tc := range []struct {
		level slog.Level
		msg   string
		attrs map[string]string
	}{
		{slog.LevelWarn, "robots.txt unreachable", map[string]string{"origin": s.URL, "failures": "1",
			"error": "policy: robots.txt " + s.URL + "/robots.txt: *"}},
		{slog.LevelWarn, "host paused", map[string]string{"host": "127.0.0.1", "url": s.URL + "/robots.txt",
			"error": "dial tcp *"}},
		{slog.LevelWarn, "request gave up", map[string]string{"url": s.URL + "/page",
			"error": "robotsmw: robots.txt unreachable: *"}},
	} {
		if got := rec.find(tc.level, tc.msg, tc.attrs); len(got) != 1 {
			t.Errorf("log has %d %v %q records with %v, want 1; log:\n%s", len(got), tc.level, tc.msg, tc.attrs, dump(rec.records()))
		}
	}
}
