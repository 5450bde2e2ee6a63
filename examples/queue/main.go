// Command queue crawls a site with colly's queue (several threads), a
// collector and a clone of it, all made polite by one robotsmw Guard, and
// prints every final outcome and the Guard's statistics.
//
// The collector c runs in the queue and follows the links within the site;
// its clone checks each link to another host once and follows nothing.
// colly's Clone drops callbacks, so the Guard is attached to the clone too:
// both then share one robots.txt cache and one schedule per host.
//
// With no flags it needs no network: it serves two demo hosts on loopback
// ports, a shop (127.0.0.1) and a partner site it links to (localhost).
// The shop's robots.txt disallows /cart/; its /catalog/2 answers 503 with
// Retry-After: 1 once, so the Guard pauses the shop and sends the page
// again by itself, after the queue ran dry: the page's links (/catalog/3)
// fill the queue again, and it is run again. The partner's robots.txt disallows /drafts/, and its
// /widget/5 always answers 500: after two retries the Guard gives up. Each
// host is paced at 20 requests per second, each on its own schedule.
//
//	go run ./examples/queue
//	go run ./examples/queue -url https://example.com
//
// With -url it crawls a real site instead, at one request per second per
// host, 20 requests at most per collector.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gocolly/colly/v2"
	"github.com/gocolly/colly/v2/queue"
	"golang.org/x/time/rate"

	"github.com/robotsmw/robotsmw/examples/internal/cmdline"
	robotsmw "github.com/robotsmw/robotsmw/middleware"
	"github.com/robotsmw/robotsmw/netguard"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// run is the whole program; it returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cmd := cmdline.New("queue", "", `Crawls the embedded demo sites, offline, or the first 20 pages of the site
