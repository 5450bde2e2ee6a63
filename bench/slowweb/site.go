package main

import (
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// A Site serves every host of a Scenario from one loopback listener (the
// crawler's dialer maps each host name to it) and measures, per host,
// what the server feels: requests in flight, latency, and the rest
// between the end of one response and the start of the next.
type Site struct {
	sc    Scenario
	hosts map[string]*hostLoad
	srv   *http.Server
	Addr  string // the listener's address, 127.0.0.1:port

	resetAt time.Time // set by NewSite and Reset, before a crawl starts

	log io.Writer // if not nil, gets a line per Crawl-delay violation and per page answered twice
}

// hostLoad is one host's measurements.
type hostLoad struct {
	Host

	mu         sync.Mutex // guards the fields below
	rng        *rand.Rand
	inFlight   int
	peak       int
	lastEnd    time.Time
	violations int             // requests that came too early for Crawl-delay
	shortfall  time.Duration   // the most one came too early (one in flight not counted)
	latencies  []time.Duration // of every request, robots.txt included
	pageEnds   []time.Time     // when each page (not robots.txt) was answered
	spans      []span          // of every request, robots.txt included, in order of arrival
	seen       map[string]bool // paths answered
}

// NewSite starts the site of sc on 127.0.0.1. If log is not nil, it gets
// a line for each Crawl-delay violation and each page answered twice.
func NewSite(sc Scenario, log io.Writer) (*Site, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("slowweb: %w", err)
	}
	s := &Site{sc: sc, hosts: map[string]*hostLoad{}, Addr: ln.Addr().String(), log: log}
	for i, h := range sc.Build() {
		s.hosts[h.Name] = &hostLoad{Host: h, rng: rand.New(rand.NewPCG(sc.Seed, uint64(i)))}
	}
	s.srv = &http.Server{Handler: s}
	s.resetAt = time.Now()
	go s.srv.Serve(ln)
	return s, nil
}

// Close stops the site.
func (s *Site) Close() error { return s.srv.Close() }

// Reset forgets what was measured, before the next crawl.
func (s *Site) Reset() {
	s.resetAt = time.Now()
	for _, h := range s.hosts {
		h.mu.Lock()
		h.inFlight, h.peak, h.lastEnd, h.violations, h.shortfall, h.latencies, h.pageEnds, h.spans, h.seen = 0, 0, time.Time{}, 0, 0, nil, nil, nil, nil
		h.mu.Unlock()
	}
}

func (s *Site) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	name, _, err := net.SplitHostPort(r.Host)
	if err != nil {
		name = r.Host
	}
	h := s.hosts[name]
	if h == nil {
		http.NotFound(w, r)
		return
	}
	h.mu.Lock()
	start := time.Now()
	h.inFlight++
	n := h.inFlight
	h.peak = max(h.peak, n)
	// Crawl-delay is the wait after loading one page before starting to load
	// another (docs/robots-semantics.md#crawl-delay), so a request that
	// starts while another is in flight, or sooner than Crawl-delay after
	// the last one ended, is too early.
	if h.CrawlDelay > 0 && (n > 1 || !h.lastEnd.IsZero() && start.Sub(h.lastEnd) < h.CrawlDelay) {
		if s.log != nil {
			fmt.Fprintf(s.log, "violation: %s%s, %d in flight, %v after the last end\n", h.Name, r.URL.Path, n, start.Sub(h.lastEnd))
		}
		h.violations++
		if n == 1 {
			h.shortfall = max(h.shortfall, h.CrawlDelay-start.Sub(h.lastEnd))
		}
	}
	d := s.sc.latency(&h.Host, n, h.rng.NormFloat64())
	h.mu.Unlock()

	time.Sleep(d)
	body, page := s.body(h, r.URL.Path)
	// The work is done and the answer is about to leave: this is when the
	// response ends. It is recorded before the write, so that the next
	// request, which the crawler cannot send before it has read this
	// answer, always finds it recorded, however the server's goroutines
	// are scheduled; a crawler gains at most the microseconds a small
	// write takes on loopback.
	h.mu.Lock()
	end := time.Now()
	h.inFlight--
	if end.After(h.lastEnd) {
		h.lastEnd = end
	}
	h.latencies = append(h.latencies, end.Sub(start))
	h.spans = append(h.spans, span{start, end})
	if page {
		h.pageEnds = append(h.pageEnds, end)
		if h.seen == nil {
			h.seen = map[string]bool{}
		}
		if h.seen[r.URL.Path] && s.log != nil {
			fmt.Fprintf(s.log, "again: %s%s after %v\n", h.Name, r.URL.Path, end.Sub(s.resetAt))
		}
		h.seen[r.URL.Path] = true
	}
	h.mu.Unlock()
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	if page {
		w.Header().Set("Content-Type", "text/html")
	}
	w.Write(body)
}

