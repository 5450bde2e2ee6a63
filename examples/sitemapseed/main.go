// Command sitemapseed seeds a colly crawl from a site's sitemaps only, with
// robotsmw's Guard.Seed, and prints what the walk found, what it dropped and
// why, and the pages fetched.
//
// With no flags it needs no network: it serves a demo site on a loopback
// port from the files in testdata. Its robots.txt disallows /drafts/ and
// lists a sitemap index with two children, a gzipped XML urlset and a text
// file. The urlset holds a page older than the cutoff (Seeding.Since), a PDF
// (Seeding.Exclude), a disallowed draft and a page on another host; the text
// file repeats a page. Only the pages left are fetched, through the Guard,
// paced at 20 requests per second.
//
//	go run ./examples/sitemapseed
//	go run ./examples/sitemapseed -url https://example.com
//
// With -url it seeds from a real site's sitemaps instead: at one request
// per second, pages changed in the last 30 days, 20 pages at most.
package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"embed"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gocolly/colly/v2"
	"golang.org/x/time/rate"

	"github.com/robotsmw/robotsmw/examples/internal/cmdline"
	robotsmw "github.com/robotsmw/robotsmw/middleware"
	"github.com/robotsmw/robotsmw/netguard"
	"github.com/robotsmw/robotsmw/sitemap"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// run is the whole program; it returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cmd := cmdline.New("sitemapseed", "", `Seeds a colly crawl from the embedded demo site's sitemaps, offline, or
