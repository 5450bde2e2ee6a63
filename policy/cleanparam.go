package policy

import (
	"net/url"
	"strings"
	"unicode/utf8"
)

// A CleanParam is a Yandex Clean-param line: URL query parameters that do
// not change a page's content, optionally limited to paths starting with
// Path (docs/robots-semantics.md#clean-param; Yandex's syntax is
// "Clean-param: p0[&p1&..&pn] [path]"). Clean-param lines belong to no
// group: every line applies to every crawler, wherever it stands in the
// file.
type CleanParam struct {
	Params []string // parameter names, as written between '&'; never empty
	Path   string   // path prefix as written; "" means every path
	Line   int      // 1-based line number
}

// parseCleanParam reads "p1&p2 [/prefix]" (Yandex). Empty names, as in
// "&utm_source" or "a&&b", are skipped: a leading '&' is common (Yandex's
// own robots.txt writes one) and names nothing. A value longer than
// maxCleanParamLen characters is ignored, as Yandex ignores it.
func parseCleanParam(value []byte) (CleanParam, bool) {
	if utf8.RuneCount(value) > maxCleanParamLen {
		return CleanParam{}, false
	}
	fields := strings.Fields(string(value))
	if len(fields) == 0 || len(fields) > 2 {
		return CleanParam{}, false
	}
	var cp CleanParam
	for _, p := range strings.Split(fields[0], "&") {
		if p != "" {
			cp.Params = append(cp.Params, p)
		}
	}
	if len(cp.Params) == 0 {
		return CleanParam{}, false
	}
	if len(fields) == 2 {
		cp.Path = fields[1]
	}
	return cp, true
}

// Applies reports whether the line applies to a URL whose escaped path
// is path: Path is a prefix of it, '*' standing for any run of characters
// (Yandex: a '*' is implied at the end of the prefix, so there is no '$').
func (cp CleanParam) Applies(path string) bool {
	return cp.Path == "" || matchPrefix(cp.Path, path)
}

// Canonical returns the canonical form of u under the file's Clean-param
// lines (Yandex): u without the query parameters that a line applying to
// u's path names. Names are compared case-sensitively, percent-escapes
// decoded on both sides: the line's "panorama%5Bspan%5D" (Yandex's own
// robots.txt) names the query's "panorama[span]" and "panorama%5Bspan%5D".
// The other parameters keep their order and spelling; a query left empty
// is removed with its '?'. The fragment is kept. Every line that applies
// is used, wherever it stands and whichever group the crawler follows.
//
// It returns u itself when no parameter is removed, and a copy otherwise;
// u is never modified. Crawlers use it to fetch URLs that differ only in
// such parameters once.
func (r *Robots) Canonical(u *url.URL) *url.URL {
	if r == nil || len(r.cleanParams) == 0 || u == nil || u.RawQuery == "" {
		return u
	}
	path := u.EscapedPath()
	if path == "" {
		path = "/"
	}
	var names []string
	for _, cp := range r.cleanParams {
		if cp.Applies(path) {
			for _, p := range cp.Params {
				names = append(names, unescapeName(p))
			}
		}
	}
	if len(names) == 0 {
		return u
	}
	kept := make([]string, 0, strings.Count(u.RawQuery, "&")+1)
	removed := false
	for _, pair := range strings.Split(u.RawQuery, "&") {
		name, _, _ := strings.Cut(pair, "=")
		if pair != "" && containsString(names, unescapeName(name)) {
			removed = true
			continue
		}
		kept = append(kept, pair)
	}
	if !removed {
		return u
	}
	c := *u
	c.RawQuery = strings.Join(kept, "&")
	c.ForceQuery = false
	if strings.Trim(c.RawQuery, "&") == "" {
		c.RawQuery = ""
	}
	return &c
}

// unescapeName decodes the percent-escapes of a parameter name ('+' is
// a space in a query); a name with a bad escape stays as written.
func unescapeName(s string) string {
	if !strings.ContainsAny(s, "%+") {
		return s
	}
	if d, err := url.QueryUnescape(s); err == nil {
		return d
	}
	return s
}

func containsString(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// matchPrefix reports whether pattern, a prefix where '*' stands for any
// run of characters, matches the start of s. A greedy scan with one
// backtrack point: at most len(pattern)·len(s) steps.
func matchPrefix(pattern, s string) bool {
	p, t := 0, 0
	star, mark := -1, 0
	for {
		if p == len(pattern) {
			return true
		}
		switch {
		case pattern[p] == '*':
			star, mark = p, t
			p++
			continue
		case t < len(s) && pattern[p] == s[t]:
			p++
			t++
			continue
		case star >= 0 && mark < len(s):
			mark++
			p, t = star+1, mark
			continue
		}
		return false
	}
}
