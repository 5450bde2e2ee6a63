package redisstore

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocolly/colly/v2"
	"github.com/gocolly/colly/v2/queue"
	"github.com/redis/go-redis/v9"
	"golang.org/x/time/rate"

	"github.com/robotsmw/robotsmw/internal/loadsite"
	"github.com/robotsmw/robotsmw/internal/redistest"
	robotsmw "github.com/robotsmw/robotsmw/middleware"
)

// trialBPages is the number of pages of trialBSite: /p0 links to all the
// others.
const trialBPages = 10

// trialBSite is a site whose pages take work to answer and whose
// robots.txt asks for a Crawl-delay of cd; it calls onPage, if set, while
// it works on a page (after the work started), with the request.
func trialBSite(t *testing.T, work time.Duration, cd string, onPage func(r *http.Request)) *loadsite.Site {
	return loadsite.New(t, func(r *http.Request) time.Duration {
		if r.URL.Path == "/robots.txt" {
			return -1
		}
		if onPage != nil {
			onPage(r)
		}
		return work
	}, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			fmt.Fprintf(w, "User-agent: *\nCrawl-delay: %s\n", cd)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<html><body>")
		if r.URL.Path == "/p0" {
			for i := 1; i < trialBPages; i++ {
				fmt.Fprintf(w, `<a href="/p%d">p%d</a> `, i, i)
			}
		}
		fmt.Fprint(w, "</body></html>")
	})
}

// trialBMember is one member of a fleet crawling through the shared
// queue: it tags its requests with X-Member and records the pages it got.
type trialBMember struct {
	client *redis.Client
	fleet  *Fleet
	guard  *robotsmw.Guard
	mu     sync.Mutex // guards got
	got    []string
}

func newTrialBMember(t *testing.T, srv *redistest.Server, prefix string, ttl time.Duration) *trialBMember {
	m := &trialBMember{client: srv.Client()}
	m.fleet = New(m.client)
	m.fleet.Prefix = prefix
	m.fleet.ttl = ttl
	m.guard = &robotsmw.Guard{Agent: "TrialB", Rate: rate.Inf, MaxWait: 2 * time.Second}
	m.fleet.Attach(m.guard)
	t.Cleanup(func() { m.fleet.Close() })
	return m
}

func (m *trialBMember) crawl(ctx context.Context, id int, start string) error {
	q, err := queue.New(2, m.fleet.Queue())
	if err != nil {
		return err
	}
	m.guard.Links.Queue = m.fleet.Queue()
	u, _ := url.Parse(start)
	c := colly.NewCollector(colly.AllowedDomains(u.Hostname()), colly.StdlibContext(ctx), m.guard.Attach)
	if err := c.SetStorage(m.fleet.Storage()); err != nil {
		return err
	}
	m.guard.FollowLinks(c)
	c.OnRequest(func(r *colly.Request) { r.Headers.Set("X-Member", fmt.Sprint(id)) })
	c.OnResponse(func(r *colly.Response) {
		m.mu.Lock()
		m.got = append(m.got, r.Request.URL.Path)
		m.mu.Unlock()
	})
	if err := q.AddURL(start); err != nil {
		return err
	}
	return m.fleet.Run(ctx, q, c)
}

// Three members crawl one slow host through the shared queue; member 0 is
// stopped (its ctx ends) while the server works on one of its pages. The
// others finish the crawl: every page is processed by some member, and at
// the server at most one request of the fleet was in flight at once and
// each page started at least Crawl-delay after the end of the one before.
//
// With crash, member 0's Redis client is closed first, as a process that
// dies does: it can neither give back nor end what it holds, and the
// others take its requests back once its leases ran out.
func TestTrialBFleetStopMidCrawl(t *testing.T) { testTrialBStopMidCrawl(t, false, 2*time.Second) }

func TestTrialBFleetCrashMidCrawl(t *testing.T) { testTrialBStopMidCrawl(t, true, 2*time.Second) }

// With a MaxWait (50 ms) shorter than the Crawl-delay, most requests are
// deferred (robotsmw's own queue of later requests) rather than waited
// for: the stopped member's deferred requests are not lost either.
func TestTrialBFleetStopWhileDeferred(t *testing.T) {
	testTrialBStopMidCrawl(t, false, 50*time.Millisecond)
}