from those of the site of -url, with robotsmw's Guard.Seed, and prints what
the walk found, what it dropped and why, and the pages fetched.`)
	siteFlag := cmd.String("url", "", "seed from this site's sitemaps instead of the demo site")
	verbose := cmd.Bool("v", false, "print the Guard's log (log/slog) on stderr")
	allowPrivate := cmd.Bool("allow-private", false, "reach loopback, private and link-local addresses other than the site's own address and port (refused by default: netguard)")
	if code := cmd.Parse(args, 0, stdout, stderr); code >= 0 {
		return code
	}

	g := &robotsmw.Guard{
		Agent: "SitemapSeed",
		// Seed's settings: its zero value follows the sitemap protocol.
		Seeding: robotsmw.Seeding{Options: sitemap.Options{
			Exclude: []string{"/*.pdf$"}, // written like a robots.txt path
		}},
	}
	if *verbose {
		g.Logger = slog.New(slog.NewTextHandler(stderr, nil))
	}
	var site string
	var demo *demoSite
	if *siteFlag != "" {
		u, err := cmdline.SiteURL("url", *siteFlag)
		if err != nil {
			fmt.Fprintf(stderr, "sitemapseed: %v\n", err)
			return 2
		}
		site = u.String()
		g.Rate = 1 // a real site: one request per second
		g.Seeding.Since = time.Now().AddDate(0, 0, -30)
		g.Seeding.MaxURLs = 20
	} else {
		demo = newDemoSite()
		defer demo.Close()
		site = demo.URL
		g.Rate = rate.Limit(20) // 50 ms between requests: visible, yet quick
		g.Seeding.Since = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	}

	out := &printer{w: stdout, start: time.Now()}
	var (
		mu      sync.Mutex
		fetched []string
	)
	// A site's robots.txt, sitemaps, redirects and links may name any
	// address: the crawl reaches the site's own (on its port) and public ones only.
	var dial colly.CollectorOption = func(*colly.Collector) {}
	if !*allowPrivate {
		tr, err := netguard.SiteTransport(ctx, site)
		if err != nil {
			fmt.Fprintf(stderr, "sitemapseed: %v\n", err)
			return 2
		}
		dial = func(c *colly.Collector) { c.WithTransport(tr) }
	}
	c := colly.NewCollector(
		colly.UserAgent("SitemapSeed/1.0 (+https://example.org/bot)"),
		colly.StdlibContext(ctx),
		dial,     // before the Guard, which wraps the transport it finds
		g.Attach, // before the options and callbacks below
		colly.Async(),
	)
	c.OnResponse(func(r *colly.Response) {
		out.stamp("fetched %-18s %d, %d bytes", r.Request.URL.Path, r.StatusCode, len(r.Body))
		mu.Lock()
		fetched = append(fetched, r.Request.URL.Path)
		mu.Unlock()
	})
	c.OnError(func(r *colly.Response, err error) {
		if robotsmw.IsFinal(err) {
			out.stamp("failed  %s: %s", r.Request.URL, cmdline.ErrorText(err, r.Request.URL))
		} else {
			out.stamp("retry   %s: %s", r.Request.URL, cmdline.ErrorText(err, r.Request.URL))
		}
	})

	out.printf("seeding %s from its sitemaps (pages changed since %s, no PDFs)",
		site, g.Seeding.Since.Format(time.DateOnly))
	// Seed returns once every page was handed to the collector; c.Wait waits
	// for the pages themselves.
	st, err := g.Seed(c, site)
	c.Wait()
	var walkErr *sitemap.WalkError
	code := cmdline.ExitOK
	switch {
	case ctx.Err() != nil:
		// Ctrl-C: report what was done.
	case errors.As(err, &walkErr) && st.Sitemaps > 0:
		// Some sitemaps failed; the others were walked: report them,
		// and exit 1 as robotstxt sitemaps does.
		fmt.Fprintf(stderr, "sitemapseed: %v\n", err)
		code = 1
	case err != nil:
		fmt.Fprintf(stderr, "sitemapseed: %v\n", err)
		return 1
	}

	d := st.Dropped
	out.printf("")
	out.printf("sitemaps read:      %d", st.Sitemaps)
	out.printf("pages queued:       %d", st.Queued)
	out.printf("dropped, filter:    %d (older than Since, or Exclude)", d.Filter)
	out.printf("dropped, robots:    %d (robots.txt disallows them)", d.Robots)
	out.printf("dropped, duplicate: %d", d.Duplicate)
	out.printf("dropped, scope:     %d (another host)", d.Scope)
	if d.Limit > 0 {
		out.printf("dropped, limit:     %d (past MaxURLs)", d.Limit)
	}
	slices.Sort(fetched)
	if len(fetched) > 0 {
		out.printf("pages fetched:      %d (%s)", len(fetched), strings.Join(fetched, ", "))
	} else {
		out.printf("pages fetched:      0")
	}
	out.printf("requests sent:      %d (robots.txt and sitemaps included)", g.Stats().Total.Sent)
	if demo != nil {
		out.printf("never requested:    %s", strings.Join(demo.notRequested(), ", "))
	}
	return cmd.Finish(ctx, stderr, code)
}

// A printer writes lines from concurrent colly callbacks one at a time.
type printer struct {
	mu    sync.Mutex
	w     io.Writer
	start time.Time
}

func (p *printer) printf(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, format+"\n", args...)
}

// stamp prints a line with the time since the start.
func (p *printer) stamp(format string, args ...any) {
	p.printf("%5.2fs "+format, append([]any{time.Since(p.start).Seconds()}, args...)...)
}

// The demo site's robots.txt and sitemaps, and its pages' titles.
var (
	//go:embed testdata
	files embed.FS

	// sitemapFiles maps URL paths to files in testdata.
	sitemapFiles = map[string]string{
		"/robots.txt":          "testdata/robots.txt",
		"/sitemap_index.xml":   "testdata/sitemap_index.xml",
		"/sitemap-blog.xml.gz": "testdata/sitemap-blog.xml", // gzipped when served
		"/sitemap-extra.txt":   "testdata/sitemap-extra.txt",
	}

	pages = map[string]string{
		"/":                       "Home",
		"/about":                  "About us",
		"/contact":                "Contact",
		"/pricing":                "Pricing",
		"/blog/new-feature":       "A new feature",
		"/blog/launch-2019":       "We launched (2019)",
		"/blog/annual-report.pdf": "Annual report",
		"/drafts/next-post":       "Draft",
	}
)

// A demoSite serves the files in testdata and the pages, and remembers
// which paths were requested.
type demoSite struct {
	*httptest.Server
	mu   sync.Mutex
	seen map[string]int // requests by path
}

func newDemoSite() *demoSite {
	s := &demoSite{seen: make(map[string]int)}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

func (s *demoSite) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.seen[r.URL.Path]++
	s.mu.Unlock()

	if name, ok := sitemapFiles[r.URL.Path]; ok {
		body, err := files.ReadFile(name)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		body = bytes.ReplaceAll(body, []byte("{{site}}"), []byte("http://"+r.Host))
		if strings.HasSuffix(r.URL.Path, ".gz") {
			w.Header().Set("Content-Type", "application/gzip")
			zw := gzip.NewWriter(w)
			zw.Write(body)
			zw.Close()
			return
		}
		w.Write(body)
		return
	}
	title, ok := pages[r.URL.Path]
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	fmt.Fprintf(w, "<html><head><title>%s</title></head><body><h1>%[1]s</h1></body></html>", title)
}

// notRequested returns the pages the crawler never asked for, sorted.
func (s *demoSite) notRequested() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for p := range pages {
		if s.seen[p] == 0 {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}
