package sitemap

import (
	"net/url"
	"strings"
)

// FromRobots returns the sitemap URLs named by the Sitemap lines of a
// robots.txt file, given as written (policy.Robots.Sitemaps returns them),
// resolved against robotsURL, the URL the file was fetched from.
//
// RFC 9309 §2.2.4 and sitemaps.org: a Sitemap value should be an absolute
// URL and may name another host. Relative values are resolved leniently, as
// crawlers do. Values that are not http or https URLs with a host — such as
// "Sitemap: Sitemap: https://…", written twice — are left out (policy.Lint
// reports them). The result keeps file order and has no duplicates;
// fragments are dropped, and scheme and host are written as their origin
// (policy.Origin: lower case, no default port, no trailing dot, punycode).
func FromRobots(robotsURL *url.URL, lines []string) []string {
	var out []string
	seen := make(map[string]bool, len(lines))
	for _, line := range lines {
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
