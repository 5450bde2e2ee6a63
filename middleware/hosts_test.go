package robotsmw

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/gocolly/colly/v2"
	"golang.org/x/time/rate"
)

// loopbackHosts returns a transport that sends every host name to s, so a
// test can crawl many hosts.
func loopbackHosts(t *testing.T, s *site) *http.Transport {
	addr := strings.TrimPrefix(s.URL, "http://")
	tr := &http.Transport{MaxIdleConnsPerHost: 1, DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}}
	t.Cleanup(tr.CloseIdleConnections)
	return tr
}

// Defect 9: the state of quiet hosts is forgotten after IdleTimeout; hosts
// that are paused are kept; the totals keep the forgotten hosts' counts;
// Stats lists only the busiest hosts. A host with a Crawl-delay is
// forgotten too once its gap is over, and its next request reads the
// Crawl-delay again; a host excluded by a Retry-After beyond a day is kept
// while requests still ask for it and, with no Pacer, while its pause
// holds (TestExcludedHostForgottenAfterPause), without its robots.txt.
func TestIdleHostsEvicted(t *testing.T) {
	s := newSite(t, func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/robots.txt" && r.Host == "slow.test":
			w.Write([]byte("User-agent: *\nCrawl-delay: 2\n"))
		case r.URL.Path == "/robots.txt":
			w.Write([]byte("User-agent: *\nDisallow: /private\n"))
		case r.Host == "busy.test":
			w.Header().Set("Retry-After", "3600")
			w.WriteHeader(http.StatusServiceUnavailable)
		case r.Host == "gone.test":
			w.Header().Set("Retry-After", "99999999") // three years: excluded
			w.WriteHeader(http.StatusServiceUnavailable)
		default:
			w.Write([]byte("ok"))
		}
	})
	clk := newFakeClock()
	g := fakeGuard(&Guard{Rate: rate.Inf, IdleTimeout: time.Minute, MaxRetries: -1, MaxRobotsFailures: 1}, clk, 0)
	c := colly.NewCollector(colly.AllowURLRevisit())
	c.WithTransport(loopbackHosts(t, s))
	g.Attach(c)
	const n = 50
	for i := 0; i < n; i++ {
		c.Visit(fmt.Sprintf("http://h%02d.test/page", i))
	}
	c.Visit("http://slow.test/page")
	c.Visit("http://busy.test/page")
	c.Visit("http://gone.test/page")
	if st := g.Stats(); st.Hosts != n+3 || len(st.Busiest) != busiest {
		t.Fatalf("Stats() Hosts = %d, %d listed; want %d, %d", st.Hosts, len(st.Busiest), n+3, busiest)
	}
	clk.advance(90 * time.Second)
	if err := c.Visit("http://gone.test/again"); !IsFinal(err) {
		t.Errorf("Visit(gone.test/again) = %v, want a final error: the host is excluded", err)
	}
	clk.advance(30 * time.Second)
	st := g.Stats()
	if st.Hosts != 2 || st.Evicted != n+1 {
		t.Errorf("after 2 quiet minutes Stats() Hosts = %d, Evicted = %d; want 2, %d", st.Hosts, st.Evicted, n+1)
	}
	for _, name := range []string{"busy.test", "gone.test"} {
		if _, ok := g.hostStats(name); !ok {
			t.Errorf("Host(%q) forgotten; want kept (paused; excluded and asked for 30s ago)", name)
		}
	}
	if _, ok := g.hostStats("slow.test"); ok {
		t.Errorf("Host(slow.test) kept; want forgotten: its Crawl-delay's gap is over")
	}
	if want := int64(2*n + 3 + 3); st.Total.Sent != want {
		t.Errorf("Total.Sent = %d, want %d (robots.txt and page of every host)", st.Total.Sent, want)
	}
	clk.advance(time.Minute)
	if g.Stats(); g.hosts.lookup("gone.test") == nil || g.hosts.lookup("gone.test").robots.Load() != nil {
		t.Errorf("Host(gone.test) forgotten, or kept with its robots.txt; want kept without it: its schedule holds its pause, and no request asked for it for a minute")
	}
	// Its pause lives on in its schedule: a request for it is final at
	// once, without waiting for the pause or being sent.
	before, sent := clk.now(), s.count("/later")
	if err := c.Visit("http://gone.test/later"); !IsFinal(err) || !strings.Contains(fmt.Sprint(err), "asked for a pause more than") {
		t.Errorf("Visit(gone.test/later) after its host was forgotten = %v, want final: the host is excluded", err)
	}
	if d := clk.now().Sub(before); d > time.Minute || s.count("/later") != sent {
		t.Errorf("Visit(gone.test/later) waited %v and was sent %d times; want at once, not sent", d, s.count("/later")-sent)
	}
	// A host forgotten with its Crawl-delay reads it again.
	c.Visit("http://slow.test/again")
	if h := g.hosts.lookup("slow.test"); h == nil {
		t.Errorf("Host(slow.test) after a new visit: none")
	} else {
		h.mu.Lock()
		d := h.crawlDelay()
		h.mu.Unlock()
		if d != 2*time.Second {
			t.Errorf("Host(slow.test) Crawl-delay after a new visit = %v, want 2s", d)
		}
	}
	// A forgotten host comes back with fresh state.
	c.Visit("http://h00.test/page")
	if hs, ok := g.hostStats("h00.test"); !ok || hs.Sent != 1 {
		t.Errorf("Host(h00.test) after a new visit = %+v, %v; want Sent 1", hs, ok)
	}
}