func testTrialBStopMidCrawl(t *testing.T, crash bool, maxWait time.Duration) {
	srv := redistest.Start(t)
	const work = 60 * time.Millisecond
	const cd = 150 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ctx0, stop0 := context.WithCancel(ctx)
	defer stop0()
	var once sync.Once
	stoppedAt := make(chan string, 1)
	ms := make([]*trialBMember, 3)
	site := trialBSite(t, work, "0.15", func(r *http.Request) {
		if r.Header.Get("X-Member") == "0" && r.URL.Path != "/p0" {
			once.Do(func() {
				stoppedAt <- r.URL.Path
				if crash {
					ms[0].client.Close()
				}
				stop0()
			})
		}
	})
	prefix := "trialb:" + t.Name()
	errs := make([]error, 3)
	var wg sync.WaitGroup
	for i := range ms {
		ms[i] = newTrialBMember(t, srv, prefix, time.Second)
		ms[i].guard.MaxWait = maxWait
		c := ctx
		if i == 0 {
			c = ctx0
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = ms[i].crawl(c, i, site.URL+"/p0")
		}()
	}
	wg.Wait()
	if !crash && !errors.Is(errs[0], context.Canceled) {
		select {
		case <-stoppedAt:
			t.Errorf("member 0 (stopped): Run = %v, want context.Canceled", errs[0])
		default:
			t.Logf("member 0 fetched no page but /p0; not stopped (Run = %v)", errs[0])
		}
	}
	for i := 1; i < 3; i++ {
		if errs[i] != nil {
			t.Errorf("member %d: Run = %v, want nil", i, errs[i])
		}
	}
	processed := map[string]int{}
	for _, m := range ms {
		for _, p := range m.got {
			processed[p]++
		}
	}
	for i := 0; i < trialBPages; i++ {
		if p := fmt.Sprintf("/p%d", i); processed[p] == 0 {
			t.Errorf("%s was processed by no member: lost", p)
		}
	}
	peak, spans := site.Result()
	if peak > 1 {
		t.Errorf("server saw %d requests in flight at once, want ≤ 1 fleet-wide", peak)
	}
	// The page member 0 was stopped on was abandoned by the client when
	// its work began: Crawl-delay counts from that error (a failed response
	// ends too; docs/robots-semantics.md#crawl-delay), not from the end of the
	// server's work, which the client never sees.
	aborted := ""
	select {
	case aborted = <-stoppedAt:
	default:
	}
	for i := 1; i < len(spans); i++ {
		idle := spans[i].Start.Sub(spans[i-1].End)
		if spans[i-1].Path == aborted {
			aborted = "" // its first fetch only
			if gap := spans[i].Start.Sub(spans[i-1].Start); gap < cd-arrivalJitter {
				t.Errorf("%s started %v after the start of %s, abandoned by the stopped member, want ≥ Crawl-delay %v", spans[i].Path, gap, spans[i-1].Path, cd)
			}
			t.Logf("%s started %v after the server's end of %s, abandoned by the stopped member", spans[i].Path, idle, spans[i-1].Path)
			continue
		}
		if idle < cd {
			t.Errorf("%s started %v after the end of %s, want ≥ Crawl-delay %v", spans[i].Path, idle, spans[i-1].Path, cd)
		}
	}
	probe := newTrialBMember(t, srv, prefix, time.Second)
	st, err := probe.fleet.Stats(context.Background())
	if err != nil || st.Queued != 0 || st.InFlight != 0 || st.Dropped != 0 {
		t.Errorf("Stats after the crawl = %+v, %v; want nothing queued, held or dropped", st, err)
	}
	var paths []string
	for _, s := range spans {
		paths = append(paths, s.Path)
	}
	t.Logf("server saw %s", strings.Join(paths, " "))
}

// A member stalls after its Guard let a request go (a long GC pause, a
// descheduled thread) for longer than its in-flight lease lasts; the other
// members go on once the lease ran out. On waking it must not send that
// request on top of theirs: at the server, at most one request in flight
// and Crawl-delay from the end of the one before, all along.
func TestTrialBFleetStalledMemberNoBurst(t *testing.T) {
	srv := redistest.Start(t)
	const work = 100 * time.Millisecond
	const cd = 100 * time.Millisecond
	const ttl = 300 * time.Millisecond
	site := trialBSite(t, work, "0.1", nil)
	fleetCrawl{members: 3, visits: 3, parallelism: 2, ttl: ttl, guard: fixedPaceGuard,
		setup: func(m int, _ *Fleet, c *colly.Collector) {
			if m != 0 {
				return
			}
			var wake atomic.Int64
			// After the Guard's gate: the first request holds its
			// slot and lease, and the member stalls before it is
			// sent, as a process stopped or in a long pause does:
			// every request that passes the gate meanwhile waits
			// for the same wake.
			c.OnRequestHeaders(func(r *colly.Request) {
				wake.CompareAndSwap(0, time.Now().Add(3*ttl).UnixNano())
				time.Sleep(time.Until(time.Unix(0, wake.Load())))
			})
		}}.run(t, srv, site.URL)
	peak, spans := site.Result()
	var paths []string
	for _, s := range spans {
		paths = append(paths, fmt.Sprintf("%s@%v-%v", s.Path, s.Start.Sub(spans[0].Start).Round(time.Millisecond), s.End.Sub(spans[0].Start).Round(time.Millisecond)))
	}
	t.Logf("server saw %s", strings.Join(paths, " "))
	if len(spans) != 9 {
		t.Errorf("server saw %d pages, want 9", len(spans))
	}
	if peak > 1 {
		t.Errorf("server saw %d requests in flight at once, want ≤ 1 fleet-wide", peak)
	}
	for i := 1; i < len(spans); i++ {
		if idle := spans[i].Start.Sub(spans[i-1].End); idle < cd {
			t.Errorf("%s started %v after the end of %s, want ≥ Crawl-delay %v", spans[i].Path, idle, spans[i-1].Path, cd)
		}
	}
}

