package robotsmw

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocolly/colly/v2"
	"github.com/gocolly/colly/v2/queue"
	"golang.org/x/time/rate"

	"github.com/robotsmw/robotsmw/sitemap"
)

// sitemapSite serves robots.txt, the sitemaps in files (by path) and an
// HTML page for every path under /p/; other paths are not found. "{{host}}" in a file becomes the
// server's URL. A path in busy answers 503 with Retry-After: 1 that many
// times first.
func sitemapSite(t testing.TB, robotsTxt string, files map[string]string, busy map[string]int) *site {
	t.Helper()
	var s *site
	var mu sync.Mutex
	s = newSite(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			fmt.Fprint(w, strings.ReplaceAll(robotsTxt, "{{host}}", s.URL))
			return
		}
		mu.Lock()
		fail := busy[r.URL.Path] > 0
		if fail {
			busy[r.URL.Path]--
		}
		mu.Unlock()
		if fail {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		if body, ok := files[r.URL.Path]; ok {
			if strings.HasSuffix(r.URL.Path, ".gz") {
				var b bytes.Buffer
				zw := gzip.NewWriter(&b)
				zw.Write([]byte(body))
				zw.Close()
				w.Write(b.Bytes())
				return
			}
			fmt.Fprint(w, strings.ReplaceAll(body, "{{host}}", s.URL))
			return
		}
		if !strings.HasPrefix(r.URL.Path, "/p/") {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<html><body>ok</body></html>")
	})
	return s
}

// pagePaths returns /p/0 … /p/n-1.
func pagePaths(n int) []string {
	locs := make([]string, n)
	for i := range locs {
		locs[i] = fmt.Sprintf("/p/%d", i)
	}
	return locs
}

func urlsetXML(locs ...string) string {
	var b strings.Builder
	b.WriteString(`<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`)
	for _, l := range locs {
		fmt.Fprintf(&b, "<url><loc>%s</loc></url>", l)
	}
	return b.String() + "</urlset>"
}

func indexXML(locs ...string) string {
	var b strings.Builder
	b.WriteString(`<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`)
	for _, l := range locs {
		fmt.Fprintf(&b, "<sitemap><loc>%s</loc></sitemap>", l)
	}
	return b.String() + "</sitemapindex>"
}

// pagesVisited returns the paths of the HTML pages s served, sorted, and
// fails the test if one was served twice.
func pagesVisited(t *testing.T, s *site) []string {
	t.Helper()
	var out []string
	seen := map[string]bool{}
	for _, h := range s.log() {
		if strings.HasPrefix(h.path, "/p/") {
			if seen[h.path] {
				t.Errorf("page %s fetched twice", h.path)
			}
			seen[h.path] = true
			out = append(out, h.path)
		}
	}
	slices.Sort(out)
	return out
}

