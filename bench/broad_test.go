package bench

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocolly/colly/v2"
	"github.com/gocolly/colly/v2/queue"
	"golang.org/x/time/rate"

	robotsmw "github.com/robotsmw/robotsmw/middleware"
	"github.com/robotsmw/robotsmw/policy"
)

// A broad crawl fetches one page from each of many hosts: the case where
// the Guard's per-host state, not its per-request cost, decides what it
// costs. The hosts h000000.test, h000001.test, … are all served by one
// loopback server, which a custom dialer reaches whatever the host name.
const (
	// broadHosts is the number of hosts BenchmarkBroadHosts crawls.
	// ROBOTSMW_BROAD_HOSTS sets another number; -short crawls
	// broadShortHosts.
	broadHosts      = 100_000
	broadShortHosts = 5_000
	// broadTestHosts is the number of hosts TestBroadCrawl crawls.
	broadTestHosts = 500

	// broadWorkers is the number of colly queue threads, so the number of
	// requests in flight, robots.txt fetches included.
	broadWorkers = 64

	// broadIdle is the Guard's IdleTimeout in the crawl that measures
	// memory after the hosts went idle.
	broadIdle = 100 * time.Millisecond

	broadRobots = "User-agent: *\nDisallow: /private/\n"
	broadPage   = "<html><head><title>home</title></head><body><p>Home page.</p></body></html>"
)

// broadLatency returns the time the site takes to answer each request:
// ROBOTSMW_BROAD_LATENCY (a time.Duration, such as 20ms), or none. A
// latency like the web's shows what limits concurrency rather than CPU.
func broadLatency(tb testing.TB) time.Duration {
	s := os.Getenv("ROBOTSMW_BROAD_LATENCY")
	if s == "" {
		return 0
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		tb.Fatalf("ROBOTSMW_BROAD_LATENCY=%q: want a duration such as 20ms", s)
	}
	return d
}

// broadHostCount returns the number of hosts the benchmark crawls.
func broadHostCount(tb testing.TB) int {
	if s := os.Getenv("ROBOTSMW_BROAD_HOSTS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 {
			tb.Fatalf("ROBOTSMW_BROAD_HOSTS=%q: want a positive number", s)
		}
		return n
	}
	if testing.Short() {
		return broadShortHosts
	}
	return broadHosts
}

// broadURL returns the page of host i.
func broadURL(i int) string {
	return fmt.Sprintf("http://h%06d.test/", i)
}

// A broadSite serves /robots.txt and / for every host name, and counts
// what it serves and the connections it accepts.
type broadSite struct {
	*httptest.Server
	robots, pages, other atomic.Int64
	conns                atomic.Int64 // connections accepted
	open                 atomic.Int64 // connections not yet closed
}

// newBroadSite starts a site that waits latency before each answer.
func newBroadSite(tb testing.TB, latency time.Duration) *broadSite {
	tb.Helper()
	s := &broadSite{}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if latency > 0 {
			time.Sleep(latency)
		}
		switch r.URL.Path {
		case "/robots.txt":
			s.robots.Add(1)
			io.WriteString(w, broadRobots)
		case "/":
			s.pages.Add(1)
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, broadPage)
		default:
			s.other.Add(1)
			http.NotFound(w, r)
		}
	}))
	s.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		switch st {
		case http.StateNew:
			s.conns.Add(1)
			s.open.Add(1)
		case http.StateClosed, http.StateHijacked:
			s.open.Add(-1)
		}
	}
	s.Start()
	tb.Cleanup(s.Close)
	return s
}

// reset zeroes the counters between crawls.
func (s *broadSite) reset() {
	s.robots.Store(0)
	s.pages.Store(0)
	s.other.Store(0)
	s.conns.Store(0)
}

// closeConns closes the idle connections of tr and waits until the server
// has closed its side of every connection, so that neither the pool nor
// the server's connections count in what is measured next.
func (s *broadSite) closeConns(tr *http.Transport) {
	tr.CloseIdleConnections()
	for deadline := time.Now().Add(5 * time.Second); s.open.Load() > 0 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(10 * time.Millisecond) // for the server's goroutines to return
}

// broadTransport returns a transport that dials the site for every host
// name. It keeps connections alive, at most one idle per host name and
// 2×broadWorkers idle in all: a host's robots.txt and its page share one
// connection, as they would on the web, so the Guard's robots.txt fetch
// costs a request and not a connection; and the pool, which is keyed by
// host name, does not keep 100,000 idle connections (100,000 descriptors
// on each side and two bufio buffers each), which would swamp the heap
// measured. DisableKeepAlives would double the connections of the guarded
// crawl only.
func broadTransport(addr string) *http.Transport {
	var d net.Dialer
	return &http.Transport{
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return d.DialContext(ctx, network, addr)
		},
		MaxIdleConns:        2 * broadWorkers,
		MaxIdleConnsPerHost: 1,
		IdleConnTimeout:     30 * time.Second,
	}
}