of -url, with colly's queue (several threads), a collector and a clone of
it, all made polite by one robotsmw Guard, and prints every final outcome
and the Guard's statistics.`)
	siteFlag := cmd.String("url", "", "crawl this site instead of the demo site")
	verbose := cmd.Bool("v", false, "print the Guard's log (log/slog) on stderr")
	allowPrivate := cmd.Bool("allow-private", false, "reach loopback, private and link-local addresses other than the site's own address and port (refused by default: netguard)")
	if code := cmd.Parse(args, 0, stdout, stderr); code >= 0 {
		return code
	}

	out := &printer{w: stdout, start: time.Now(), names: map[string]string{}}
	g := &robotsmw.Guard{
		Agent:      "QueueBot",
		Backoff:    300 * time.Millisecond, // 429/503 without Retry-After; 500: a sixth
		MaxRetries: 2,
		// With the queue, a request waits for its host inside a queue
		// thread; waits longer than this are deferred and free the thread.
		MaxWait: 2 * time.Second,
		// Called once for each final outcome the Guard decided, from any
		// goroutine.
		ErrorHandler: func(r *colly.Request, err error) {
			var dis *robotsmw.DisallowedError
			switch {
			case errors.As(err, &dis):
				out.stamp("blocked  %s: %s", out.name(dis.URL), dis.Decision)
			case errors.Is(err, robotsmw.ErrGaveUp):
				out.stamp("gave up  %s: %s", out.name(r.URL), cmdline.ErrorText(err, r.URL))
			default: // robots.txt unreachable, Crawl-delay too long
				out.stamp("failed   %s: %s", out.name(r.URL), cmdline.ErrorText(err, r.URL))
			}
		},
	}
	if *verbose {
		g.Logger = slog.New(slog.NewTextHandler(stderr, nil))
	}
	limit := 0 // pages of the site queued; 0 means no limit
	var start *url.URL
	var sites []string // the sites the crawl was asked for
	if *siteFlag != "" {
		u, err := cmdline.SiteURL("url", *siteFlag)
		if err != nil {
			fmt.Fprintf(stderr, "queue: %v\n", err)
			return 2
		}
		start = u
		g.Rate = 1 // a real site: one request per second per host
		limit = 20
	} else {
		shop, partner := newDemoSites()
		defer shop.Close()
		defer partner.Close()
		start, _ = url.Parse(shop.URL + "/")
		out.names[start.Host] = "shop"
		out.names[strings.TrimPrefix(partner.URL, "http://")] = "partner"
		// The demo's two hosts are both sites it was asked to crawl.
		sites = append(sites, partner.URL)
		g.Rate = rate.Limit(20) // 50 ms between requests to each host
	}
	sites = append(sites, start.String())

	// c crawls the site: the queue's threads run its requests.
	// A site's robots.txt, sitemaps, redirects and links may name any
	// address: the crawl reaches the site's own (on its port) and public ones only.
	var dial colly.CollectorOption = func(*colly.Collector) {}
	if !*allowPrivate {
		var allow []netip.AddrPort
		for _, site := range sites {
			a, _ := netguard.AllowSite(ctx, site) // a host that does not resolve fails its fetches anyway
			allow = append(allow, a...)
		}
		tr := netguard.Transport(&netguard.Dialer{AllowAddrPorts: allow})
		dial = func(c *colly.Collector) { c.WithTransport(tr) }
	}
	c := colly.NewCollector(
		colly.UserAgent("QueueBot/1.0 (+https://example.org/bot)"),
		colly.StdlibContext(ctx),
		dial,     // before the Guard, which wraps the transport it finds
		g.Attach, // before the callbacks below
	)
	// links checks the links to other hosts, once each. Clone drops
	// callbacks: attach the Guard to the clone as well.
	links := c.Clone()
	g.Attach(links)

	q, err := queue.New(4, nil) // 4 threads, in-memory storage
	if err != nil {
		fmt.Fprintf(stderr, "queue: %v\n", err)
		return 1
	}
	var queuedMu sync.Mutex                         // guards queued
	queued := map[string]bool{start.String(): true} // the site's pages queued
	c.OnHTML("a[href]", func(e *colly.HTMLElement) {
		link, err := url.Parse(e.Request.AbsoluteURL(e.Attr("href")))
		if err != nil || (link.Scheme != "http" && link.Scheme != "https") {
			return
		}
		if link.Host != start.Host {
			// Its outcome reaches the callbacks below; the error returned
			// here is the same (or says the link was checked already).
			links.Visit(link.String())
			return
		}
		// The queue takes duplicates; colly skips the pages it visited.
		// A real site's crawl stops at limit pages, and says which links
		// it left (colly's MaxRequests would drop queued requests without
		// a word: its queue counts each one twice).
		queuedMu.Lock()
		seen := queued[link.String()]
		full := !seen && limit > 0 && len(queued) >= limit
		if !seen && !full {
			queued[link.String()] = true
		}
		queuedMu.Unlock()
		if seen {
			return
		}
		if full {
			out.stamp("left     %s: not queued, the example stops at %d pages of a site", out.name(link), limit)
			return
		}
		if err := q.AddURL(link.String()); err != nil {
			out.stamp("error    %s: %s", out.name(link), cmdline.ErrorText(err, link))
		}
	})
	for _, col := range []*colly.Collector{c, links} {
		col.OnResponse(func(r *colly.Response) {
			out.stamp("fetched  %s (%d)", out.name(r.Request.URL), r.StatusCode)
		})
		col.OnError(func(r *colly.Response, err error) {
			var de *robotsmw.DeferredError
			switch {
			case errors.As(err, &de):
				// Not final: the Guard sends the request again by itself.
				out.stamp("retry    %s in %.1fs: %v", out.name(r.Request.URL), time.Until(de.Until).Seconds(), de.Err)
			case !decidedByGuard(err):
				// colly's own errors (a 404 …); the ErrorHandler has the
				// Guard's.
				out.stamp("error    %s: %s", out.name(r.Request.URL), cmdline.ErrorText(err, r.Request.URL))
			}
		})
	}

	if err := q.AddURL(start.String()); err != nil {
		fmt.Fprintf(stderr, "queue: %v\n", err)
		return 1
	}
	// Queue.Run returns as soon as the queue is empty, but the Guard
	// resends deferred requests later, by itself, outside the queue, and
	// their links may fill the queue again. So wait for them, and run the
	// queue again while it has work; colly's queue runs again only after
	// Stop.
	for {
		if err := q.Run(c); err != nil {
			fmt.Fprintf(stderr, "queue: %v\n", err)
			return 1
		}
		c.Wait()
		links.Wait()
		if q.IsEmpty() || ctx.Err() != nil {
			break
		}
		q.Stop()
	}

	st := g.Stats()
	t := st.Total
	out.printf("")
	out.printf("totals: requests sent %d (robots.txt included), pages fetched %d, blocked %d, deferred %d, retried %d, back-offs %d, gave up %d",
		t.Sent, t.Pages, t.Blocked, t.Deferred, t.Retried, t.Backoffs, t.GaveUp)
	out.printf("busiest hosts:")
	for _, h := range st.Busiest {
		out.printf("  %-12s sent %2d, pages %2d, blocked %d, retried %d, gave up %d; interval now %v",
			h.Host, h.Sent, h.Pages, h.Blocked, h.Retried, h.GaveUp, h.Interval.Round(time.Millisecond))
	}
	return cmd.Finish(ctx, stderr, cmdline.ExitOK)
}