func TestSeed(t *testing.T) {
	for _, async := range []bool{false, true} {
		t.Run(fmt.Sprintf("async=%v", async), func(t *testing.T) {
			s := sitemapSite(t, `User-agent: *
Disallow: /private/
Sitemap: /index.xml
Sitemap: {{host}}/index.xml
Sitemap: /private/sm.xml
`, map[string]string{
				"/index.xml":      indexXML("/a.xml.gz", "{{host}}/b.txt", "c.rss", "/index.xml"),
				"/a.xml.gz":       urlsetXML("/p/a1", "/p/a2", "/private/x"),
				"/b.txt":          "{{host}}/p/b1\n{{host}}/p/a1\n",
				"/c.rss":          `<rss><channel><item><link>/p/c1</link></item></channel></rss>`,
				"/private/sm.xml": urlsetXML("/p/never"),
			}, map[string]int{"/b.txt": 1})
			g := &Guard{Rate: rate.Inf}
			opts := []colly.CollectorOption{g.Attach}
			if async {
				opts = append(opts, colly.Async())
			}
			c := colly.NewCollector(opts...)
			var errs reports
			c.OnError(func(r *colly.Response, err error) { errs.add(r.Request.URL.String(), err) })
			st, err := g.Seed(c, s.URL)
			c.Wait()
			if err != nil {
				t.Fatalf("Seed: %v", err)
			}
			want := []string{"/p/a1", "/p/a2", "/p/b1", "/p/c1"}
			if got := pagesVisited(t, s); !slices.Equal(got, want) {
				t.Errorf("Seed visited %q, want %q", got, want)
			}
			if st.Sitemaps != 4 || st.Queued != 4 || st.URLs != 4 || st.Dropped.Duplicate != 1 ||
				st.Dropped.Robots != 1 || st.Skipped.Robots != 1 || st.Skipped.Duplicate != 1 {
				t.Errorf("Seed stats = %+v", st)
			}
			if s.count("/robots.txt") != 1 || s.count("/private/sm.xml") != 0 {
				t.Errorf("robots.txt fetched %d times, the disallowed sitemap %d times; want 1 and 0",
					s.count("/robots.txt"), s.count("/private/sm.xml"))
			}
			if n := s.count("/b.txt"); n != 2 {
				t.Errorf("/b.txt (503 once) fetched %d times, want 2", n)
			}
			if errs.len() != 0 {
				t.Errorf("OnError saw %d errors, want none", errs.len())
			}
		})
	}
}

func TestSeedPacing(t *testing.T) {
	// Sitemap fetches and pages share the host's schedule: together they
	// never go faster than Rate.
	s := sitemapSite(t, "Sitemap: /index.xml\n", map[string]string{
		"/index.xml": indexXML("/a.xml", "/b.xml"),
		"/a.xml":     urlsetXML("/p/1", "/p/2", "/p/3"),
		"/b.xml":     urlsetXML("/p/4", "/p/5", "/p/6"),
	}, nil)
	g := &Guard{Rate: 10}
	sent := recordSends(g)
	c := colly.NewCollector(g.Attach, colly.Async())
	if _, err := g.Seed(c, s.URL); err != nil {
		t.Fatalf("Seed: %v", err)
	}
	c.Wait()
	gaps := sent.gaps()
	if len(gaps) != 9 { // robots.txt, 3 sitemaps, 6 pages
		t.Errorf("%d requests passed the gate, want 10", len(gaps)+1)
	}
	for i, gap := range gaps {
		if gap < 100*time.Millisecond-slack {
			t.Errorf("gap %d between sends = %v, want ≥ 100ms (Rate 10) across sitemaps and pages", i, gap)
		}
	}
	log := s.log()
	if len(log) != 10 {
		t.Fatalf("server saw %d requests, want 10", len(log))
	}
	if span, min := log[len(log)-1].at.Sub(log[0].at), 900*time.Millisecond-arrivalJitter; span < min {
		t.Errorf("10 requests arrived within %v, want ≥ %v at Rate 10", span, min)
	}
}

func TestSeedBackPressure(t *testing.T) {
	// 3,000 pages on an asynchronous collector: Seed keeps Window requests
	// in flight instead of a goroutine per URL.
	const n = 3000
	locs := pagePaths(n)
	s := sitemapSite(t, "Sitemap: /sm.xml\n", map[string]string{"/sm.xml": urlsetXML(locs...)}, nil)
	g := &Guard{Rate: rate.Inf, Seeding: Seeding{Window: 16}}
	c := colly.NewCollector(g.Attach, colly.Async())
	before := runtime.NumGoroutine()
	var peak atomic.Int64
	c.OnRequest(func(*colly.Request) {
		if g := int64(runtime.NumGoroutine()); g > peak.Load() {
			peak.Store(g)
		}
	})
	st, err := g.Seed(c, s.URL)
	c.Wait()
	if err != nil || st.Queued != n {
		t.Fatalf("Seed = %+v, %v; want %d queued", st, err, n)
	}
	if got := len(pagesVisited(t, s)); got != n {
		t.Errorf("Seed visited %d pages, want %d", got, n)
	}
	// 16 requests, each with a colly goroutine and a few of net/http's.
	if extra := peak.Load() - int64(before); extra > 200 {
		t.Errorf("goroutines peaked %d above the start, want ≤ 200 with Window 16", extra)
	}
	if g.seeds.active.Load() != 0 {
		t.Errorf("%d seeded requests still tracked after the crawl", g.seeds.active.Load())
	}
}

