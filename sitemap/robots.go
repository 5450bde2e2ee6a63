package sitemap

import (
	"net/url"
	"strings"
	"unicode/utf8"
)

// FromRobots returns the sitemap URLs named by the Sitemap lines of a
// robots.txt file, given as written (policy.Robots.Sitemaps returns them),
// resolved against robotsURL, the URL the file was fetched from.
//
// RFC 9309 §2.2.4 and sitemaps.org: a Sitemap value should be an absolute
// URL and may name another host. Relative values are resolved leniently, as
// crawlers do. Values that are not http or https URLs with a host — such as
// "Sitemap: Sitemap: https://…", written twice — are left out (policy.Lint
// reports them). So are values that are not UTF-8, such as
// "http://example.com/\xff.xml": what URL their bytes were meant to name is
// not known (a robots.txt is UTF-8, RFC 9309 §2.3), and fetching them
// percent-encoded (/%FF.xml) reaches a page the site never named; Scrapy
// skips such a line too, and policy.Lint reports it. The result keeps
// file order and has no duplicates;
// fragments are dropped, and scheme and host are written as their origin
// (policy.Origin: lower case, no default port, no trailing dot, punycode).
func FromRobots(robotsURL *url.URL, lines []string) []string {
	var out []string
	seen := make(map[string]bool, len(lines))
	for _, line := range lines {
		if !utf8.ValidString(line) {
			continue
		}
		ref, err := url.Parse(strings.TrimSpace(line))
		if err != nil {
			continue
		}
		u := ref
		if robotsURL != nil {
			u = robotsURL.ResolveReference(ref)
		}
		if !normalize(u) {
			continue
		}
		s := u.String()
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}