// Defect 9 (found by the broad-crawl benchmark): a host first seen while
// its request waits for robots.txt is not quiet, so a sweep cannot forget
// the state that request holds.
func TestNewHostNotQuiet(t *testing.T) {
	clk := newFakeClock()
	g := fakeGuard(&Guard{IdleTimeout: time.Minute}, clk, 0)
	h := g.host(mustURL(t, "http://new.test/"))
	clk.advance(59 * time.Second)
	g.hosts.sweep(clk.now().UnixNano(), time.Minute)
	if g.host(mustURL(t, "http://new.test/")) != h {
		t.Errorf("a host first seen 59s ago was forgotten")
	}
	clk.advance(32 * time.Second) // the next sweep is due half a minute later
	g.hosts.sweep(clk.now().UnixNano(), time.Minute)
	if g.hosts.lookup("new.test") != nil {
		t.Errorf("a host quiet for 91s was kept")
	}
}

// Stats must not copy every host of a broad crawl: its allocations do not
// grow with the number of hosts kept.
func TestStatsAllocationsFlat(t *testing.T) {
	allocs := func(hosts int) float64 {
		g := &Guard{}
		for i := 0; i < hosts; i++ {
			g.host(mustURL(t, fmt.Sprintf("http://h%d.example/", i)))
		}
		return testing.AllocsPerRun(20, func() { g.Stats() })
	}
	small, large := allocs(2*busiest), allocs(200*busiest)
	if large > small {
		t.Errorf("Stats() allocations: %v with %d hosts, %v with %d hosts, want no growth", small, 2*busiest, large, 200*busiest)
	}
}

// A visit's host is used while the table keeps it and the URL still
// names it; a forgotten host or a URL a callback changed is looked up.
func TestHostForVisit(t *testing.T) {
	clk := newFakeClock()
	g := fakeGuard(&Guard{Rate: rate.Inf, IdleTimeout: time.Minute}, clk, 0)
	u := mustURL(t, "http://a.test/page")
	h := g.host(u)
	tk := &visit{h: h}
	if got := g.hostFor(tk, u); got != h {
		t.Errorf("hostFor(a.test) = %p, want the visit's %p", got, h)
	}
	if got := g.hostFor(tk, mustURL(t, "http://b.test/page")); got == h || got.name != "b.test" {
		t.Errorf("hostFor(b.test) = %s, want b.test's own state", got.name)
	}
	clk.advance(2 * time.Minute)
	g.Stats() // sweeps: a.test is quiet
	if !h.gone.Load() {
		t.Fatal("a.test kept after the sweep, want it forgotten")
	}
	if got := g.hostFor(tk, u); got == h || got != g.host(u) {
		t.Errorf("hostFor(a.test) after the sweep = %p, want the table's new state, not the forgotten %p", got, h)
	}
}

// A host's name is its own copy, inline when it fits: it does not share
// the memory of the URL it first came from, and a long name is kept whole.
func TestHostNameCopied(t *testing.T) {
	long := strings.Repeat("a", hostInline) + ".test"
	for _, name := range []string{"a.test", strings.Repeat("b", hostInline), long} {
		raw := []byte("http://" + name + "/page")
		u := mustURL(t, string(raw))
		h := newHost(hostKey(u), 0, 1)
		if h.name != name {
			t.Errorf("newHost(%q).name = %q", name, h.name)
		}
		if unsafe.StringData(h.name) == unsafe.StringData(u.Host) {
			t.Errorf("newHost(%q).name shares the URL's memory", name)
		}
		inline := unsafe.StringData(h.name) == &h.inline[0]
		if want := len(name) <= hostInline; inline != want {
			t.Errorf("newHost(%q).name inline = %v, want %v", name, inline, want)
		}
	}
}