func TestSeedQueue(t *testing.T) {
	// More pages than the queue holds: Seed waits for room while the queue
	// runs.
	const n = 300
	locs := pagePaths(n)
	s := sitemapSite(t, "Sitemap: /sm.xml\n", map[string]string{"/sm.xml": urlsetXML(locs...)}, nil)
	q, err := queue.New(4, &queue.InMemoryQueueStorage{MaxSize: 50})
	if err != nil {
		t.Fatal(err)
	}
	g := &Guard{Rate: rate.Inf, Seeding: Seeding{Queue: q}}
	c := colly.NewCollector(g.Attach)
	// Run the queue while Seed fills it. Queue.Run returns whenever the
	// queue runs dry and may then be run again only after Stop, so an
	// operator runs it until Seed is done and the queue empty.
	var st SeedStats
	done := make(chan error, 1)
	go func() {
		var err error
		st, err = g.Seed(c, s.URL)
		done <- err
	}()
	finished := false
	for {
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("Seed: %v", err)
			}
			finished = true
		default:
		}
		if !q.IsEmpty() {
			if err := q.Run(c); err != nil {
				t.Fatalf("Queue.Run: %v", err)
			}
			q.Stop()
			continue
		}
		if finished {
			break
		}
		time.Sleep(time.Millisecond)
	}
	if st.Queued != n {
		t.Errorf("Seed queued %d, want %d", st.Queued, n)
	}
	if got := len(pagesVisited(t, s)); got != n {
		t.Errorf("queue visited %d pages, want %d", got, n)
	}
}

func TestSeedFilters(t *testing.T) {
	s := sitemapSite(t, "Sitemap: /sm.xml\n", map[string]string{"/sm.xml": `<urlset>
<url><loc>/p/old</loc><lastmod>2020-01-01</lastmod></url>
<url><loc>/p/new</loc><lastmod>2026-06-01</lastmod></url>
<url><loc>/p/new.pdf</loc><lastmod>2026-06-01</lastmod></url>
</urlset>`}, nil)
	g := &Guard{Rate: rate.Inf, Seeding: Seeding{Options: sitemap.Options{
		Since:   time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
		Exclude: []string{"/*.pdf$"},
	}}}
	c := colly.NewCollector(g.Attach)
	st, err := g.Seed(c, s.URL)
	if err != nil {
		t.Fatalf("Seed: %v", err)
	}
	if got := pagesVisited(t, s); !slices.Equal(got, []string{"/p/new"}) || st.Dropped.Filter != 2 {
		t.Errorf("Seed visited %q with %+v, want [/p/new] and 2 filtered", got, st)
	}
	// A second Seed: the sitemap has no validators, so it is read again,
	// and colly has visited its page.
	st, err = g.Seed(c, s.URL)
	if err != nil || st.Queued != 0 || st.Visited != 1 {
		t.Errorf("second Seed = %+v, %v; want the page counted as visited", st, err)
	}
}

func TestSeedCrossHost(t *testing.T) {
	other := sitemapSite(t, "", nil, nil)
	s := sitemapSite(t, "Sitemap: /sm.xml\n", map[string]string{
		"/sm.xml": urlsetXML("/p/mine", other.URL+"/p/theirs"),
	}, nil)
	g := &Guard{Rate: rate.Inf}
	c := colly.NewCollector(g.Attach)
	st, err := g.Seed(c, s.URL)
	if err != nil {
		t.Fatalf("Seed: %v", err)
	}
	if st.Queued != 1 || st.Dropped.Scope != 1 || len(pagesVisited(t, other)) != 0 {
		t.Errorf("Seed = %+v; want 1 queued, 1 out of scope, nothing fetched from the other host", st)
	}
}

