package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	robotsmw "github.com/robotsmw/robotsmw/middleware"
	"github.com/robotsmw/robotsmw/policy"
	"github.com/robotsmw/robotsmw/sitemap"
)

func sitemapsCommand() command {
	return command{
		name:     "sitemaps",
		synopsis: "[-base URL] [-walk [-urls] [-follow P]... [-rule P=TAG]... [-alternates] [-since DATE] [-max-size SIZE] [-warn-size SIZE]] [-agent A] [-timeout D] [-allow-private] SITE|ROBOTS|SITEMAP",
		summary:  "list the Sitemap lines of a robots.txt, or walk the sitemaps",
		help: `sitemaps prints the sitemap URLs a robots.txt lists, one a line. SITE is an
http or https URL of a site, whose robots.txt is fetched; relative Sitemap
lines resolve against its URL (after redirects). ROBOTS is a file or "-";
its relative Sitemap lines resolve against -base, or are left out with a
warning.

With -walk, the sitemaps are walked (indexes followed, entries outside the
sitemap's scope or disallowed by robots.txt dropped) and a summary is
printed: sitemap files read, page URLs, failed sitemaps, dropped URLs and
skipped sitemaps by reason. A ROBOTS file needs -base, the site it stands
for. With -urls, every page URL is printed and the summary goes to standard
error. While walking, a progress line is redrawn on standard error when that
is a terminal.

With -walk, a URL whose path is neither "/" nor "/robots.txt" is a SITEMAP:
the walk starts from that sitemap (or index) only, not from the Sitemap
lines of the site's robots.txt, which still decides what may be fetched.
-follow keeps only the index children whose path matches one of its
patterns; -rule P=TAG keeps only the pages whose path matches a rule's
pattern P (the first that matches gives its TAG, printed after the URL
with -urls); -alternates adds the pages' hreflang alternates. Patterns are
written as robots.txt paths: "/blog/", "/*.pdf$". -since DATE drops the
pages whose lastmod is before DATE and does not fetch the index children
whose lastmod is (Scrapy's sitemap_filter on lastmod); entries without a
lastmod are kept.

With -urls, the page URLs are printed as each sitemap is read, a thousand
at a time, so an interrupted walk (Ctrl-C) of a large file has printed
what it read. Each sitemap file is read up to -max-size (50MiB, the
protocol's limit, by default; the file then counts as failed, "limit
reached"); one larger than -warn-size (32MiB by default) is reported on
standard error and counted in the summary ("large sitemaps"). A SIZE is a
number of bytes with an optional unit: 100MiB, 20MB, 512KiB.

examples:
  robotstxt sitemaps https://example.com
  robotstxt sitemaps -base https://example.com robots.txt
  robotstxt sitemaps -walk -urls https://example.com > urls.txt
  robotstxt sitemaps -walk -urls -rule /product/=product https://example.com/sitemap_index.xml
`,
		setup: sitemapsFlags,
	}
}

type sitemapsOptions struct {
	base    string
	walk    bool
	urls    bool
	agent   string
	timeout time.Duration
	walkOptions
}

func sitemapsFlags(fs *flag.FlagSet) action {
	var o sitemapsOptions
	fs.StringVar(&o.base, "base", "", "resolve the relative Sitemap lines of a ROBOTS file against `URL`; with -walk, the site it stands for")
	fs.BoolVar(&o.walk, "walk", false, "walk the sitemaps and print a summary")
	fs.BoolVar(&o.urls, "urls", false, "with -walk, print every page URL; the summary goes to standard error")
	fs.StringVar(&o.agent, "agent", "robotstxt", "the crawler's product token or User-Agent `A`, sent and checked against robots.txt")
	timeoutVar(fs, &o.timeout)
	o.walkOptions.define(fs)
	return func(ctx context.Context, e *env, args []string) (int, error) {
		if err := checkTimeout(o.timeout); err != nil {
			return 0, err
		}
		if err := checkAgent(o.agent); err != nil {
			return 0, err
		}
		if !o.walk && o.walkOptions.set() {
			return 0, usagef("-follow, -rule, -alternates, -since, -max-size and -warn-size need -walk")
		}
		switch len(args) {
		case 0:
			return 0, usagef("missing SITE or ROBOTS")
		case 1:
		default:
			return 0, usagef("takes one SITE or ROBOTS argument, got %d", len(args))
		}
		if o.urls && !o.walk {
			return 0, usagef("-urls needs -walk")
		}
		return e.sitemaps(ctx, args[0], o)
	}
}