// A host whose pages wait for its robots.txt is not quiet, however long
// the fetch takes: it is not forgotten meanwhile.
func TestHostKeptWhileRobotsPending(t *testing.T) {
	release := make(chan struct{})
	s := newSite(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			<-release
		}
		w.Write([]byte("ok"))
	})
	defer close(release)
	clk := newFakeClock()
	g := fakeGuard(&Guard{Rate: rate.Inf, IdleTimeout: time.Second}, clk, 0)
	c := colly.NewCollector(colly.Async())
	g.Attach(c)
	c.Visit(s.URL + "/p")
	for deadline := time.Now().Add(failsafe); s.count("/robots.txt") == 0; {
		if time.Now().After(deadline) {
			t.Fatalf("robots.txt not asked for within %v", failsafe)
		}
		time.Sleep(time.Millisecond)
	}
	// The page's request counted itself as the host's before it asked the
	// cache, which fetches robots.txt.
	clk.advance(time.Hour)
	if st := g.Stats(); st.Evicted != 0 || st.Hosts != 1 {
		t.Errorf("Stats() while /p waits for robots.txt an hour on the Guard's clock: Evicted %d, Hosts %d; want 0 and 1", st.Evicted, st.Hosts)
	}
}

// An excluded host (a Retry-After beyond a day) of a Guard with no Pacer
// is kept while its pause holds (its schedule holds the pause), and
// forgotten once the pause ended and no request asked: a site can name
// any number of such hosts.
func TestExcludedHostForgottenAfterPause(t *testing.T) {
	s := newSite(t, func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/robots.txt":
			w.Write([]byte("User-agent: *\nDisallow: /private\n"))
		default:
			w.Header().Set("Retry-After", fmt.Sprint(int((25 * time.Hour).Seconds())))
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	})
	clk := newFakeClock()
	g := fakeGuard(&Guard{Rate: rate.Inf, IdleTimeout: time.Minute, MaxRetries: -1, MaxRobotsFailures: 1}, clk, 0)
	c := colly.NewCollector(colly.AllowURLRevisit())
	c.WithTransport(loopbackHosts(t, s))
	g.Attach(c)
	for i := 0; i < 20; i++ {
		c.Visit(fmt.Sprintf("http://x%02d.test/page", i))
	}
	h := g.hosts.lookup("x00.test")
	clk.advance(2 * time.Hour)
	if st := g.Stats(); st.Hosts != 20 {
		t.Errorf("2h later (paused 25h): Stats().Hosts = %d, want 20", st.Hosts)
	}
	clk.advance(24 * time.Hour)
	g.Stats()
	clk.advance(time.Hour)
	st := g.Stats()
	if st.Hosts != 0 {
		h.mu.Lock()
		t.Errorf("27h later (pause of 25h over, nothing asked): Stats().Hosts = %d, want 0; x00 holds=%v sched=%+v", st.Hosts, h.sched.Holds(clk.now()), h.sched)
		h.mu.Unlock()
	}
}

// A cut host whose floor a Crawl-delay then raises above its cut interval
// is no longer cut (setCrawlDelay), and is forgotten once quiet, though
// its schedule still holds the cut interval.
func TestCutThenCrawlDelayHostForgotten(t *testing.T) {
	clk := newFakeClock()
	g := fakeGuard(&Guard{Rate: rate.Inf, IdleTimeout: time.Minute, MaxRetries: -1}, clk, 0)
	u := mustURL(t, "http://cut.test/")
	h := g.host(u)
	g.strikeFor(h, clk.now(), hard, u, http.Header{}, 503, nil, true)
	h.setCrawlDelay("http://cut.test", 5*time.Second, h.base)
	clk.advance(time.Hour)
	g.hosts.sweep(clk.now().UnixNano(), time.Minute)
	if g.hosts.lookup("cut.test") != nil {
		t.Errorf("sweep an hour later kept cut.test; want it forgotten: no longer cut, and quiet")
	}
}
