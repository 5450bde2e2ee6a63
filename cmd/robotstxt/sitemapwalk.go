package main

import (
	"flag"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/robotsmw/robotsmw/sitemap"
)

// walkOptions are the flags of sitemaps -walk that choose what is walked
// and passed on: the sitemap to start from, index children to follow,
// rules that tag pages, hreflang alternates (sitemap.Options).
type walkOptions struct {
	start      string // a SITEMAP argument: walk it instead of robots.txt's sitemaps
	follow     patternList
	rules      ruleList
	alternates bool
	maxSize    byteSize // sitemap.Options.MaxSize
	warnSize   byteSize // sitemap.Options.WarnSize
	since      dateFlag // sitemap.Options.Since, and index children (Filter)
}

func (o *walkOptions) define(fs *flag.FlagSet) {
	fs.Var(&o.follow, "follow", "with -walk, fetch only the index children whose path matches `P` (repeatable)")
	fs.Var(&o.rules, "rule", "with -walk, keep only pages whose path matches a rule `P=TAG` and tag them (repeatable, first match wins)")
	fs.BoolVar(&o.alternates, "alternates", false, "with -walk, pass the pages' hreflang alternates on too")
	fs.Var(&o.maxSize, "max-size", "with -walk, read at most `SIZE` of each sitemap file, such as 100MiB (default 50MiB, sitemaps.org)")
	fs.Var(&o.warnSize, "warn-size", "with -walk, report each sitemap file larger than `SIZE` (default 32MiB; 0 for never)")
	fs.Var(&o.since, "since", "with -walk, drop the pages whose lastmod is before `DATE` (2006-01-02 or RFC 3339), and skip the index children whose lastmod is")
}

// set reports whether a flag that needs -walk was given.
func (o *walkOptions) set() bool {
	return len(o.follow) > 0 || len(o.rules) > 0 || o.alternates || o.maxSize.set || o.warnSize.set || o.since.set
}

func (o *walkOptions) apply(opts *sitemap.Options) {
	if o.start != "" {
		opts.Sitemaps = []string{o.start}
	}
	opts.Follow = o.follow
	opts.Rules = o.rules
	opts.Alternates = o.alternates
	opts.MaxSize = o.maxSize.n
	opts.WarnSize = o.warnSize.n
	if o.warnSize.set && o.warnSize.n == 0 {
		opts.WarnSize = -1 // -warn-size 0: never
	}
	if o.since.set {
		since := o.since.t
		opts.Since = since
		// An index child whose lastmod says it has not changed since
		// is not fetched (Scrapy's sitemap_filter on an index).
		opts.Filter = func(e sitemap.Entry) (sitemap.Entry, bool) {
			return e, !e.Index || e.LastMod.IsZero() || !e.LastMod.Before(since)
		}
	}
}

// A byteSize is a flag of a size in bytes: a number with an optional unit,
// B, KB, MB, GB (powers of 1000) or KiB, MiB, GiB (powers of 1024).
type byteSize struct {
	n   int64
	set bool
}

func (b *byteSize) String() string {
	if !b.set {
		return ""
	}
	return strconv.FormatInt(b.n, 10)
}

func (b *byteSize) Set(v string) error {
	s := strings.TrimSpace(v)
	i := strings.IndexFunc(s, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	num, unit := s, ""
	if i >= 0 {
		num, unit = s[:i], strings.TrimSpace(s[i:])
	}
	units := map[string]float64{"": 1, "b": 1, "kb": 1e3, "mb": 1e6, "gb": 1e9, "k": 1 << 10, "kib": 1 << 10, "m": 1 << 20, "mib": 1 << 20, "g": 1 << 30, "gib": 1 << 30}
	mul, ok := units[strings.ToLower(unit)]
	f, err := strconv.ParseFloat(num, 64)
	if !ok || err != nil || f < 0 || f*mul > 1<<40 {
		return fmt.Errorf("size %q is not a number of bytes up to 1TiB with an optional unit (KiB, MiB, GiB, KB, MB, GB)", v)
	}
	b.n, b.set = int64(f*mul), true
	return nil
}

// A dateFlag is a flag of a date (2006-01-02, read as UTC) or a time
// (RFC 3339).
type dateFlag struct {
	t   time.Time
	set bool
}

func (d *dateFlag) String() string {
	if !d.set {
		return ""
	}
	return d.t.Format(time.RFC3339)
}

func (d *dateFlag) Set(v string) error {
	for _, layout := range []string{time.DateOnly, time.RFC3339} {
		if t, err := time.Parse(layout, strings.TrimSpace(v)); err == nil {
			d.t, d.set = t, true
			return nil
		}
	}
	return fmt.Errorf("date %q is neither 2006-01-02 nor RFC 3339 (2006-01-02T15:04:05Z)", v)
}

// isSitemapURL reports whether the URL argument u names a sitemap rather
// than a site: a path other than "/" and "/robots.txt".
func isSitemapURL(arg string, u *url.URL) bool {
	return !isLocal(arg) && u.Path != "" && u.Path != "/" && u.Path != "/robots.txt"
}

// A patternList is a repeatable flag of path patterns.
type patternList []string

func (l *patternList) String() string { return strings.Join(*l, " ") }

func (l *patternList) Set(v string) error {
	if !strings.HasPrefix(v, "/") && !strings.HasPrefix(v, "*") {
		return fmt.Errorf("pattern %q starts with neither '/' nor '*'", v)
	}
	*l = append(*l, v)
	return nil
}

// A ruleList is the repeatable -rule flag: PATTERN=TAG.
type ruleList []sitemap.Rule

func (l *ruleList) String() string {
	var b []string
	for _, r := range *l {
		b = append(b, r.Pattern+"="+r.Tag)
	}
	return strings.Join(b, " ")
}

func (l *ruleList) Set(v string) error {
	p, tag, ok := strings.Cut(v, "=")
	if !ok || tag == "" {
		return fmt.Errorf("rule %q is not PATTERN=TAG", v)
	}
	if !strings.HasPrefix(p, "/") && !strings.HasPrefix(p, "*") {
		return fmt.Errorf("rule pattern %q starts with neither '/' nor '*'", p)
	}
	*l = append(*l, sitemap.Rule{Pattern: p, Tag: tag})
	return nil
}