// A broadRun is what one broad crawl measured.
type broadRun struct {
	wall time.Duration
	// HeapAlloc after a GC: before the crawl, after it with the collector
	// (and the Guard) live, and after the Guard's hosts went idle and it
	// evicted them (0 unless broadCrawl was asked to wait for that).
	heap0, heap, idleHeap uint64
	// Goroutines before the crawl, at most during it, and after it once
	// the connections closed; descriptors open at most during the crawl
	// (0 where /proc/self/fd cannot be read).
	goroutines0, peakGoroutines, goroutinesAfter int
	peakFDs                                      int
	scraped, errs                                int64
	robots, pages, conns                         int64
	stats                                        robotsmw.Stats
	// kept and evicted are host states the Guard kept and dropped after
	// the crawl, and after the hosts went idle.
	kept, evicted         int
	idleKept, idleEvicted int
}

// perHost returns heap less the heap before the crawl, per host.
func (r broadRun) perHost(heap uint64, n int) float64 {
	return (float64(heap) - float64(r.heap0)) / float64(n)
}

// broadCrawl crawls one page of each of n hosts of s with a colly queue of
// broadWorkers threads over a synchronous collector, through g if it is
// not nil. If idle is set (g's IdleTimeout must then be broadIdle), it
// then waits until g's hosts have been idle for longer than that, has g
// evict them, and measures the heap again.
//
// colly's queue bounds all the work in flight, so the goroutines and
// descriptors measured are the Guard's and not colly's. With an async
// collector and a LimitRule, colly starts one goroutine per Visit at once,
// bare or guarded (100,000 here), and the rule's Parallelism bounds only
// the HTTP exchange: the Guard's OnRequest, which waits for robots.txt,
// runs before it, so every host's request waits there at once.
func broadCrawl(tb testing.TB, s *broadSite, n int, g *robotsmw.Guard, idle bool) broadRun {
	tb.Helper()
	var r broadRun
	s.reset()
	tr := broadTransport(s.Listener.Addr().String())
	r.goroutines0 = runtime.NumGoroutine()
	r.heap0 = liveHeap()

	c := colly.NewCollector()
	// The transport comes first: Attach wraps the transport the collector
	// has, and the Guard fetches robots.txt through it.
	c.WithTransport(tr)
	var errMu sync.Mutex
	var firstErr error
	fail := func(err error) {
		if atomic.AddInt64(&r.errs, 1) == 1 {
			errMu.Lock()
			firstErr = err
			errMu.Unlock()
		}
	}
	if g != nil {
		g.ErrorHandler = func(req *colly.Request, err error) { fail(fmt.Errorf("guard: %s: %w", req.URL, err)) }
		g.Attach(c)
	}
	c.OnError(func(resp *colly.Response, err error) { fail(fmt.Errorf("colly: %s: %w", resp.Request.URL, err)) })
	c.OnScraped(func(*colly.Response) { atomic.AddInt64(&r.scraped, 1) })

	q, err := queue.New(broadWorkers, &queue.InMemoryQueueStorage{MaxSize: n})
	if err != nil {
		tb.Fatal(err)
	}
	for i := range n {
		if err := q.AddURL(broadURL(i)); err != nil {
			tb.Fatal(err)
		}
	}

	stop := sample(&r.peakGoroutines, &r.peakFDs)
	start := time.Now()
	err = q.Run(c)
	r.wall = time.Since(start)
	stop()
	if err != nil {
		tb.Fatal(err)
	}

	s.closeConns(tr)
	r.goroutinesAfter = runtime.NumGoroutine()
	r.heap = liveHeap()
	r.robots, r.pages, r.conns = s.robots.Load(), s.pages.Load(), s.conns.Load()

	if g != nil {
		r.stats = g.Stats()
		r.kept, r.evicted = keptHosts(r.stats), int(r.stats.Evicted)
		if idle {
			// Stats sweeps when a sweep is due; the second wait covers a
			// sweep scheduled for a moment after the first.
			for range 2 {
				time.Sleep(2 * broadIdle)
				st := g.Stats()
				r.idleKept, r.idleEvicted = keptHosts(st), int(st.Evicted)
				if r.idleKept == 0 {
					break
				}
			}
			r.idleHeap = liveHeap()
		}
	}
	runtime.KeepAlive(c)
	runtime.KeepAlive(q)
	runtime.KeepAlive(g)

	if r.errs > 0 {
		tb.Errorf("%d errors; the first: %v", r.errs, firstErr)
	}
	if r.scraped != int64(n) || r.pages != int64(n) {
		tb.Errorf("scraped %d pages, the server sent %d; want %d", r.scraped, r.pages, n)
	}
	if s.other.Load() != 0 {
		tb.Errorf("the server got %d requests for other paths", s.other.Load())
	}
	return r
}