func TestSeedFailures(t *testing.T) {
	s := sitemapSite(t, "Sitemap: /index.xml\n", map[string]string{
		"/index.xml": indexXML("/gone.xml", "/ok.xml"),
		"/ok.xml":    urlsetXML("/p/1"),
	}, nil)
	g := &Guard{Rate: rate.Inf}
	c := colly.NewCollector(g.Attach)
	st, err := g.Seed(c, s.URL)
	var we *sitemap.WalkError
	var fe *sitemap.FetchError
	if !errors.As(err, &we) || !errors.As(err, &fe) || fe.StatusCode != 404 {
		t.Errorf("Seed error = %v, want a *sitemap.WalkError with the 404", err)
	}
	if st.Queued != 1 || st.Failed != 1 {
		t.Errorf("Seed stats = %+v, want the sibling's page queued and 1 failed", st)
	}
	if _, err := new(Guard).Seed(colly.NewCollector(), s.URL); err == nil {
		t.Errorf("Seed on a collector without the Guard = nil error, want one")
	}
}

func TestSeedThrottledHost(t *testing.T) {
	// Two pages answer 503 with Retry-After: 1 once, and MaxWait is
	// short: pages are deferred and sent again. Seed's window follows them
	// until they end, and every page is fetched.
	const n = 40
	locs := pagePaths(n)
	busy := map[string]int{locs[3]: 1, locs[20]: 1}
	s := sitemapSite(t, "Sitemap: /sm.xml\n", map[string]string{"/sm.xml": urlsetXML(locs...)}, busy)
	g := &Guard{Rate: 50, MaxWait: 200 * time.Millisecond, Seeding: Seeding{Window: 8}}
	var final reports
	g.ErrorHandler = func(r *colly.Request, err error) { final.add(r.URL.String(), err) }
	c := colly.NewCollector(g.Attach, colly.Async())
	var ok atomic.Int64
	c.OnResponse(func(*colly.Response) { ok.Add(1) })
	st, err := g.Seed(c, s.URL)
	c.Wait()
	if err != nil || st.Queued != n {
		t.Fatalf("Seed = %+v, %v; want %d queued", st, err, n)
	}
	if ok.Load() != n || final.len() != 0 {
		t.Errorf("%d pages fetched and %d given up, want %d and 0", ok.Load(), final.len(), n)
	}
	if got := g.Stats().Total.Deferred; got == 0 {
		t.Errorf("Stats().Total.Deferred = 0, want deferrals (MaxWait 200ms behind Retry-After 1s)")
	}
	if g.seeds.active.Load() != 0 {
		t.Errorf("%d seeded requests still tracked after the crawl", g.seeds.active.Load())
	}
}

func TestSeedAbortInOnRequest(t *testing.T) {
	// A user's OnRequest that aborts every page: Seed's window is freed
	// at once, not when the garbage collector takes the requests.
	const n = 40
	locs := pagePaths(n)
	s := sitemapSite(t, "Sitemap: /sm.xml\n", map[string]string{"/sm.xml": urlsetXML(locs...)}, nil)
	g := &Guard{Rate: rate.Inf, Seeding: Seeding{Window: 4}}
	c := colly.NewCollector(g.Attach, colly.Async())
	c.OnRequest(func(r *colly.Request) { r.Abort() })
	done := make(chan struct{})
	var st SeedStats
	var err error
	go func() {
		st, err = g.Seed(c, s.URL)
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(time.Minute): // a deadlock guard, not a timing assertion
		t.Fatal("Seed still waiting for its window a minute after its requests were aborted")
	}
	c.Wait()
	if err != nil || st.Queued != n || len(pagesVisited(t, s)) != 0 {
		t.Errorf("Seed = %+v, %v; want %d queued and none fetched", st, err, n)
	}
}

