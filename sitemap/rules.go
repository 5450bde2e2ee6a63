package sitemap

import (
	"errors"
	"net/url"
	"strings"
)

// errNotHTTP is the Err of the FetchError of a given sitemap that is not
// an http or https URL with a host.
var errNotHTTP = errors.New("sitemap: not an http or https URL with a host")

// A Rule routes the pages of a walk (Options.Rules, Scrapy's
// sitemap_rules): the pages whose path and query match Pattern get Tag.
// Pattern is written like Options.Include's, as a robots.txt path (RFC
// 9309 §2.2.3): a prefix such as "/product/", '*' standing for any
// characters and a final '$' ending the match.
type Rule struct {
	Pattern string
	Tag     string // any value; Guard.Seed puts it in the request's Ctx
}

// route returns the Tag of the first of Options.Rules that matches u, and
// whether one did; without Rules every page is kept, untagged.
func (wk *walk) route(u *url.URL) (string, bool) {
	rules := wk.w.Rules
	if len(rules) == 0 {
		return "", true
	}
	target := u.RequestURI()
	for _, r := range rules {
		if matchPattern(r.Pattern, target) {
			return r.Tag, true
		}
	}
	return "", false
}

// follows reports whether Options.Follow lets the walk fetch the index
// child u.
func (wk *walk) follows(u *url.URL) bool {
	return len(wk.w.Follow) == 0 || matchAny(wk.w.Follow, u.RequestURI())
}

// startFrom queues Options.Sitemaps, resolved against base, as the walk's
// first sitemaps. Each is its own host's: as if that host's robots.txt had
// listed it (sitemaps.org scope). A robots.txt URL among them gives its
// Sitemap lines (startRobots, without the fallback). Only the end of the
// walk's context is returned.
func (wk *walk) startFrom(base *url.URL) error {
	for _, s := range wk.w.Sitemaps {
		ref, err := url.Parse(strings.TrimSpace(s))
		if err != nil {
			wk.stats.Skipped.Invalid++
			wk.fail(&FetchError{URL: s, Err: err})
			continue
		}
		u := base.ResolveReference(ref)
		if !normalize(u) {
			wk.stats.Skipped.Invalid++
			wk.fail(&FetchError{URL: s, Err: errNotHTTP})
			continue
		}
		if isRobotsURL(u) {
			if err := wk.startRobots(u, false); err != nil {
				return err
			}
			continue
		}
		h := hostKey(u)
		wk.offer(job{url: u.String(), host: h, owners: []string{h}, chain: []string{u.String()}}, &wk.stats.Skipped)
	}
	return nil
}

// isRobotsURL reports whether u names a robots.txt file: its path is
// /robots.txt (RFC 9309 §2.3) and it has no query.
func isRobotsURL(u *url.URL) bool {
	return u.Path == "/robots.txt" && u.RawQuery == "" && !u.ForceQuery
}
