package sitemap_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/robotsmw/robotsmw/sitemap"
)

// Options.Filter sees every entry, index children included, and may drop
// or rewrite it (Scrapy's sitemap_filter): here it skips the archive's
// old sitemaps by their lastmod and moves each page to its German
// alternate. Options.Sitemaps names a robots.txt, whose Sitemap lines
// start the walk.
func ExampleOptions_filter() {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			fmt.Fprint(w, "User-agent: *\nDisallow:\nSitemap: /index.xml\n")
		case "/index.xml":
			fmt.Fprint(w, `<sitemapindex>
<sitemap><loc>/2009.xml</loc><lastmod>2010-01-01</lastmod></sitemap>
<sitemap><loc>/2025.xml</loc><lastmod>2025-06-30</lastmod></sitemap>
</sitemapindex>`)
		case "/2025.xml":
			fmt.Fprint(w, `<urlset xmlns:xhtml="http://www.w3.org/1999/xhtml">
<url><loc>/en/a</loc><xhtml:link rel="alternate" hreflang="de" href="/de/a"/></url>
<url><loc>/en/b</loc></url>
</urlset>`)
		default:
			http.NotFound(w, r)
		}
	}))
	defer site.Close()

	since := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	w := &sitemap.Walker{Options: sitemap.Options{
		Sitemaps: []string{"/robots.txt"},
		Filter: func(e sitemap.Entry) (sitemap.Entry, bool) {
			if e.Index {
				return e, e.LastMod.After(since)
			}
			for _, a := range e.Alternates {
				if a.Hreflang == "de" {
					e.Loc = a.Href
					return e, true
				}
			}
			return e, false
		},
	}}
	st, err := w.Walk(context.Background(), site.URL, func(e sitemap.Entry) error {
		fmt.Println(strings.TrimPrefix(e.Loc, site.URL))
		return nil
	})
	fmt.Printf("err %v; read %d; children skipped %d; pages dropped %d\n",
		err, st.Sitemaps, st.Skipped.Filter, st.Dropped.Filter)
	// Output:
	// /de/a
	// err <nil>; read 2; children skipped 1; pages dropped 1
}
