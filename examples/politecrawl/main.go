// Command politecrawl crawls a site with colly and robotsmw and reports
// what happened to every URL and why.
//
// With no flags it serves an embedded demo site on 127.0.0.1 and crawls
// it, offline, in a few seconds: robots.txt with a group for PoliteCrawl
// and one for everyone else, a Crawl-delay, wildcard and '$' rules and
// Sitemap lines; a sitemap index with a gzip child; pages that link into
// disallowed areas, directly and through a redirect; a rel="nofollow" link
// and a forum page that says noindex, nofollow; a shop that answers 503
// with Retry-After to its first requests. The crawl is seeded from the
// sitemaps (Guard.Seed) and follows links, all through the Guard.
//
//	go run ./examples/politecrawl
//	go run ./examples/politecrawl -url https://example.com -max 50 -rate 0.5
//
// On a terminal a progress line is redrawn in place; otherwise each
// outcome is printed as a line. -v prints the Guard's structured log
// (log/slog) on stderr instead of the progress line, -v=debug with the
// deferrals; -metrics ADDR serves the Guard's Stats for Prometheus on
// http://ADDR/metrics while the crawl runs. The final report lists the
// counts per outcome, every blocked URL with the rule and line that
// blocked it, every back-off with its reason and pause, and the sitemaps
// read.
//
//	go run ./examples/politecrawl -v -metrics 127.0.0.1:9100
//
// Ctrl-C stops the crawl: what was not sent is counted as cancelled, the
// report is printed and the command exits 130.
//
// Exit status: 0 when the crawl ran; 1 when no page could be fetched and
// some gave up (robots.txt unreachable, say); 2 for bad usage or a site
// that cannot be reached; 130 interrupted, after the report.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http/httptest"
	"net/url"
	"os"
	"os/signal"
	"time"

	"github.com/gocolly/colly/v2"
	"golang.org/x/time/rate"

	"github.com/robotsmw/robotsmw/examples/internal/cmdline"
	"github.com/robotsmw/robotsmw/internal/promtext"
	robotsmw "github.com/robotsmw/robotsmw/middleware"
	"github.com/robotsmw/robotsmw/netguard"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr, isTerminal(os.Stdout)))
}

// isTerminal reports whether f is a terminal (a character device).
func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// options are the command's flags.
type options struct {
	url      string
	agent    string
	rate     float64
	max      int
	sitemaps bool
	verbose  logLevel
	metrics  string
	private  bool
}

// command returns the command's flags, bound to o.
func command(o *options) *cmdline.Command {
	fs := cmdline.New("politecrawl", "", `Crawls the embedded demo site, offline, or the site of -url, through
robotsmw: seeded from its sitemaps, following links, and reports what
happened to every URL and why.`)
	fs.StringVar(&o.url, "url", "", "crawl this site instead of the embedded demo site")
	fs.StringVar(&o.agent, "agent", "PoliteCrawl/1.0 (+https://github.com/robotsmw/robotsmw)", "User-Agent; its product token is matched against robots.txt")
	fs.Float64Var(&o.rate, "rate", 0, "requests per second per host (default: 10 on the demo site, 1 elsewhere); Crawl-delay may lower it")
	fs.IntVar(&o.max, "max", 0, "stop after this many page requests (colly's MaxRequests: retries, deferred requests handed back and requests robots.txt blocks count, robots.txt and sitemaps do not; links left over are reported as not followed; 0: no limit)")
	fs.BoolVar(&o.sitemaps, "sitemaps", true, "seed the crawl from the site's sitemaps")
	fs.Var(&o.verbose, "v", "print the Guard's log on stderr (-v=debug: with deferrals) instead of the progress line")
	fs.StringVar(&o.metrics, "metrics", "", "serve the Guard's Stats for Prometheus on `ADDR`/metrics (e.g. 127.0.0.1:9100) while crawling")
	fs.BoolVar(&o.private, "allow-private", false, "reach loopback, private and link-local addresses other than the site's own address and port (refused by default: netguard)")
	return fs
}

func parseFlags(args []string, stdout, stderr io.Writer) (options, *cmdline.Command, int) {
	var o options
	cmd := command(&o)
	if code := cmd.Parse(args, 0, stdout, stderr); code >= 0 {
		return o, cmd, code
	}
	if o.rate < 0 || o.max < 0 {
		return o, cmd, cmd.UsageError(stderr, errors.New("-rate and -max must not be negative"))
	}
	return o, cmd, -1
}

