package sitemap_test

import (
	"fmt"
	"io"
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
