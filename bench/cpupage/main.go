// Command cpupage measures the CPU the Guard costs per page:
// 200 loopback hosts × 30 linked pages, each answered in 20 ms, crawled
// by an async colly collector with parallelism 32, bare and with
// robotsmw.Attach (Rate: rate.Inf; robots.txt fetches included). Each
// crawl runs in a process of its own, and the CPU (user + system) of
// that whole process is read when it exits; the site runs in this
// process, so its CPU is not counted. The command prints the CPU per page
// of each pair of crawls, bare and guarded, and the median ratio with a
// 95 % bootstrap interval: on a shared machine one pair varies by several
// points, so compare builds by many pairs (-pairs 45), not by one round.
//
// The two crawls of a pair run at the same time (each against hosts of
// its own, h000.hosta.test and h000.hostb.test, on the one site), so that
// load from other processes on the machine, which varies from second to
// second, falls on both alike: on a shared 2-core machine this narrows the
// spread of the ratios from about ±15 to about ±5 points. With
// -together=false they run one after the other, the order flipping each
// pair. The two crawls' host names have the same length and the same kind
// of octets whatever their modes: colly parses every link, and net/http
// and the IDNA code read every host name, octet by octet, so that names of
// different lengths (bare colly's once ran against "get-robots" hosts,
// the Guard's against "guard" ones) made the crawl with the longer names
// cost about three points more of its CPU.
//
//	go run ./cpupage [-pairs 5] [-hosts 200] [-pages 30] [-latency 20ms] [-together=true]
//	    [-against guard|fixed|stored|wrap|colly-robots|get-robots] [-base bare|MODE] [-base-bin PATH]
//	    [-stats] [-cpuprofile PREFIX] [-memprofile PREFIX]
//
// To compare two builds of the Guard, build cpupage at the other commit
// (go build -o /tmp/cpupage-old ./cpupage there) and run -base guard
// -against guard -base-bin /tmp/cpupage-old here: the pairs then set the
// two builds side by side, which tells a change of a point or two from
// the machine's drift better than two runs against the floor an hour
// apart.
//
// For diagnosis, -against compares bare colly with the Guard with
// FixedPace set, with the Guard whose store holds every robots.txt before
// the crawl (stored: what the requests cost without the 200 fetches, as
// in a fleet whose shared store has them), or with a transport of its own
// under colly's client that only passes requests on (what net/http
// charges any such transport: with a client Timeout it arms a timer and a
// goroutine per request for a transport it does not know), or with colly's
// own robots.txt support (colly-robots: no pacing, for reference), or with
// bare colly that only GETs and reads each host's robots.txt before its
// first page (get-robots: the floor under any robots.txt support); -base
// get-robots -against guard measures what the Guard adds to that floor. -pages 60
// halves the share of the robots.txt fetches, and its longer crawls
// narrow the spread of the pairs. -stats prints each crawl's Guard.Stats,
// GC cycles, allocations, peak goroutines, context switches and dials to stderr;
// the profiles are those of the crawl processes. Under a 100 Hz CPU
// profile a crawl is a few hundred samples: compare several, or sample
// with perf (perf record -g, then perf script's pid column tells the
// processes apart).
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"runtime"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/gocolly/colly/v2"
	"golang.org/x/time/rate"

	robotsmw "github.com/robotsmw/robotsmw/middleware"
	"github.com/robotsmw/robotsmw/policy"
)