// run is the command with its environment passed in, so that the test can
// drive it. tty says whether stdout is a terminal.
func run(ctx context.Context, args []string, stdout, stderr io.Writer, tty bool) int {
	o, cmd, code := parseFlags(args, stdout, stderr)
	if code >= 0 {
		return code
	}
	site := o.url
	base := ""
	limit := rate.Limit(o.rate)
	if site == "" {
		demo := newDemoSite()
		srv := httptest.NewServer(demo)
		defer srv.Close()
		demo.base = srv.URL
		site, base = srv.URL, srv.URL
		if limit == 0 {
			limit = 10 // the demo's robots.txt asks for Crawl-delay: 0.1 anyway
		}
	} else if err := checkSite(ctx, site); err != nil {
		fmt.Fprintf(stderr, "politecrawl: %v\n", err)
		return cmdline.ExitUsage
	}

	rep := &report{base: base, start: time.Now()}
	var prog *progress
	switch {
	case !tty:
		rep.event = func(line string) { fmt.Fprintln(stdout, line) }
	case !o.verbose.on:
		prog = &progress{w: stdout}
	}

	g := &robotsmw.Guard{Rate: limit, Backoff: 2 * time.Second, Logger: o.verbose.logger(stderr)}
	if o.metrics != "" {
		// Written by package promtext, which names the same series as
		// the robotsprom module's Collector, without client_golang.
		url, stop, err := promtext.Serve(o.metrics, g.Stats)
		if err != nil {
			fmt.Fprintf(stderr, "politecrawl: %v\n", err)
			return 2
		}
		defer stop()
		fmt.Fprintf(stderr, "politecrawl: metrics on %s\n", url)
	}
	g.ErrorHandler = rep.onFinal // links not followed; the rest is read in OnError
	g.Seeding.OnSitemap = rep.onSitemap
	opts := []colly.CollectorOption{colly.UserAgent(o.agent), g.Attach, colly.Async(), colly.StdlibContext(ctx)}
	if !o.private {
		// A site's robots.txt, sitemaps, redirects and links may name any
		// address: the crawl reaches the site's own (on its port) and public ones only.
		// The transport goes in before the Guard, which wraps it.
		tr, err := netguard.SiteTransport(ctx, site)
		if err != nil {
			fmt.Fprintf(stderr, "politecrawl: %v\n", err)
			return 2
		}
		opts = append([]colly.CollectorOption{func(c *colly.Collector) { c.WithTransport(tr) }}, opts...)
	}
	if o.url != "" {
		u, _ := url.Parse(site)
		opts = append(opts, colly.AllowedDomains(u.Hostname()))
	}
	if o.max > 0 {
		opts = append(opts, colly.MaxRequests(uint32(o.max)))
	}
	c := colly.NewCollector(opts...)
	c.OnRequest(func(*colly.Request) { rep.started() })
	c.OnResponse(func(r *colly.Response) { rep.onResponse(r, g.Directives(r)) })
	c.OnScraped(rep.onScraped)
	c.OnError(rep.onError)
	// Links are followed unless the page says nofollow (meta robots,
	// X-Robots-Tag) or the link is rel="nofollow".
	g.FollowLinks(c)

	if prog != nil {
		stopProgress := prog.start(g, rep)
		defer stopProgress()
	}
	if o.sitemaps {
		st, err := g.Seed(c, site)
		rep.seeding(st, err)
	}
	if err := c.Visit(site); err != nil && !isAlreadyVisited(err) && !errors.Is(err, colly.ErrMaxRequests) {
		fmt.Fprintf(stderr, "politecrawl: %v\n", err)
	}
	c.Wait()
	if prog != nil {
		prog.stop()
	}
	rep.write(stdout, g)
	code = cmdline.ExitOK
	if fetched, gaveUp := rep.outcome(); fetched == 0 && gaveUp > 0 && ctx.Err() == nil {
		// An unreachable site: say so in the exit status, not only in the report.
		fmt.Fprintf(stderr, "politecrawl: no page fetched; %s gave up (see the report)\n", plural(gaveUp, "URL"))
		code = cmdline.ExitFail
	}
	return cmd.Finish(ctx, stderr, code)
}

func isAlreadyVisited(err error) bool {
	var av *colly.AlreadyVisitedError
	return errors.As(err, &av)
}

// checkSite makes sure site is an http(s) URL whose host answers, so that
// a typo gets one clear line instead of a report of failures.
func checkSite(ctx context.Context, site string) error {
	u, err := cmdline.SiteURL("url", site)
	if err != nil {
		return err
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", net.JoinHostPort(u.Hostname(), port))
	if err != nil {
		// The cause alone: "lookup x: no such host" would name it twice.
		var dns *net.DNSError
		var op *net.OpError
		switch {
		case errors.As(err, &dns):
			err = errors.New(dns.Err)
		case errors.As(err, &op):
			err = op.Err
		}
		return fmt.Errorf("%s cannot be reached: %v", u.Host, err)
	}
	conn.Close()
	return nil
}