func (e *env) sitemaps(ctx context.Context, arg string, o sitemapsOptions) (int, error) {
	var base *url.URL
	if o.base != "" {
		if !isLocal(arg) {
			return 0, usagef("-base is for a ROBOTS file; the Sitemap lines of %s resolve against its robots.txt", arg)
		}
		u, err := url.Parse(o.base)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
			return 0, usagef("-base %q is not an absolute http or https URL with a host", o.base)
		}
		base = u
	}
	f := e.newFetcher(o.agent, o.timeout)
	var site *url.URL
	if isLocal(arg) {
		body, name, err := e.readLocal(arg)
		if err != nil {
			return exitUsage, err
		}
		if !o.walk {
			lines := policy.Parse(body).Sitemaps()
			if len(lines) == 0 {
				fmt.Fprintf(e.stderr, "robotstxt: sitemaps: %s: no Sitemap lines%s\n", name, notRobotsHint(body))
			}
			e.printSitemaps(name, base, lines)
			return exitOK, nil
		}
		if base == nil {
			return 0, usagef("-walk with a ROBOTS file needs -base, the site the file stands for")
		}
		// The walk reads the file as the site's robots.txt.
		if err := f.store.seed(base, body); err != nil {
			return 0, usagef("-base %q: %v", o.base, err)
		}
		site = base
	} else {
		u, err := siteURL(arg)
		if err != nil {
			return 0, err
		}
		site = u
		if o.walk && isSitemapURL(arg, u) {
			o.start = arg
		}
		if !o.walk {
			rt, err := f.get(ctx, site)
			if err != nil {
				return 0, err
			}
			switch {
			case rt.err != nil:
				return exitUsage, fmt.Errorf("%s is unreachable (%s)", robotsName(rt, rt.err), describe(rt.err, o.timeout))
			case rt.state == policy.StateUnavailable:
				fmt.Fprintf(e.stderr, "robotstxt: sitemaps: %s answered %s: no robots.txt, so no Sitemap lines\n", rt.name, statusText(rt.status))
				return exitOK, nil
			}
			robotsAt, _ := url.Parse(rt.name)
			e.printSitemaps(rt.name, robotsAt, rt.robots.Sitemaps())
			return exitOK, nil
		}
	}
	return e.walk(ctx, f, site, o)
}

// notRobotsHint returns what to add to "no Sitemap lines" when body, read
// as a robots.txt, is a sitemap: the file was given as the wrong kind.
func notRobotsHint(body []byte) string {
	if _, err := sitemap.NewReader(bytes.NewReader(body)).Next(); err != nil {
		return ""
	}
	return " (the file is a sitemap, not a robots.txt; -walk takes a sitemap's URL)"
}

// printSitemaps prints the sitemap URLs of a robots.txt's Sitemap lines,
// resolved against base, and warns about the lines left out.
func (e *env) printSitemaps(name string, base *url.URL, lines []string) {
	for _, line := range lines {
		if len(sitemap.FromRobots(base, []string{line})) > 0 {
			continue
		}
		if !utf8.ValidString(line) {
			fmt.Fprintf(e.stderr, "robotstxt: sitemaps: %s: Sitemap line %q left out: not UTF-8 (robots.txt is UTF-8; percent-encode other bytes)\n", name, line)
			continue
		}
		ref, err := url.Parse(strings.TrimSpace(line))
		if base == nil && err == nil && ref.Scheme == "" && ref.Host == "" {
			fmt.Fprintf(e.stderr, "robotstxt: sitemaps: %s: relative Sitemap line %q left out; give -base URL to resolve it\n", name, line)
		} else {
			fmt.Fprintf(e.stderr, "robotstxt: sitemaps: %s: Sitemap line %q left out: not an http or https URL\n", name, line)
		}
	}
	for _, s := range sitemap.FromRobots(base, lines) {
		fmt.Fprintln(e.stdout, s)
	}
}