func main() {
	pairs := flag.Int("pairs", 5, "paired runs")
	hosts := flag.Int("hosts", 200, "hosts")
	pages := flag.Int("pages", 30, "linked pages per host")
	latency := flag.Duration("latency", 20*time.Millisecond, "time the site takes per page")
	child := flag.String("child", "", "internal: crawl as `MODE` (bare, or one of -against's) against -addr")
	addr := flag.String("addr", "", "internal: the site's address")
	profile := flag.String("cpuprofile", "", "write a CPU profile of each crawl to `PREFIX`.MODE.PAIR")
	against := flag.String("against", "guard", "what bare colly is compared with: `MODE` guard (the Guard's defaults), fixed (FixedPace), stored (robots.txt in the Guard's store before the crawl: no fetches), wrap (a transport that only passes requests on, for diagnosis), colly-robots (colly's own robots.txt support, for reference), or get-robots (bare colly that only GETs each robots.txt: the floor)")
	memprofile := flag.String("memprofile", "", "write an allocation profile of each crawl to `PREFIX`.MODE.PAIR")
	base := flag.String("base", "bare", "what -against is compared with: `MODE` bare, or one of -against's (get-robots: what the Guard costs over the fetches alone)")
	together := flag.Bool("together", true, "run the two crawls of each pair at the same time, rather than one after the other")
	stats := flag.Bool("stats", false, "print each crawl's Guard.Stats, GC cycles, allocations and goroutines to stderr")
	baseBin := flag.String("base-bin", "", "run -base's crawls with the cpupage built at `PATH` (go build -o PATH ./cpupage in a checkout of another commit), to compare two builds pair by pair; -base may then name -against's mode")
	label := flag.String("label", "", "internal: the second label of the crawl's host names (default: its mode)")
	flag.Parse()
	if *base == *against && *baseBin == "" {
		fmt.Fprintln(os.Stderr, "cpupage: -base and -against name the same mode (compare two builds with -base-bin)")
		os.Exit(2)
	}
	if *child != "" {
		if *profile != "" {
			f, err := os.Create(*profile)
			if err != nil {
				fmt.Fprintln(os.Stderr, "cpupage:", err)
				os.Exit(1)
			}
			pprof.StartCPUProfile(f)
			defer func() { pprof.StopCPUProfile(); f.Close() }()
		}
		if *memprofile != "" {
			runtime.MemProfileRate = 4096
			defer func() {
				f, err := os.Create(*memprofile)
				if err == nil {
					pprof.Lookup("allocs").WriteTo(f, 0)
					f.Close()
				}
			}()
		}
		if *label == "" {
			*label = *child
		}
		n := crawl(*child, *label, *addr, *hosts, *stats)
		fmt.Println(n)
		return
	}
	var served servedCount
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			fmt.Fprint(w, robotsTxt)
			return
		}
		served.add(r.Host)
		time.Sleep(*latency)
		i, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/p"))
		fmt.Fprint(w, "<html><head><title>page</title></head><body><p>A page.</p>")
		if i+1 < *pages {
			fmt.Fprintf(w, `<a href="/p%d">next</a>`, i+1)
		}
		fmt.Fprint(w, "</body></html>")
	}))
	defer site.Close()
	addrOf := strings.TrimPrefix(site.URL, "http://")
	var ratios []float64
	// The two crawls of a pair, by role: their mode, the binary that runs
	// it, the label of their hosts (which tells their pages apart; of one
	// length for both roles, see above) and their name in the output.
	type crawler struct{ mode, bin, label, name string }
	roles := map[string]crawler{
		"base":    {*base, os.Args[0], baseLabel, *base},
		"against": {*against, os.Args[0], againstLabel, *against},
	}
	if *baseBin != "" {
		roles["base"] = crawler{*base, *baseBin, baseLabel, *base} // a build that knows -label
		if *base == *against {
			roles["against"] = crawler{*against, os.Args[0], againstLabel, "new"}
		}
	}
	for p := 0; p < *pairs; p++ {
		order := []string{"base", "against"}
		if p%2 == 1 {
			order = []string{"against", "base"}
		}
		cpu := map[string]time.Duration{}
		crawlOne := func(role string) (time.Duration, error) {
			cr := roles[role]
			prof, mprof := "", ""
			if *profile != "" {
				prof = fmt.Sprintf("%s.%s.%d", *profile, cr.name, p+1)
			}
			if *memprofile != "" {
				mprof = fmt.Sprintf("%s.%s.%d", *memprofile, cr.name, p+1)
			}
			d, err := run(cr.bin, cr.mode, cr.label, addrOf, *hosts, prof, mprof, *stats)
			if err != nil {
				return 0, err
			}
			if got, want := served.take(cr.label), int64(*hosts**pages); got != want {
				return 0, fmt.Errorf("%s crawl fetched %d pages, want %d", cr.name, got, want)
			}
			return d, nil
		}
		if *together {
			var wg sync.WaitGroup
			errs := make([]error, len(order))
			ds := make([]time.Duration, len(order))
			for i, mode := range order {
				wg.Add(1)
				go func() { defer wg.Done(); ds[i], errs[i] = crawlOne(mode) }()
			}
			wg.Wait()
			for i, mode := range order {
				if errs[i] != nil {
					fmt.Fprintln(os.Stderr, "cpupage:", errs[i])
					os.Exit(1)
				}
				cpu[mode] = ds[i]
			}
		} else {
			for _, mode := range order {
				d, err := crawlOne(mode)
				if err != nil {
					fmt.Fprintln(os.Stderr, "cpupage:", err)
					os.Exit(1)
				}
				cpu[mode] = d
			}
		}
		r := cpu["against"].Seconds() / cpu["base"].Seconds()
		ratios = append(ratios, r)
		n := float64(*hosts * *pages)
		name := roles["against"].name
		if name == "guard" {
			name = "guarded"
		}
		fmt.Printf("pair %d: %s %.0f µs/page, %s %.0f µs/page, %+.1f %%\n", p+1,
			*base, cpu["base"].Seconds()*1e6/n, name, cpu["against"].Seconds()*1e6/n, 100*(r-1))
	}
	lo, hi := medianInterval(ratios)
	over := "bare colly"
	switch {
	case *baseBin != "":
		over = *base + " of " + *baseBin
	case *base != "bare":
		over = *base
	}
	fmt.Printf("median CPU over %s: %+.1f %% (%d pairs; 95 %% interval [%+.1f, %+.1f] %%)\n",
		over, 100*(median(ratios)-1), len(ratios), 100*(lo-1), 100*(hi-1))
}