// decidedByGuard reports whether err is a final outcome the Guard decided,
// one the ErrorHandler gets too.
func decidedByGuard(err error) bool {
	return errors.Is(err, robotsmw.ErrDisallowed) || errors.Is(err, robotsmw.ErrGaveUp) ||
		errors.Is(err, robotsmw.ErrRobotsUnreachable) || errors.Is(err, robotsmw.ErrCrawlDelayTooLong)
}

// A printer writes lines from concurrent colly callbacks one at a time.
type printer struct {
	mu    sync.Mutex
	w     io.Writer
	start time.Time
	names map[string]string // short names of the demo hosts; not changed once the crawl runs
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

// name returns u as "host/path", with the short name of a demo host.
func (p *printer) name(u *url.URL) string {
	host := u.Host
	if n, ok := p.names[host]; ok {
		host = n
	}
	return host + u.RequestURI()
}

// The demo sites.
const (
	shopRobots = `User-agent: *
Disallow: /cart/
`
	partnerRobots = `User-agent: *
Disallow: /drafts/
`
)

// shopPages and partnerPages are the demo sites' pages; {{partner}} is
// replaced by the partner's address.
var (
	shopPages = map[string]string{
		"/":          `<a href="/catalog/1">catalog</a> <a href="/about">about</a> <a href="/cart/checkout">cart</a>`,
		"/about":     `<a href="/">home</a> <a href="{{partner}}/">our partner</a>`,
		"/catalog/1": `<a href="{{partner}}/widget/1">1</a> <a href="{{partner}}/widget/2">2</a> <a href="{{partner}}/widget/3">3</a> <a href="/catalog/2">next</a>`,
		"/catalog/2": `<a href="{{partner}}/widget/4">4</a> <a href="{{partner}}/widget/5">5</a> <a href="{{partner}}/drafts/6">6</a> <a href="/catalog/1">previous</a> <a href="/catalog/3">next</a>`,
		"/catalog/3": `the end <a href="/catalog/2">previous</a>`,
	}
	partnerPages = map[string]string{
		"/":         `partner home`,
		"/widget/1": `widget 1`,
		"/widget/2": `widget 2`,
		"/widget/3": `widget 3`,
		"/widget/4": `widget 4`,
		"/drafts/6": `not for robots`,
	}
)

// newDemoSites starts the shop, on 127.0.0.1, and the partner site, on
// localhost: another host name, so the Guard paces each on its own.
func newDemoSites() (shop, partner *httptest.Server) {
	partner = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			fmt.Fprint(w, partnerRobots)
		case "/widget/5":
			http.Error(w, "internal error", http.StatusInternalServerError)
		default:
			servePage(w, r, partnerPages, "")
		}
	}))
	partner.URL = strings.Replace(partner.URL, "127.0.0.1", "localhost", 1)

	var busy atomic.Bool
	shop = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			fmt.Fprint(w, shopRobots)
		case "/catalog/2":
			if !busy.Swap(true) { // the first request only
				w.Header().Set("Retry-After", "1")
				http.Error(w, "busy, come back in a second", http.StatusServiceUnavailable)
				return
			}
			servePage(w, r, shopPages, partner.URL)
		default:
			servePage(w, r, shopPages, partner.URL)
		}
	}))
	return shop, partner
}

// servePage answers with the page at r's path, or 404.
func servePage(w http.ResponseWriter, r *http.Request, pages map[string]string, partner string) {
	body, ok := pages[r.URL.Path]
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	fmt.Fprintf(w, "<html><body>%s</body></html>", strings.ReplaceAll(body, "{{partner}}", partner))
}
