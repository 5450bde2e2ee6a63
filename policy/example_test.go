package policy_test

import (
	"fmt"
	"net/url"

	"github.com/robotsmw/robotsmw/policy"
)

const exampleRobots = `# robots.txt for https://example.com
User-agent: *
Disallow: /private/
Allow: /private/press/
Crawl-delay: 2.5

User-agent: ExampleBot
Disallow: /
Allow: /$

Sitemap: https://example.com/sitemap.xml
Sitemap: https://example.com/news/sitemap.xml
`

func ExampleParse() {
	r := policy.Parse([]byte(exampleRobots))
	u, _ := url.Parse("https://example.com/private/report.html")
	fmt.Println(r.Allowed("OtherBot", u))
	// Output: false
}

func ExampleRobots_Allowed() {
	r := policy.Parse([]byte(exampleRobots))
	for _, s := range []string{
		"https://example.com/",
		"https://example.com/private/report.html",
		"https://example.com/private/press/2024.html",
		"https://example.com/robots.txt",
	} {
		u, _ := url.Parse(s)
		fmt.Println(u.Path, r.Allowed("OtherBot", u), r.Allowed("ExampleBot", u))
	}
	// Output:
	// / true true
	// /private/report.html false false
	// /private/press/2024.html true false
	// /robots.txt true true
}

func ExampleRobots_Matcher() {
	r := policy.Parse([]byte(exampleRobots))
	m := r.Matcher("OtherBot") // once per robots.txt and agent
	for _, s := range []string{
		"https://example.com/private/report.html",
		"https://example.com/private/press/2024.html",
	} {
		u, _ := url.Parse(s)
		fmt.Println(u.Path, m.Allowed(u))
	}
	// Output:
	// /private/report.html false
	// /private/press/2024.html true
}

func ExampleRobots_Explain() {
	r := policy.Parse([]byte(exampleRobots))
	for _, s := range []string{
		"https://example.com/private/report.html",
		"https://example.com/about",
		"https://example.com/robots.txt",
	} {
		u, _ := url.Parse(s)
		fmt.Println(r.Explain("OtherBot", u))
	}
	u, _ := url.Parse("https://example.com/about")
	d := r.Explain("examplebot", u)
	fmt.Println(d.Group, d.Agent, d.Rule.Line, d.Allowed)
	// Output:
	// disallowed by line 3: disallow: /private/ (group "*")
	// allowed: no rule matched in group "*"
	// allowed: /robots.txt is always allowed
	// specific ExampleBot 8 false
}

func ExampleProductToken() {
	header := "ExampleBot/1.0 (+https://example.org/bot)"
	r := policy.Parse([]byte("User-agent: ExampleBot\nDisallow: /\n"))
	u, _ := url.Parse("https://example.com/page")
	fmt.Println(policy.ProductToken(header))
	fmt.Println(r.Allowed(header, u))                      // the full header names no group
	fmt.Println(r.Allowed(policy.ProductToken(header), u)) // its product token does
	// Output:
	// ExampleBot
	// true
	// false
}

func ExampleRobots_CrawlDelay() {
	r := policy.Parse([]byte(exampleRobots))
	d, ok := r.CrawlDelay("OtherBot")
	fmt.Println(d, ok)
	d, ok = r.CrawlDelay("ExampleBot")
	fmt.Println(d, ok)
	// Output:
	// 2.5s true
	// 0s false
}

func ExampleRobots_Sitemaps() {
	r := policy.Parse([]byte(exampleRobots))
	for _, s := range r.Sitemaps() {
		fmt.Println(s)
	}
	// Output:
	// https://example.com/sitemap.xml
	// https://example.com/news/sitemap.xml
}

func ExampleRobots_Canonical() {
	r := policy.Parse([]byte("User-agent: *\nDisallow:\nClean-param: ref&utm_source /shop/\n"))
	for _, raw := range []string{
		"https://example.com/shop/item?id=7&ref=mail",
		"https://example.com/shop/item?utm_source=ad&id=7",
		"https://example.com/blog/?ref=mail", // another path: kept
	} {
		u, _ := url.Parse(raw)
		fmt.Println(r.Canonical(u))
	}
	// Output:
	// https://example.com/shop/item?id=7
	// https://example.com/shop/item?id=7
	// https://example.com/blog/?ref=mail
}