// median returns the median of xs, which it sorts.
func median(xs []float64) float64 {
	sort.Float64s(xs)
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}

// medianInterval returns a 95 % bootstrap interval of the median of xs:
// the 2.5th and 97.5th percentiles of the medians of 2,000 resamples (with
// a fixed seed, so that the same pairs give the same interval). On this
// shared machine a pair varies by several points; the interval says how
// far the median of this many pairs can be trusted.
func medianInterval(xs []float64) (lo, hi float64) {
	const resamples = 2000
	r := rand.New(rand.NewPCG(1, 2))
	meds := make([]float64, resamples)
	s := make([]float64, len(xs))
	for i := range meds {
		for j := range s {
			s[j] = xs[r.IntN(len(xs))]
		}
		meds[i] = median(s)
	}
	sort.Float64s(meds)
	return meds[resamples*25/1000], meds[resamples*975/1000-1]
}

// The second labels of the two crawls' host names (see above).
const (
	baseLabel    = "hosta"
	againstLabel = "hostb"
)

// run crawls as mode in a child process of bin, its hosts labelled
// label, and returns its CPU time.
func run(bin, mode, label, addr string, hosts int, profile, memprofile string, stats bool) (time.Duration, error) {
	args := []string{"-child", mode, "-addr", addr, "-hosts", strconv.Itoa(hosts), "-cpuprofile", profile, "-memprofile", memprofile,
		"-stats=" + strconv.FormatBool(stats)}
	if label != mode {
		args = append(args, "-label", label)
	}
	name := mode
	cmd := exec.Command(bin, args...)
	cmd.Stderr = os.Stderr
	if _, err := cmd.Output(); err != nil {
		return 0, fmt.Errorf("%s crawl: %w", name, err)
	}
	return cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(), nil
}

// crawl crawls every host's pages from /p0 as mode, the hosts labelled
// label, and returns the pages scraped.
func crawl(mode, label, addr string, hosts int, stats bool) int64 {
	var d net.Dialer
	var dials atomic.Int64
	tr := &http.Transport{
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			dials.Add(1)
			return d.DialContext(ctx, network, addr) // every host name is the loopback site
		},
		MaxIdleConnsPerHost: 2,
	}
	opts := []colly.CollectorOption{colly.Async()}
	c := colly.NewCollector(opts...)
	c.WithTransport(tr)
	var g *robotsmw.Guard
	switch mode {
	case "guard":
		g = &robotsmw.Guard{Rate: rate.Inf}
		g.Attach(c)
	case "fixed":
		g = &robotsmw.Guard{Rate: rate.Inf, FixedPace: true}
		g.Attach(c)
	case "stored":
		// Every origin's robots.txt is in the Guard's store already, as
		// a fleet's shared store would have it: the Guard's cost without
		// the fetches.
		st := storedRobots{}
		now := time.Now()
		for i := 0; i < hosts; i++ {
			st[fmt.Sprintf("http://h%03d.%s.test", i, label)] = policy.Record{
				State: policy.StateParsed, GoodState: policy.StateParsed, StatusCode: 200,
				FetchedAt: now, Expires: now.Add(time.Hour), Body: []byte(robotsTxt),
			}
		}
		g = &robotsmw.Guard{Rate: rate.Inf, RobotsStore: st}
		g.Attach(c)
	case "wrap":
		c.WithTransport(passOn{tr})
	case "colly-robots":
		// colly's own robots.txt support, for reference: it fetches each
		// host's robots.txt once and checks every request against it.
		c.IgnoreRobotsTxt = false
	case "get-robots":
		// Bare colly that only GETs each host's robots.txt before its
		// first page, through the crawl's transport, and reads it: what
		// the fetches alone cost, with nothing parsed, checked or paced.
		// The floor under any robots.txt support.
		getRobots(c, tr)

	}
	if stats {
		defer report(mode, g, time.Now(), watchGoroutines(), &dials)
	}
	c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: 32})
	var scraped atomic.Int64
	c.OnHTML("a[href]", func(e *colly.HTMLElement) { e.Request.Visit(e.Attr("href")) })
	c.OnScraped(func(*colly.Response) { scraped.Add(1) })
	for i := 0; i < hosts; i++ {
		c.Visit(fmt.Sprintf("http://h%03d.%s.test/p0", i, label))
	}
	c.Wait()
	return scraped.Load()
}

