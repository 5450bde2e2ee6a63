package sitemap

import (
	"net/netip"
	"net/url"
	"slices"
	"strings"

	"golang.org/x/net/publicsuffix"

	"github.com/robotsmw/robotsmw/policy"
)

// hostKey returns the host of u as scope compares it: the host and port of
// its origin (policy.Origin: lower case, no trailing dot, IDN in punycode,
// IPv6 canonical, no default port) without the scheme, so that
// "http://S.test.:80" and "https://s.test:443" are both "s.test" and a
// sitemap at example.com:8080 does not cover example.com (docs/sitemaps.md,
// case 94).
func hostKey(u *url.URL) string {
	o, err := policy.Origin(u)
	if err != nil {
		return lowerASCII(u.Host)
	}
	_, h, _ := strings.Cut(o, "://")
	return h
}

// maxForeignPorts bounds the ports of one host name whose robots.txt a
// walk reads for cross-submissions, so that a sitemap listing pages on
// every port of its host cannot make the walk probe them.
const maxForeignPorts = 4

// A scope is what one sitemap file may list (sitemaps.org "Sitemap file
// location" and "Sitemaps & Cross Submits"; docs/sitemaps.md#scope).
type scope struct {
	wk     *walk
	final  *url.URL // the sitemap's URL after redirects
	host   string   // hostKey(final)
	owners []string // hosts whose robots.txt announced the sitemap or its index
	own    bool     // the sitemap is on one of owners, or was redirected there from one within its domain
	dir    string   // Strict: scheme://host/path/ up to the last '/', query ignored (case 92)
}

func (wk *walk) scopeOf(j job, final *url.URL) *scope {
	f := *final
	normalize(&f)
	final = &f
	sc := &scope{wk: wk, final: final, host: hostKey(final), owners: j.owners}
	sc.own = slices.Contains(j.owners, sc.host)
	if !sc.own {
		// http://example.com/sitemap.xml redirected to
		// https://www.example.com/sitemap.xml lists the site's pages; one
		// redirected to another port that is not a scheme's default
		// (another service of the host, maybe internal) does not.
		if u, err := url.Parse(j.url); err == nil && normalize(u) && slices.Contains(j.owners, hostKey(u)) {
			sc.own = related(u.Hostname(), final.Hostname()) && (u.Port() == final.Port() || final.Port() == "")
		}
	}
	if wk.w.Strict {
		p := final.EscapedPath()
		p = p[:strings.LastIndexByte(p, '/')+1]
		if p == "" {
			p = "/"
		}
		sc.dir = final.Scheme + "://" + sc.host + p
	}
	return sc
}

// under reports whether u is under the sitemap's directory (Strict): same
// scheme, host and port, and a path below (docs/sitemaps.md, cases 91-93).
func (sc *scope) under(u *url.URL) bool {
	if sc.dir == "" {
		return true
	}
	return strings.HasPrefix(u.Scheme+"://"+hostKey(u)+u.EscapedPath(), sc.dir)
}

// inChildScope reports whether an index may list the sitemap u: on the
// index's host or a host that announced the index (docs/sitemaps.md,
// case 76), and in Strict mode under its directory (Google).
func (sc *scope) inChildScope(u *url.URL) bool {
	h := hostKey(u)
	if h == sc.host {
		return sc.under(u)
	}
	return slices.Contains(sc.owners, h)
}

// inScope reports whether the sitemap may list the page u: a page of the
// site walked, that is on a host whose robots.txt announced the sitemap or
// an index it came from (in Strict mode under the sitemap's directory when
// the sitemap is on that host), or a page on a host related (see
// crossable) whose own robots.txt lists the sitemap or an index it came
// from (cross-submission, sitemaps.org). A sitemap on another host (a
// CDN, or an address an attacker's robots.txt named) is read for the
// site's pages only: the pages on its own host are dropped unless that
// host proves the cross-submission.
func (sc *scope) inScope(chain []string, u *url.URL) bool {
	h := hostKey(u)
	if h == sc.host && sc.own {
		return sc.under(u)
	}
	if slices.Contains(sc.owners, h) {
		return true
	}
	if !sc.crossable(u) {
		return false
	}
	listed := sc.wk.announcedBy(u)
	if slices.Contains(listed, sc.final.String()) {
		return true
	}
	for _, s := range chain {
		if slices.Contains(listed, s) {
			return true
		}
	}
	return false
}

