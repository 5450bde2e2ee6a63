package bench

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocolly/colly/v2"
	"golang.org/x/time/rate"

	robotsmw "github.com/robotsmw/robotsmw/middleware"
)

// crawlPages is the size of the loopback site crawled by BenchmarkCrawl.
const crawlPages = 10_000

// crawlSite serves a site of crawlPages pages: page n links to pages
// 10n+1 … 10n+10, so a crawl from page 0 reaches every page once. Its
// robots.txt disallows a path no page links to, so every page is checked
// and allowed.
func crawlSite(tb testing.TB) *httptest.Server {
	tb.Helper()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			w.Write([]byte("User-agent: *\nDisallow: /private/\n"))
			return
		}
		n, err := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/p/"))
		if err != nil {
			http.NotFound(w, r)
			return
		}
		var b strings.Builder
		b.WriteString("<html><body>")
		for k := 10*n + 1; k <= 10*n+10 && k < crawlPages; k++ {
			fmt.Fprintf(&b, `<a href="/p/%d">%d</a>`, k, k)
		}
		b.WriteString("</body></html>")
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte(b.String()))
	}))
	tb.Cleanup(s.Close)
	return s
}

// crawl crawls the site with a fresh async collector, through a Guard with
// Rate = rate.Inf when guarded, and returns how long it took.
func crawl(tb testing.TB, base string, tr http.RoundTripper, guarded bool) time.Duration {
	var opts []colly.CollectorOption
	opts = append(opts, colly.Async())
	if guarded {
		g := &robotsmw.Guard{Rate: rate.Inf}
		g.ErrorHandler = func(r *colly.Request, err error) { tb.Errorf("%s: %v", r.URL, err) }
		opts = append(opts, g.Attach)
	}
	c := colly.NewCollector(opts...)
	c.WithTransport(tr)
	c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: 8})
	var pages atomic.Int64
	c.OnHTML("a[href]", func(e *colly.HTMLElement) { e.Request.Visit(e.Attr("href")) })
	c.OnScraped(func(*colly.Response) { pages.Add(1) })
	start := time.Now()
	c.Visit(base + "/p/0")
	c.Wait()
	d := time.Since(start)
	if n := pages.Load(); n != crawlPages {
		tb.Fatalf("crawled %d pages, want %d", n, crawlPages)
	}
	return d
}

func crawlTransport() *http.Transport {
	return &http.Transport{MaxIdleConns: 64, MaxIdleConnsPerHost: 64}
}

// BenchmarkCrawl crawls a loopback site of 10,000 pages with bare colly
// and with colly + robotsmw (Rate = rate.Inf). One op is one crawl.
func BenchmarkCrawl(b *testing.B) {
	s := crawlSite(b)
	for _, guarded := range []bool{false, true} {
		name := "bare"
		if guarded {
			name = "robotsmw"
		}
		b.Run(name, func(b *testing.B) {
			tr := crawlTransport()
			defer tr.CloseIdleConnections()
			for i := 0; i < b.N; i++ {
				crawl(b, s.URL, tr, guarded)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*crawlPages), "ns/page")
		})
	}
}

// BenchmarkCrawlOverhead alternates bare and guarded crawls of the same
// site, so drift affects both alike, and reports the Guard's overhead as a
// percentage of the bare crawl's wall time.
func BenchmarkCrawlOverhead(b *testing.B) {
	s := crawlSite(b)
	tr := crawlTransport()
	defer tr.CloseIdleConnections()
	crawl(b, s.URL, tr, false) // warm up connections and code paths
	var bare, guarded time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if i%2 == 0 {
			bare += crawl(b, s.URL, tr, false)
			guarded += crawl(b, s.URL, tr, true)
		} else {
			guarded += crawl(b, s.URL, tr, true)
			bare += crawl(b, s.URL, tr, false)
		}
	}
	b.ReportMetric(100*(guarded.Seconds()-bare.Seconds())/bare.Seconds(), "overhead-%")
	b.ReportMetric(float64(bare.Nanoseconds())/float64(b.N*crawlPages), "bare-ns/page")
	b.ReportMetric(float64(guarded.Nanoseconds())/float64(b.N*crawlPages), "guarded-ns/page")
}