// liveHeap returns HeapAlloc after a completed GC: the live heap.
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC() // finalizers queued by the first one have run
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// sample records the peak number of goroutines, and of open descriptors,
// until the returned function is called.
func sample(goroutines, fds *int) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for i := 0; ; i++ {
			*goroutines = max(*goroutines, runtime.NumGoroutine())
			if i%20 == 0 {
				*fds = max(*fds, openFDs())
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}

// openFDs returns the number of open descriptors of the process, or 0
// where /proc/self/fd cannot be read.
func openFDs() int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return 0
	}
	return len(ents)
}

// robotsCacheHeap fills a default policy.Cache, the kind the Guard makes
// for itself, with the robots.txt of n hosts, checks one URL of each, and
// returns the heap it keeps and the entries it kept (at most its default
// of 10,000 origins).
func robotsCacheHeap(tb testing.TB, s *broadSite, n int) (heap uint64, kept int) {
	tb.Helper()
	tr := broadTransport(s.Listener.Addr().String())
	heap0 := liveHeap()
	cache := &policy.Cache{Client: &http.Client{Transport: tr}}
	next := make(chan int)
	var wg sync.WaitGroup
	for range broadWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				u, _ := url.Parse(broadURL(i))
				e, err := cache.Get(context.Background(), u)
				if err != nil {
					tb.Errorf("Get(%s): %v", u, err)
					continue
				}
				// As the Guard does: the first check builds the index of
				// the group it uses.
				e.Robots.Allowed("colly", u)
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	s.closeConns(tr)
	heap = liveHeap() - heap0
	for i := range n {
		u, _ := url.Parse(broadURL(i))
		if _, ok := cache.Peek(u); ok {
			kept++
		}
	}
	runtime.KeepAlive(cache)
	return heap, kept
}