// crossable reports whether a page u that is not on an announcing host is
// worth a cross-submission check: a host related to one of the announcing
// hosts (www.example.com for a walk of example.com, whose robots.txt names
// a sitemap on www), or, for a sitemap of the site, a host related to the
// sitemap's.
func (sc *scope) crossable(u *url.URL) bool {
	name := u.Hostname()
	if sc.own && related(name, sc.final.Hostname()) {
		return true
	}
	for _, o := range sc.owners {
		if related(name, strings.Trim(hostOf(o), "[]")) {
			return true
		}
	}
	return false
}

// related reports whether hosts a and b are worth a cross-submission
// check: the same host on another port, or hosts of one registrable domain
// (blog.example.com and www.example.com; the public suffix list decides,
// so this.github.io and that.github.io are not). A sitemap listing pages on
// unrelated hosts would otherwise make the walk fetch the robots.txt of
// each (crawler-commons' SiteMapCrossSubmitValidator draws the same line).
func related(a, b string) bool {
	if strings.EqualFold(a, b) {
		return true
	}
	if isIP(a) || isIP(b) {
		return false // the public suffix list would pair 10.0.0.1 with 127.0.0.1
	}
	da, err := publicsuffix.EffectiveTLDPlusOne(strings.ToLower(a))
	if err != nil {
		return false
	}
	db, err := publicsuffix.EffectiveTLDPlusOne(strings.ToLower(b))
	return err == nil && da == db
}

// remember records the sitemaps the robots.txt of host lists.
func (wk *walk) remember(host string, sitemaps []string) {
	wk.announced.mu.Lock()
	defer wk.announced.mu.Unlock()
	wk.announced.m[host] = sitemaps
}

// announcedBy returns the sitemap URLs the robots.txt of u's origin lists,
// reading it (through the walk's robots.txt cache) the first time a host
// is asked, for at most maxForeignHosts hosts a walk.
func (wk *walk) announcedBy(u *url.URL) []string {
	h := hostKey(u)
	wk.announced.mu.Lock()
	listed, ok := wk.announced.m[h]
	n := len(wk.announced.m)
	ports := 0
	for k := range wk.announced.m {
		if hostOf(k) == hostOf(h) {
			ports++
		}
	}
	wk.announced.mu.Unlock()
	if ok {
		return listed
	}
	if n >= maxForeignHosts+1 || ports >= maxForeignPorts {
		wk.cutHosts.Store(true)
		return nil
	}
	robotsURL := &url.URL{Scheme: u.Scheme, Host: u.Host, Path: "/robots.txt"}
	e, err := wk.robotsFor(wk.ctx, robotsURL)
	if err == nil {
		base, _ := url.Parse(e.RobotsURL())
		if base == nil {
			base = robotsURL
		}
		listed = FromRobots(base, e.Robots.Sitemaps())
	}
	if listed == nil {
		listed = []string{}
	}
	wk.remember(h, listed)
	return listed
}

// hostOf returns the host name of a hostKey, without its port.
func hostOf(key string) string {
	if i := strings.LastIndexByte(key, ':'); i >= 0 && !strings.HasSuffix(key, "]") {
		return key[:i]
	}
	return key
}

// isIP reports whether the host name h is an IP address literal.
func isIP(h string) bool {
	_, err := netip.ParseAddr(strings.Trim(h, "[]"))
	return err == nil
}
