package main

import (
	"flag"
	"fmt"
	"net/url"
	"strings"

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
}

func (o *walkOptions) define(fs *flag.FlagSet) {
	fs.Var(&o.follow, "follow", "with -walk, fetch only the index children whose path matches `P` (repeatable)")
	fs.Var(&o.rules, "rule", "with -walk, keep only pages whose path matches a rule `P=TAG` and tag them (repeatable, first match wins)")
	fs.BoolVar(&o.alternates, "alternates", false, "with -walk, pass the pages' hreflang alternates on too")
}

// set reports whether a flag that needs -walk was given.
func (o *walkOptions) set() bool {
	return len(o.follow) > 0 || len(o.rules) > 0 || o.alternates
}

func (o *walkOptions) apply(opts *sitemap.Options) {
	if o.start != "" {
		opts.Sitemaps = []string{o.start}
	}
	opts.Follow = o.follow
	opts.Rules = o.rules
	opts.Alternates = o.alternates
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