// BenchmarkBroadHosts crawls the home page of each of 100,000 hosts
// (ROBOTSMW_BROAD_HOSTS, or 5,000 with -short; ROBOTSMW_BROAD_LATENCY
// delays every answer) with bare colly and with
// colly + robotsmw (Rate = rate.Inf: robots.txt counts against a host's
// rate, so with the default of one request per second each page would
// wait a second for its host's robots.txt fetch). One op is three crawls
// (bare, guarded, and guarded with the hosts evicted after going idle)
// and one fill of a robots.txt cache; run it with -benchtime 1x:
//
//	go test -run XXX -bench BroadHosts -benchtime 1x
//
// It reports, per host crawled:
//   - bare-B/host: the heap bare colly keeps (its visited set);
//   - extra-B/host: the heap the Guard adds, with its host states live;
//     cache-B/host the share of it a default robots.txt cache keeps (up
//     to 10,000 origins, measured by filling one on its own), and
//     state-B/host the rest: the Guard's per-host state;
//   - idle-extra-B/host: the heap the Guard adds once its hosts went idle
//     for longer than IdleTimeout (100 ms here) and were evicted;
//   - bare- and robotsmw-ns/host: wall time;
//
// and peak and final goroutines and peak open descriptors of each crawl.
// Its name leaves "Crawl" out, so that -bench Crawl runs only the
// 10,000-page crawls of crawl_test.go.
func BenchmarkBroadHosts(b *testing.B) {
	n := broadHostCount(b)
	s := newBroadSite(b, broadLatency(b))
	broadCrawl(b, s, min(n, 1000), nil, false) // warm up code paths and pools
	var bare, guarded, idle broadRun
	var cacheHeap uint64
	var cacheKept int
	for i := 0; i < b.N; i++ {
		bare = broadCrawl(b, s, n, nil, false)
		guarded = broadCrawl(b, s, n, &robotsmw.Guard{Rate: rate.Inf}, false)
		idle = broadCrawl(b, s, n, &robotsmw.Guard{Rate: rate.Inf, IdleTimeout: broadIdle}, true)
		cacheHeap, cacheKept = robotsCacheHeap(b, s, n)
	}
	if b.Failed() {
		return
	}
	bareB := bare.perHost(bare.heap, n)
	extraB := guarded.perHost(guarded.heap, n) - bareB
	cacheB := float64(cacheHeap) / float64(n)
	b.ReportMetric(bareB, "bare-B/host")
	b.ReportMetric(extraB, "extra-B/host")
	b.ReportMetric(cacheB, "cache-B/host")
	b.ReportMetric(extraB-cacheB, "state-B/host")
	b.ReportMetric(idle.perHost(idle.idleHeap, n)-bareB, "idle-extra-B/host")
	b.ReportMetric(float64(bare.wall.Nanoseconds())/float64(n), "bare-ns/host")
	b.ReportMetric(float64(guarded.wall.Nanoseconds())/float64(n), "robotsmw-ns/host")
	b.ReportMetric(float64(bare.peakGoroutines), "bare-peak-goroutines")
	b.ReportMetric(float64(guarded.peakGoroutines), "robotsmw-peak-goroutines")
	b.ReportMetric(float64(bare.goroutinesAfter), "bare-goroutines-after")
	b.ReportMetric(float64(guarded.goroutinesAfter), "robotsmw-goroutines-after")
	if guarded.peakFDs != 0 {
		b.ReportMetric(float64(bare.peakFDs), "bare-peak-fds")
		b.ReportMetric(float64(guarded.peakFDs), "robotsmw-peak-fds")
	}

	b.Logf("%d hosts, %d queue threads, GOMAXPROCS %d, latency %v", n, broadWorkers, runtime.GOMAXPROCS(0), broadLatency(b))
	for _, x := range []struct {
		name string
		r    broadRun
	}{{"bare", bare}, {"robotsmw", guarded}, {"robotsmw idle", idle}} {
		b.Logf("%-13s %6.2f s  %6.0f ns/host  heap %+7.1f MB (%4.0f B/host)  goroutines %d → peak %d → %d  peak fds %d  conns %d  robots.txt %d",
			x.name, x.r.wall.Seconds(), float64(x.r.wall.Nanoseconds())/float64(n),
			float64(x.r.heap-x.r.heap0)/(1<<20), x.r.perHost(x.r.heap, n),
			x.r.goroutines0, x.r.peakGoroutines, x.r.goroutinesAfter, x.r.peakFDs, x.r.conns, x.r.robots)
	}
	b.Logf("robotsmw: Stats.Total %+v; %d hosts kept, %d evicted", guarded.stats.Total, guarded.kept, guarded.evicted)
	b.Logf("robotsmw idle: after %v idle %d hosts kept, %d evicted in all; heap %+.1f MB (%.0f B/host)",
		2*broadIdle, idle.idleKept, idle.idleEvicted,
		float64(idle.idleHeap-idle.heap0)/(1<<20), idle.perHost(idle.idleHeap, n))
	b.Logf("robots.txt cache: %.1f MB for %d hosts, %d kept (%.0f B per kept origin)",
		float64(cacheHeap)/(1<<20), n, cacheKept, float64(cacheHeap)/float64(max(cacheKept, 1)))
}

// TestBroadCrawl runs a small broad crawl bare and guarded, and checks
// that every host's robots.txt was fetched once, through the Guard's
// pacing, its page once, and that the Guard evicts every host once idle.
func TestBroadCrawl(t *testing.T) {
	const n = broadTestHosts
	s := newBroadSite(t, 0)
	bare := broadCrawl(t, s, n, nil, false)
	if bare.robots != 0 {
		t.Errorf("bare colly fetched robots.txt %d times, want 0", bare.robots)
	}
	r := broadCrawl(t, s, n, &robotsmw.Guard{Rate: rate.Inf, IdleTimeout: broadIdle}, true)
	if r.robots != n {
		t.Errorf("guarded crawl fetched robots.txt %d times, want %d", r.robots, n)
	}
	if r.stats.Total.Sent != 2*n {
		t.Errorf("Stats().Total.Sent = %d, want %d (robots.txt and page of each host)", r.stats.Total.Sent, 2*n)
	}
	// With an IdleTimeout of 100 ms, a host on a loaded machine may go
	// quiet for that long between its robots.txt and its page and be
	// forgotten in between (it comes back, fresh): each host is evicted at
	// least once, and some twice.
	if r.kept+r.evicted < n {
		t.Errorf("after the crawl the Guard kept %d hosts and evicted %d, want at least %d in all", r.kept, r.evicted, n)
	}
	if r.idleKept != 0 || r.idleEvicted < n {
		t.Errorf("after %v idle the Guard kept %d hosts and evicted %d, want 0 and at least %d", 2*broadIdle, r.idleKept, r.idleEvicted, n)
	}
}

// keptHosts returns the number of host states the Guard keeps.
func keptHosts(s robotsmw.Stats) int {
	return s.Hosts
}
