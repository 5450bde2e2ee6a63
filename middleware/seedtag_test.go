package robotsmw

import (
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/gocolly/colly/v2"
	"github.com/gocolly/colly/v2/queue"
	"golang.org/x/time/rate"

	"github.com/robotsmw/robotsmw/sitemap"
)

// TestSeedRulesAndGivenSitemaps seeds from a given sitemap (not robots.txt's),
// follows one child of its index, routes pages by rules into the request's
// Ctx and seeds hreflang alternates: on a synchronous, an asynchronous and a
// queue-fed collector.
func TestSeedRulesAndGivenSitemaps(t *testing.T) {
	const alt = `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:xhtml="http://www.w3.org/1999/xhtml">
<url><loc>/p/product/1</loc><xhtml:link rel="alternate" hreflang="de" href="/p/de/product/1"/></url>
<url><loc>/p/category/a</loc></url><url><loc>/p/about</loc></url></urlset>`
	for _, mode := range []string{"sync", "async", "queue"} {
		t.Run(mode, func(t *testing.T) {
			s := sitemapSite(t, "Sitemap: /listed.xml\n", map[string]string{
				"/listed.xml": urlsetXML("/from-robots"),
				"/given.xml":  indexXML("/shop.xml", "/blog.xml"),
				"/shop.xml":   alt,
				"/blog.xml":   urlsetXML("/p/blog/1"),
			}, nil)
			g := &Guard{Rate: rate.Inf}
			g.Seeding.Sitemaps = []string{"/given.xml"}
			g.Seeding.Follow = []string{"/shop"}
			g.Seeding.Alternates = true
			g.Seeding.Rules = []sitemap.Rule{
				{Pattern: "/p/product/", Tag: "product"},
				{Pattern: "/p/de/product/", Tag: "product"},
				{Pattern: "/p/category/", Tag: "category"},
			}
			opts := []colly.CollectorOption{g.Attach}
			if mode == "async" {
				opts = append(opts, colly.Async())
			}
			var q *queue.Queue
			if mode == "queue" {
				var err error
				if q, err = queue.New(2, &queue.InMemoryQueueStorage{}); err != nil {
					t.Fatal(err)
				}
				g.Seeding.Queue = q
			}
			c := colly.NewCollector(opts...)
			var mu sync.Mutex
			var got []string
			c.OnResponse(func(r *colly.Response) {
				mu.Lock()
				defer mu.Unlock()
				got = append(got, fmt.Sprintf("%s tag=%s of=%s", r.Request.URL.Path,
					r.Ctx.Get(SitemapTagKey), r.Ctx.Get(SitemapAlternateOfKey)))
			})
			st, err := g.Seed(c, s.URL)
			if err != nil {
				t.Fatalf("Seed: %v", err)
			}
			if q != nil {
				if err := q.Run(c); err != nil {
					t.Fatal(err)
				}
			}
			c.Wait()
			slices.Sort(got)
			want := []string{
				"/p/category/a tag=category of=",
				"/p/de/product/1 tag=product of=" + s.URL + "/p/product/1",
				"/p/product/1 tag=product of=",
			}
			if !slices.Equal(got, want) {
				t.Errorf("Seed (Sitemaps, Follow, Rules, Alternates) visited %q, want %q", got, want)
			}
			if s.count("/listed.xml") != 0 || s.count("/blog.xml") != 0 {
				t.Errorf("Seed fetched robots.txt's sitemap %d times and the unfollowed child %d times, want 0 and 0",
					s.count("/listed.xml"), s.count("/blog.xml"))
			}
			if st.Dropped.Filter != 1 || st.Skipped.Filter != 1 {
				t.Errorf("Seed stats = %+v, want 1 page dropped by the rules, 1 child skipped by Follow", st)
			}
		})
	}
}
