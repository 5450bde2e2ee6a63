// Command politecrawl crawls a small demo site with colly and robotsmw and
// prints what happened to each URL. It needs no flags and no network: the
// site is served on a loopback port. Its robots.txt disallows /private and
// asks for a Crawl-delay of 0.2 s, and /busy answers 503 with Retry-After
// once.
package main

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"sync/atomic"
	"time"

	"github.com/gocolly/colly/v2"
	"golang.org/x/time/rate"

	robotsmw "github.com/robotsmw/robotsmw/middleware"
)

const robotsTxt = `User-agent: *
Disallow: /private
Crawl-delay: 0.2
`

var pages = map[string]string{
	"/":       `<a href="/about">about</a> <a href="/blog">blog</a> <a href="/private/admin">admin</a> <a href="/busy">busy</a>`,
	"/about":  `<a href="/">home</a> <a href="/old-team">team</a>`,
	"/blog":   `<a href="/blog/1">one</a> <a href="/blog/2">two</a> <a href="/private/drafts">drafts</a>`,
	"/blog/1": `<a href="/blog">blog</a>`,
	"/blog/2": `<a href="/blog">blog</a>`,
	"/busy":   `<a href="/">home</a>`,
}

// demoSite returns the handler of the demo site.
func demoSite() http.Handler {
	var busy atomic.Bool
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			fmt.Fprint(w, robotsTxt)
			return
		case "/old-team":
			http.Redirect(w, r, "/private/team", http.StatusMovedPermanently)
			return
		case "/busy":
			if !busy.Swap(true) {
				w.Header().Set("Retry-After", "1")
				http.Error(w, "maintenance", http.StatusServiceUnavailable)
				return
			}
		}
		body, ok := pages[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, "<html><body>%s</body></html>", body)
	})
}

func main() {
	site := httptest.NewServer(demoSite())
	defer site.Close()
	start := time.Now()
	stamp := func() string { return fmt.Sprintf("%5.2fs", time.Since(start).Seconds()) }

	g := &robotsmw.Guard{
		Agent:   "PoliteCrawl",
		Rate:    rate.Limit(20), // Crawl-delay: 0.2 makes it 5 per second
		Backoff: 500 * time.Millisecond,
	}
	c := colly.NewCollector(colly.UserAgent("PoliteCrawl/1.0 (+https://example.org/bot)"), g.Attach, colly.Async())
	c.OnHTML("a[href]", func(e *colly.HTMLElement) { e.Request.Visit(e.Attr("href")) })
	c.OnResponse(func(r *colly.Response) {
		fmt.Printf("%s fetched  %s (%d)\n", stamp(), r.Request.URL.Path, r.StatusCode)
	})
	// Every outcome reaches OnError: a deferral or retry (the Guard sends
	// the request again by itself) or a final one.
	c.OnError(func(r *colly.Response, err error) {
		var de *robotsmw.DeferredError
		var dis *robotsmw.DisallowedError
		switch {
		case errors.As(err, &de):
			fmt.Printf("%s retry    %s at +%.2fs: %v\n", stamp(), r.Request.URL.Path, time.Until(de.Until).Seconds(), de.Err)
		case errors.As(err, &dis):
			fmt.Printf("%s blocked  %s: %s\n", stamp(), dis.URL.Path, dis.Decision)
		default:
			fmt.Printf("%s failed   %s: %v\n", stamp(), r.Request.URL.Path, err)
		}
	})
	if err := c.Visit(site.URL + "/"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	c.Wait()

	st := g.Stats()
	fmt.Println()
	for _, h := range st.Busiest {
		fmt.Printf("%s: fetched %d (robots.txt included), blocked %d, deferred %d, retried %d, back-offs %d, gave up %d, interval now %v\n",
			h.Host, h.Fetched, h.Blocked, h.Deferred, h.Retried, h.Backoffs, h.GaveUp, h.Interval)
	}
	fmt.Printf("done in %s\n", stamp())
}