func TestSeedSitemapBusy(t *testing.T) {
	// A sitemap that always answers 503: Guard.Transport retries it
	// MaxRetries times after the host's pause and the walker reports the
	// 503 without retrying on top.
	s := sitemapSite(t, "Sitemap: /sm.xml\n", map[string]string{"/sm.xml": urlsetXML("/p/1")}, map[string]int{"/sm.xml": 100})
	g := &Guard{Rate: rate.Inf, MaxRetries: 1, MaxRobotsFailures: 1}
	c := colly.NewCollector(g.Attach)
	_, err := g.Seed(c, s.URL)
	var fe *sitemap.FetchError
	if !errors.As(err, &fe) || fe.StatusCode != 503 {
		t.Errorf("Seed error = %v, want a *sitemap.FetchError with status 503", err)
	}
	if n := s.count("/sm.xml"); n != 2 {
		t.Errorf("busy sitemap fetched %d times, want 2 (MaxRetries 1)", n)
	}
}

func TestSeedOptionsPerCall(t *testing.T) {
	s := sitemapSite(t, "Sitemap: /sm.xml\n", map[string]string{"/sm.xml": urlsetXML("/p/1", "/p/2", "/p/3")}, nil)
	g := &Guard{Rate: rate.Inf}
	g.Seeding.MaxURLs = 1
	c := colly.NewCollector(g.Attach)
	if st, _ := g.Seed(c, s.URL); st.Queued != 1 {
		t.Errorf("Seed with MaxURLs 1 queued %d, want 1", st.Queued)
	}
	g.Seeding.MaxURLs = 0
	g.Seeding.Exclude = []string{"/p/3"}
	if st, _ := g.Seed(c, s.URL); st.Queued != 1 || st.Visited != 1 || st.Dropped.Filter != 1 {
		t.Errorf("second Seed with new options = %+v; want /p/2 queued, /p/1 visited, /p/3 filtered", st)
	}
}

func TestSeedWindow(t *testing.T) {
	for _, tc := range []struct {
		g    *Guard
		want int
	}{
		{&Guard{}, 15}, // 1 request/s, MaxWait 30 s
		{&Guard{Rate: 2, MaxWait: 10 * time.Second}, 10},
		{&Guard{Rate: 0.1}, 8},
		{&Guard{Rate: 100}, 256},
		{&Guard{Rate: rate.Inf}, 256},
		{&Guard{Seeding: Seeding{Window: 3}}, 3},
	} {
		if got := tc.g.seedWindow(); got != tc.want {
			t.Errorf("seedWindow() with Rate %v, MaxWait %v, Window %d = %d, want %d",
				tc.g.Rate, tc.g.MaxWait, tc.g.Seeding.Window, got, tc.want)
		}
	}
}

func TestSeedLargeSitemapOnThePagesHost(t *testing.T) {
	// A sitemap of more pages than the walk holds while its fn is behind
	// (a batch in the channel of Concurrency 1, one being handed over):
	// its fetch holds the host's one place in flight until its body ends,
	// and the pages of the same host need that place. The walk must read
	// the rest of the file rather than keep the response open while it
	// waits for the collector, which waits for the host.
	const n = 4000
	s := sitemapSite(t, "Sitemap: {{host}}/sm.xml\n", map[string]string{"/sm.xml": urlsetXML(pagePaths(n)...)}, nil)
	for _, async := range []bool{false, true} {
		t.Run(fmt.Sprintf("async=%v", async), func(t *testing.T) {
			g := &Guard{Rate: rate.Inf, Seeding: Seeding{Window: 8, Options: sitemap.Options{Concurrency: 1, MaxURLs: 40}}}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			c := colly.NewCollector(colly.Async(async), colly.StdlibContext(ctx))
			g.Attach(c)
			st, err := g.Seed(c, s.URL)
			c.Wait()
			if err != nil || st.Queued != 40 {
				t.Fatalf("Seed = %+v, %v; want 40 pages queued (MaxURLs), before the crawl's deadline", st, err)
			}
			if ctx.Err() != nil {
				t.Fatalf("Seed returned only at the crawl's deadline")
			}
		})
	}
}