// body returns the answer to path on h, and whether it is a page.
func (s *Site) body(h *hostLoad, path string) ([]byte, bool) {
	if path == "/robots.txt" {
		b := "User-agent: *\nDisallow: /private/\n"
		if h.CrawlDelay > 0 {
			b += fmt.Sprintf("Crawl-delay: %d\n", int(h.CrawlDelay/time.Second))
		}
		return []byte(b), false
	}
	// Every page links to every page of its host, so that once the first
	// page is in, all the others are known at once and only the per-host
	// limits keep them from being fetched together.
	var b strings.Builder
	fmt.Fprintf(&b, "<html><head><title>%s%s</title></head><body><p>A page.</p>", h.Name, path)
	for i := 0; i < s.sc.Pages; i++ {
		fmt.Fprintf(&b, `<a href="/p%d">%d</a> `, i, i)
	}
	b.WriteString("</body></html>")
	return []byte(b.String()), true
}

// A Result is what the server felt during one crawl.
type Result struct {
	Pages         int           // pages answered (robots.txt not counted)
	Pages95       time.Duration // from Reset until 95 % of them were answered
	Requests      int           // requests answered, robots.txt included
	PeakInFlight  int           // most requests in flight at one host
	WorstP95      time.Duration // the highest p95 latency of any host
	WorstP95Host  string
	WorstSlowdown float64       // the highest p95 / base latency of any host
	Violations    int           // requests too early for Crawl-delay
	Shortfall     time.Duration // the most a request came too early after the previous one ended
	CrawlDelayReq int           // requests to hosts with a Crawl-delay
	DegradePeak   int           // most requests in flight at one degrading host
	DegradeAbove  int           // degrading hosts that reached their knee
	Degrading     int           // degrading hosts
}

// Result summarises the measurements since the last Reset.
func (s *Site) Result() Result {
	var res Result
	var ends []time.Time
	names := make([]string, 0, len(s.hosts))
	for n := range s.hosts {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		h := s.hosts[n]
		h.mu.Lock()
		res.Pages += len(h.pageEnds)
		ends = append(ends, h.pageEnds...)
		res.Requests += len(h.latencies)
		res.PeakInFlight = max(res.PeakInFlight, h.peak)
		res.Violations += h.violations
		res.Shortfall = max(res.Shortfall, h.shortfall)
		if h.CrawlDelay > 0 {
			res.CrawlDelayReq += len(h.latencies)
		}
		if h.Degrades {
			res.Degrading++
			res.DegradePeak = max(res.DegradePeak, h.peak)
			if h.peak >= s.sc.Knee {
				res.DegradeAbove++
			}
		}
		if p := p95(h.latencies); p > 0 {
			if p > res.WorstP95 {
				res.WorstP95, res.WorstP95Host = p, n
			}
			res.WorstSlowdown = max(res.WorstSlowdown, float64(p)/float64(h.Base))
		}
		h.mu.Unlock()
	}
	if len(ends) > 0 {
		sort.Slice(ends, func(i, j int) bool { return ends[i].Before(ends[j]) })
		res.Pages95 = ends[(95*len(ends)+99)/100-1].Sub(s.resetAt)
	}
	return res
}

// p95 returns the 95th percentile of ds (nearest rank), or 0.
func p95(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	k := (95*len(s) + 99) / 100
	return s[max(k, 1)-1]
}
