package sitemap_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"time"

	"github.com/robotsmw/robotsmw/policy"
	"github.com/robotsmw/robotsmw/sitemap"
)

func ExampleFromRobots() {
	r := policy.Parse([]byte(`User-agent: *
Disallow: /private
Sitemap: https://example.com/sitemap.xml
Sitemap: /news-sitemap.xml
Sitemap: Sitemap: https://example.com/typo.xml
`))
	base, _ := url.Parse("https://example.com/robots.txt")
	for _, s := range sitemap.FromRobots(base, r.Sitemaps()) {
		fmt.Println(s)
	}
	// Output:
	// https://example.com/sitemap.xml
	// https://example.com/news-sitemap.xml
}

func ExampleReader() {
	// A sitemap as fetched: the Reader finds the format (gzip or not, XML,
	// RSS, Atom or text) from the bytes.
	body := strings.NewReader(`<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"
        xmlns:image="http://www.google.com/schemas/sitemap-image/1.1">
  <url>
    <loc>https://example.com/</loc>
    <lastmod>2024-05-01</lastmod>
    <priority>0,5</priority>
  </url>
  <url>
    <loc> https://example.com/catalog?item=12&amp;desc=vacation </loc>
    <changefreq>Weekly</changefreq>
    <image:image><image:loc>https://cdn.example.net/12.jpg</image:loc></image:image>
  </url>
</urlset>`)
	r := sitemap.NewReader(body)
	for {
		e, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			fmt.Println("error:", err)
			break
		}
		fmt.Println(e.Loc, e.LastMod.Format(time.DateOnly), e.ChangeFreq, e.Priority, e.Images)
	}
	// Output:
	// https://example.com/ 2024-05-01  -1 0
	// https://example.com/catalog?item=12&desc=vacation 0001-01-01 weekly -1 1
}

func ExampleWalker() {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			fmt.Fprint(w, "User-agent: *\nDisallow: /tmp/\nSitemap: /index.xml\nSitemap: /index.xml\n")
		case "/index.xml": // lists itself: fetched once
			fmt.Fprint(w, `<sitemapindex><sitemap><loc>/index.xml</loc></sitemap>
<sitemap><loc>/blog.xml</loc></sitemap><sitemap><loc>/tmp/old.xml</loc></sitemap></sitemapindex>`)
		case "/blog.xml":
			fmt.Fprintf(w, "%[1]s/blog/hello\n%[1]s/blog/world\n%[1]s/shop/cart\n", "http://"+r.Host)
		default:
			http.NotFound(w, r)
		}
	}))
	defer site.Close()

	w := &sitemap.Walker{UserAgent: "ExampleBot/1.0"}
	w.Include = []string{"/blog/"}
	st, err := w.Walk(context.Background(), site.URL, func(e sitemap.Entry) error {
		fmt.Println(strings.TrimPrefix(e.Loc, site.URL))
		return nil
	})
	fmt.Printf("err %v; read %d; skipped: robots %d, duplicate %d; filtered %d\n",
		err, st.Sitemaps, st.Skipped.Robots, st.Skipped.Duplicate, st.Dropped.Filter)
	// Output:
	// /blog/hello
	// /blog/world
	// err <nil>; read 2; skipped: robots 1, duplicate 1; filtered 1
}

// Stats.Cut names the bounds that cut a walk.
func ExampleCut() {
	st := sitemap.Stats{Cut: sitemap.CutURLs | sitemap.CutSize}
	if st.Cut&sitemap.CutURLs != 0 {
		fmt.Println("MaxURLs reached; cut by:", st.Cut)
	}
	// Output: MaxURLs reached; cut by: urls,size
}