// One member's clock is a day ahead (a machine whose clock is wrong):
// pacing runs on Redis's clock, so the server still sees one request in
// flight and the Crawl-delay kept; robots.txt, which that member's clock
// finds expired at once, is not fetched again and again.
func TestTrialBFleetSkewedClock(t *testing.T) {
	srv := redistest.Start(t)
	const cd = 100 * time.Millisecond
	var robotsHits atomic.Int64
	site := loadsite.New(t, func(r *http.Request) time.Duration {
		if r.URL.Path == "/robots.txt" {
			robotsHits.Add(1)
		}
		return 20 * time.Millisecond
	}, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			fmt.Fprint(w, "User-agent: *\nCrawl-delay: 0.1\n")
			return
		}
		fmt.Fprint(w, "<html><body>ok</body></html>")
	})
	fleetCrawl{members: 3, visits: 4, parallelism: 2, guard: fixedPaceGuard,
		setup: func(m int, f *Fleet, _ *colly.Collector) {
			if m == 0 {
				f.Now = func() time.Time { return time.Now().Add(25 * time.Hour) }
			}
		}}.run(t, srv, site.URL)
	peak, spans := site.Result()
	if peak > 1 {
		t.Errorf("server saw %d requests in flight at once, want ≤ 1 fleet-wide", peak)
	}
	pages := 0
	for i, s := range spans {
		if s.Path != "/robots.txt" {
			pages++
		}
		if i > 0 {
			// robots.txt fetched again by the member whose clock is
			// ahead is not held to the Crawl-delay: that member may
			// not know it yet (the fleet's pacing state does not keep
			// it), and robots.txt is how it learns it.
			if idle := s.Start.Sub(spans[i-1].End); idle < cd && s.Path != "/robots.txt" {
				t.Errorf("%s started %v after the end of %s, want ≥ Crawl-delay %v", s.Path, idle, spans[i-1].Path, cd)
			}
			if s.Path == "/robots.txt" && i > 0 {
				t.Logf("robots.txt fetched again %v after the end of %s", s.Start.Sub(spans[i-1].End), spans[i-1].Path)
			}
		}
	}
	if pages != 12 {
		t.Errorf("server saw %d pages, want 12", pages)
	}
	if n := robotsHits.Load(); n > 2 {
		t.Errorf("robots.txt fetched %d times, want at most 2 (once, and once more for the member whose clock is ahead)", n)
	}
}

// A host that answers its headers at once and then streams the body
// slowly: the response ends with its body, so the fleet keeps one request
// in flight and the Crawl-delay from the end of the body, as the server
// sees it (the handler's return).
func TestTrialBFleetSlowBody(t *testing.T) {
	srv := redistest.Start(t)
	const cd = 100 * time.Millisecond
	type span struct {
		path       string
		start, end time.Time
	}
	var mu sync.Mutex
	var spans []span
	inFlight, peak := 0, 0
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			fmt.Fprint(w, "User-agent: *\nCrawl-delay: 0.1\n")
			return
		}
		mu.Lock()
		inFlight++
		peak = max(peak, inFlight)
		start := time.Now()
		mu.Unlock()
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusOK)
		for i := 0; i < 5; i++ {
			fmt.Fprintf(w, "<p>%d</p>", i)
			w.(http.Flusher).Flush()
			time.Sleep(40 * time.Millisecond)
		}
		mu.Lock()
		inFlight--
		spans = append(spans, span{r.URL.Path, start, time.Now()})
		mu.Unlock()
	}))
	defer site.Close()
	fleetCrawl{members: 3, visits: 2, parallelism: 2, guard: fixedPaceGuard}.run(t, srv, site.URL)
	mu.Lock()
	defer mu.Unlock()
	sort.Slice(spans, func(i, j int) bool { return spans[i].start.Before(spans[j].start) })
	if len(spans) != 6 || peak != 1 {
		t.Errorf("server saw %d pages, peak in flight %d; want 6, 1", len(spans), peak)
	}
	for i := 1; i < len(spans); i++ {
		if idle := spans[i].start.Sub(spans[i-1].end); idle < cd {
			t.Errorf("%s started %v after the end of %s's body, want ≥ Crawl-delay %v", spans[i].path, idle, spans[i-1].path, cd)
		}
	}
}

// Guard.InFlight raised to 2 on every member: the fleet keeps at most 2
// requests in flight to the host.
func TestTrialBFleetInFlightTwo(t *testing.T) {
	srv := redistest.Start(t)
	site := trialBSite(t, 150*time.Millisecond, "0", nil)
	fleetCrawl{members: 3, visits: 4, parallelism: 3, guard: func(m int) *robotsmw.Guard {
		g := fixedPaceGuard(m)
		g.InFlight = 2
		return g
	}}.run(t, srv, site.URL)
	peak, spans := site.Result()
	if len(spans) != 12 || peak > 2 {
		t.Errorf("server saw %d pages, peak in flight %d; want 12, ≤ 2", len(spans), peak)
	}
	if peak < 2 {
		t.Logf("server saw peak in flight %d: the second place was never used", peak)
	}
}