// walk walks the sitemaps of site and prints the summary.
func (e *env) walk(ctx context.Context, f *fetcher, site *url.URL, o sitemapsOptions) (int, error) {
	p := newProgress(e.stderr)
	// Every request of the walk, robots.txt included, goes through a
	// Guard (Guard.Transport), so the walk is exactly as polite as a
	// crawl: one request in flight per host, the Guard's rate,
	// Crawl-delay from the end of the previous response, back-off and
	// Retry-After (the Guard retries 429 and 503 itself).
	// -timeout bounds each sitemap from when its request is sent
	// (Walker.Timeout), and robots.txt by the cache's Timeout: the client
	// has none of its own, which would count the Guard's waits too.
	g := &robotsmw.Guard{Agent: o.agent, Cache: f.cache}
	onSitemap := func(r sitemap.SitemapReport) {
		if r.Large {
			p.clear()
			fmt.Fprintf(e.stderr, "robotstxt: sitemaps: %s is large: %s read, past -warn-size\n", r.URL, sizeText(r.Size))
		}
		p.sitemap(r)
	}
	client := e.httpClient(0)
	client.Transport = g.Transport(client.Transport)
	f.cache.Client = client
	w := &sitemap.Walker{
		Client:    client,
		Robots:    f.cache,
		UserAgent: o.agent,
		Options: sitemap.Options{
			Timeout:   o.timeout,
			OnSitemap: onSitemap,
			Retries:   -1,
			Interval:  -1,
		},
	}
	o.walkOptions.apply(&w.Options)
	stats, err := w.Walk(ctx, site.String(), func(en sitemap.Entry) error {
		if o.urls {
			line := en.Loc
			if len(o.rules) > 0 {
				line += "\t" + en.Tag
			}
			if _, err := fmt.Fprintln(e.stdout, line); err != nil {
				return err // such as a closed pipe: stop walking
			}
		}
		p.page()
		return nil
	})
	p.clear()
	out := e.stdout
	if o.urls {
		out = e.stderr
	}
	var werr *sitemap.WalkError
	switch {
	case err == nil:
	case errors.As(err, &werr):
	case ctx.Err() != nil:
		writeSummary(out, stats, nil, o.timeout)
		fmt.Fprintln(out, "walk interrupted: the counts are of what was read before it stopped; the sitemap being read then is not counted as failed")
		return 0, errInterrupted
	default:
		writeSummary(out, stats, nil, o.timeout)
		return exitUsage, err
	}
	writeSummary(out, stats, werr, o.timeout)
	if werr != nil {
		for _, fe := range werr.Errs {
			if fe.URL == robotsURL(site).String() {
				return exitUsage, nil // the site's robots.txt could not be read, as for sitemaps without -walk
			}
		}
	}
	if stats.Failed > 0 {
		return exitFail, nil
	}
	return exitOK, nil
}

// writeSummary prints what a walk found and did.
func writeSummary(w io.Writer, st sitemap.Stats, werr *sitemap.WalkError, timeout time.Duration) {
	fmt.Fprintf(w, "sitemap files read: %d", st.Sitemaps)
	if st.NotModified > 0 {
		fmt.Fprintf(w, " (%d not modified)", st.NotModified)
	}
	fmt.Fprintf(w, "\npage URLs: %d\n", st.URLs)
	fmt.Fprintf(w, "failed sitemaps: %d\n", st.Failed)
	if werr != nil {
		for _, fe := range werr.Errs {
			fmt.Fprintf(w, "  %s\n", walkErrText(fe, timeout))
		}
		if more := werr.Failed - len(werr.Errs); more > 0 {
			fmt.Fprintf(w, "  and %d more\n", more)
		}
	}
	fmt.Fprintf(w, "dropped URLs: %d%s\n", st.Dropped.Total(), reasons(st.Dropped))
	fmt.Fprintf(w, "skipped sitemaps: %d%s\n", st.Skipped.Total(), reasons(st.Skipped))
	if st.Large > 0 {
		fmt.Fprintf(w, "large sitemaps: %d (past -warn-size)\n", st.Large)
	}
}

// sizeText writes n bytes for people: "48.2 MiB", "900 B".
func sizeText(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// reasons lists the non-zero counts of d: " (scope 2, robots 1)", or "".
func reasons(d sitemap.Drops) string {
	var parts []string
	for _, r := range []struct {
		name string
		n    int
	}{
		{"scope", d.Scope}, {"filter", d.Filter}, {"robots", d.Robots},
		{"duplicate", d.Duplicate}, {"limit", d.Limit}, {"invalid", d.Invalid},
	} {
		if r.n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", r.name, r.n))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

// walkErrText describes a failed sitemap, as the summary lists it.
func walkErrText(fe *sitemap.FetchError, timeout time.Duration) string {
	var parts []string
	if fe.StatusCode != 0 {
		parts = append(parts, "answered "+statusText(fe.StatusCode))
	}
	if fe.Err != nil {
		d := strings.TrimPrefix(describe(fe.Err, timeout), "sitemap: ")
		if len(parts) == 0 || d != parts[0] {
			// A robots.txt's failure already says what it answered.
			parts = append(parts, d)
		}
	}
	return fe.URL + ": " + strings.Join(parts, ": ")
}
