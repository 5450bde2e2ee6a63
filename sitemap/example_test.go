package sitemap_test

import (
	"fmt"
	"net/url"

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