// getRobots makes c GET each host's robots.txt through tr, and read it,
// in the OnRequest of the host's first request (-against get-robots).
func getRobots(c *colly.Collector, tr http.RoundTripper) {
	client := &http.Client{Transport: tr}
	var mu sync.Mutex
	fetched := map[string]*sync.Once{}
	c.OnRequest(func(r *colly.Request) {
		mu.Lock()
		once := fetched[r.URL.Host]
		if once == nil {
			once = new(sync.Once)
			fetched[r.URL.Host] = once
		}
		mu.Unlock()
		once.Do(func() {
			resp, err := client.Get(r.URL.Scheme + "://" + r.URL.Host + "/robots.txt")
			if err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		})
	})
}

// robotsTxt is every host's robots.txt.
const robotsTxt = "User-agent: *\nDisallow: /private/\n"

// storedRobots is a policy.Store that holds every origin's robots.txt
// before the crawl (-against stored).
type storedRobots map[string]policy.Record

func (s storedRobots) Load(_ context.Context, origin string) (policy.Record, bool, error) {
	r, ok := s[origin]
	return r, ok, nil
}

func (s storedRobots) Save(context.Context, string, policy.Record) error { return nil }

// servedCount counts the pages the site served, by the crawl's label (the
// second label of the host name).
type servedCount struct {
	mu sync.Mutex
	n  map[string]int64
}

func (s *servedCount) add(host string) {
	mode, _, _ := strings.Cut(strings.TrimPrefix(host[strings.IndexByte(host, '.')+1:], "."), ".")
	s.mu.Lock()
	if s.n == nil {
		s.n = make(map[string]int64)
	}
	s.n[mode]++
	s.mu.Unlock()
}

// take returns and resets the count of mode.
func (s *servedCount) take(mode string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.n[mode]
	delete(s.n, mode)
	return n
}

// passOn is a transport that only passes requests on (-against wrap):
// what any RoundTripper of its own under colly's client costs.
type passOn struct{ next http.RoundTripper }

func (t passOn) RoundTrip(r *http.Request) (*http.Response, error) { return t.next.RoundTrip(r) }

// watchGoroutines samples the number of goroutines every 10 ms until the
// returned function is called, which returns the peak (-stats only).
func watchGoroutines() func() int {
	var peak atomic.Int64
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if n := int64(runtime.NumGoroutine()); n > peak.Load() {
					peak.Store(n)
				}
			}
		}
	}()
	return func() int { close(done); return int(peak.Load()) }
}

// report prints what a crawl did to stderr (-stats).
func report(mode string, g *robotsmw.Guard, start time.Time, peak func() int, dials *atomic.Int64) {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	fmt.Fprintf(os.Stderr, "%s: wall %v user %v sys %v; GC %d, allocs %d (%d MB), peak goroutines %d, ctx switches vol %d invol %d, dials %d\n",
		mode, time.Since(start).Round(time.Millisecond),
		time.Duration(ru.Utime.Nano()).Round(time.Millisecond), time.Duration(ru.Stime.Nano()).Round(time.Millisecond),
		ms.NumGC, ms.Mallocs, ms.TotalAlloc>>20, peak(), ru.Nvcsw, ru.Nivcsw, dials.Load())
	if g == nil {
		return
	}
	s := g.Stats()
	t := s.Total
	fmt.Fprintf(os.Stderr, "%s: sent %d pages %d deferred %d retried %d backoffs %d gave up %d; waits %d, mean %v",
		mode, t.Sent, t.Pages, t.Deferred, t.Retried, t.Backoffs, t.GaveUp, s.Waits.Count,
		(s.Waits.Sum / time.Duration(max(s.Waits.Count, 1))).Round(time.Microsecond))
	prev := int64(0)
	for _, b := range s.Waits.Buckets {
		if b.Count > prev {
			fmt.Fprintf(os.Stderr, ", ≤%v: %d", b.UpTo, b.Count-prev)
		}
		prev = b.Count
	}
	fmt.Fprintln(os.Stderr)
}
