package bench

import (
	"encoding/xml"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocolly/colly/v2"
	"golang.org/x/time/rate"

	robotsmw "github.com/robotsmw/robotsmw/middleware"
)

// seedSitemaps and seedPerSitemap make the site BenchmarkSeed seeds from:
// an index of 4 sitemaps of 50,000 URLs each (the protocol's maximum).
const (
	seedSitemaps   = 4
	seedPerSitemap = 50_000
)

// seedSite serves robots.txt, the index, its sitemaps (built once) and a
// small page for every URL they list; it counts the pages served.
func seedSite(tb testing.TB, pages *atomic.Int64) *httptest.Server {
	tb.Helper()
	var s *httptest.Server
	var once sync.Once
	files := map[string][]byte{}
	build := func() {
		var ix strings.Builder
		ix.WriteString(`<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`)
		for i := range seedSitemaps {
			path := fmt.Sprintf("/s%d.xml", i)
			fmt.Fprintf(&ix, "<sitemap><loc>%s%s</loc></sitemap>", s.URL, path)
			var b strings.Builder
			b.WriteString(`<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`)
			for k := range seedPerSitemap {
				fmt.Fprintf(&b, "<url><loc>%s/p/%d/%d</loc><lastmod>2026-01-02</lastmod></url>", s.URL, i, k)
			}
			b.WriteString("</urlset>")
			files[path] = []byte(b.String())
		}
		ix.WriteString("</sitemapindex>")
		files["/index.xml"] = []byte(ix.String())
		files["/robots.txt"] = []byte("User-agent: *\nDisallow: /private/\nSitemap: /index.xml\n")
	}
	s = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		once.Do(build)
		if body, ok := files[r.URL.Path]; ok {
			w.Write(body)
			return
		}
		if strings.HasPrefix(r.URL.Path, "/p/") {
			pages.Add(1)
			w.Header().Set("Content-Type", "text/html")
			w.Write([]byte("<html><body>ok</body></html>"))
			return
		}
		http.NotFound(w, r)
	}))
	tb.Cleanup(s.Close)
	return s
}

// A peakSampler samples the live heap objects and the goroutines every
// millisecond and keeps the peaks.
type peakSampler struct {
	stop       chan struct{}
	done       chan struct{}
	heap, gors uint64
}

func samplePeaks() *peakSampler {
	p := &peakSampler{stop: make(chan struct{}), done: make(chan struct{})}
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	go func() {
		defer close(p.done)
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(sample)
			p.heap = max(p.heap, sample[0].Value.Uint64())
			p.gors = max(p.gors, uint64(runtime.NumGoroutine()))
			select {
			case <-p.stop:
				return
			case <-t.C:
			}
		}
	}()
	return p
}

func (p *peakSampler) end() (heapMB float64, goroutines uint64) {
	close(p.stop)
	<-p.done
	return float64(p.heap) / (1 << 20), p.gors
}

// BenchmarkSeed seeds an async collector with the 200,000 URLs of a
// loopback site and waits for every page: "robotsmw" through Guard.Seed
// (sitemaps and pages paced by the Guard at Rate = rate.Inf, 256 in
// flight, FixedPace), "by-hand"
// the way users write it today without the library (fetch the sitemaps,
// encoding/xml, c.Visit every URL; colly's own robots.txt support and a
// LimitRule of 256 requests at once, as many as Seed keeps in flight).
// Reported per run: URLs/s, peak heap (heap objects, garbage included)
// and peak goroutines. Run with -benchtime=1x.
func BenchmarkSeed(b *testing.B) {
	total := seedSitemaps * seedPerSitemap
	for _, name := range []string{"robotsmw", "by-hand"} {
		b.Run(name, func(b *testing.B) {
			for range b.N {
				var pages atomic.Int64
				s := seedSite(b, &pages)
				runtime.GC()
				p := samplePeaks()
				start := time.Now()
				c := colly.NewCollector(colly.Async())
				switch name {
				case "robotsmw":
					// As many requests at once to the one host as the
					// by-hand way's LimitRule, and no gap after each
					// response: what is measured is the seeding, not the
					// politeness of one request in flight and a gap
					// after each response (the defaults), which would
					// bound it by loopback round trips.
					g := &robotsmw.Guard{Rate: rate.Inf, InFlight: 256, FixedPace: true}
					g.Attach(c)
					st, err := g.Seed(c, s.URL)
					if err != nil || st.Queued != total {
						b.Fatalf("Seed = %+v, %v", st, err)
					}
				default:
					c.IgnoreRobotsTxt = false
					// As many requests at once as Seed keeps in flight;
					// without a limit the by-hand way runs out of file
					// descriptors.
					c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: 256})
					if err := seedByHand(c, s.URL+"/index.xml"); err != nil {
						b.Fatal(err)
					}
				}
				c.Wait()
				elapsed := time.Since(start)
				heapMB, gors := p.end()
				if n := pages.Load(); n != int64(total) {
					b.Fatalf("%d pages fetched, want %d", n, total)
				}
				b.ReportMetric(float64(total)/elapsed.Seconds(), "URLs/s")
				b.ReportMetric(heapMB, "peak-heap-MB")
				b.ReportMetric(float64(gors), "peak-goroutines")
			}
		})
	}
}

// seedByHand is the code users write without the library: fetch the
// index and each sitemap, decode it with encoding/xml, visit each URL.
func seedByHand(c *colly.Collector, index string) error {
	type loc struct {
		Loc string `xml:"loc"`
	}
	type doc struct {
		Sitemaps []loc `xml:"sitemap"`
		URLs     []loc `xml:"url"`
	}
	get := func(u string) (doc, error) {
		var d doc
		resp, err := http.Get(u)
		if err != nil {
			return d, err
		}
		defer resp.Body.Close()
		return d, xml.NewDecoder(resp.Body).Decode(&d)
	}
	ix, err := get(index)
	if err != nil {
		return err
	}
	for _, sm := range ix.Sitemaps {
		d, err := get(sm.Loc)
		if err != nil {
			return err
		}
		for _, u := range d.URLs {
			c.Visit(u.Loc)
		}
	}
	return nil
}
