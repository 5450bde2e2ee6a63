package robotsmw_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"time"

	"github.com/gocolly/colly/v2"
	"golang.org/x/time/rate"

	robotsmw "github.com/robotsmw/robotsmw/middleware"
)

func ExampleAttach() {
	c := colly.NewCollector(robotsmw.Attach())
	c.OnResponse(func(r *colly.Response) { fmt.Println(r.Request.URL) })
	c.Visit("https://example.com/")
}

func ExampleGuard() {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			fmt.Fprint(w, "User-agent: *\nDisallow: /private\n\nUser-agent: examplebot\nDisallow: /drafts\n")
		case "/old":
			http.Redirect(w, r, "/drafts/1", http.StatusMovedPermanently)
		default:
			fmt.Fprint(w, "<html><body>hello</body></html>")
		}
	}))
	defer site.Close()

	g := &robotsmw.Guard{
		Agent: "ExampleBot",
		Rate:  rate.Every(50 * time.Millisecond),
		ErrorHandler: func(r *colly.Request, err error) {
			var de *robotsmw.DisallowedError
			if errors.As(err, &de) {
				fmt.Printf("blocked %s: %s\n", de.URL.Path, de.Decision)
			}
		},
	}
	c := colly.NewCollector(colly.UserAgent("ExampleBot/1.0 (+https://example.org/bot)"), g.Attach)
	c.OnResponse(func(r *colly.Response) { fmt.Println("fetched", r.Request.URL.Path) })

	c.Visit(site.URL + "/")
	c.Visit(site.URL + "/private") // the examplebot group does not disallow it
	c.Visit(site.URL + "/drafts/2")
	c.Visit(site.URL + "/old") // redirects into /drafts: the hop is not requested

	st := g.Stats().Total
	fmt.Printf("requests sent %d (robots.txt and the redirect included), pages fetched %d, blocked %d\n", st.Sent, st.Pages, st.Blocked)
	// Output:
	// fetched /
	// fetched /private
	// blocked /drafts/2: disallowed by line 5: disallow: /drafts (group "examplebot")
	// blocked /drafts/1: disallowed by line 5: disallow: /drafts (group "examplebot")
	// requests sent 4 (robots.txt and the redirect included), pages fetched 2, blocked 2
}

// Every outcome reaches colly's OnError: a *DeferredError says the Guard
// will send the request again by itself; anything else is final.
func ExampleDeferredError() {
	tries := 0
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			fmt.Fprint(w, "User-agent: *\nDisallow: /private\n")
		case "/busy":
			if tries++; tries == 1 {
				w.Header().Set("Retry-After", "1")
				w.WriteHeader(http.StatusServiceUnavailable)
				return
			}
			fmt.Fprint(w, "ok")
		default:
			fmt.Fprint(w, "ok")
		}
	}))
	defer site.Close()

	c := colly.NewCollector(robotsmw.Attach())
	c.OnResponse(func(r *colly.Response) { fmt.Println("fetched", r.Request.URL.Path) })
	c.OnError(func(r *colly.Response, err error) {
		var de *robotsmw.DeferredError
		switch {
		case errors.As(err, &de):
			fmt.Printf("%s: will retry (%v)\n", r.Request.URL.Path, de.Err)
		case robotsmw.IsFinal(err):
			fmt.Printf("%s: final: %v\n", r.Request.URL.Path, errors.Is(err, robotsmw.ErrDisallowed))
		}
	})
	c.Visit(site.URL + "/private/x")
	c.Visit(site.URL + "/busy") // returns the first attempt's *DeferredError
	c.Wait()                    // waits for the retry, also for a synchronous collector
	// Output:
	// /private/x: final: true
	// /busy: will retry (robotsmw: status 503 Service Unavailable)
	// fetched /busy
}

// A plain net/http client made polite by the Guard: robots.txt is obeyed,
// the host is paced, and a 503 with Retry-After is waited out and retried.
func ExampleGuard_Transport() {
	var busy atomic.Bool
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			fmt.Fprint(w, "User-agent: *\nDisallow: /private\n")
		case "/api/busy":
			if busy.CompareAndSwap(false, true) {
				w.Header().Set("Retry-After", "1")
				w.WriteHeader(http.StatusServiceUnavailable)
				return
			}
			fmt.Fprint(w, "done")
		default:
			fmt.Fprint(w, "ok")
		}
	}))
	defer site.Close()

	g := &robotsmw.Guard{Agent: "ExampleBot/1.0", Rate: rate.Every(100 * time.Millisecond)}
	client := &http.Client{Transport: g.Transport(nil), Timeout: 10 * time.Second}
	for _, path := range []string{"/api/items", "/private/x", "/api/busy"} {
		resp, err := client.Get(site.URL + path)
		if err != nil {
			fmt.Printf("%s: blocked: %v\n", path, errors.Is(err, robotsmw.ErrDisallowed))
			continue
		}
		resp.Body.Close()
		fmt.Printf("%s: %d\n", path, resp.StatusCode)
	}
	fmt.Println("retried:", g.Stats().Total.Retried)
	// Output:
	// /api/items: 200
	// /private/x: blocked: true
	// /api/busy: 200
	// retried: 1
}

func ExampleGuard_Seed() {
	var site *httptest.Server
	site = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			fmt.Fprint(w, "User-agent: *\nDisallow: /private/\nSitemap: /sitemap_index.xml\n")
		case "/sitemap_index.xml":
			fmt.Fprint(w, `<sitemapindex><sitemap><loc>/posts.xml</loc></sitemap></sitemapindex>`)
		case "/posts.xml":
			fmt.Fprintf(w, `<urlset>
  <url><loc>%[1]s/posts/1</loc><lastmod>2026-03-01</lastmod></url>
  <url><loc>%[1]s/posts/2</loc><lastmod>2019-01-01</lastmod></url>
  <url><loc>/posts/1</loc></url>
  <url><loc>/private/draft</loc></url>
  <url><loc>https://elsewhere.example/spam</loc></url>
</urlset>`, site.URL)
		default:
			fmt.Fprint(w, "<html><body>hello</body></html>")
		}
	}))
	defer site.Close()

	g := &robotsmw.Guard{Rate: rate.Every(20 * time.Millisecond)}
	g.Seeding.Since = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	c := colly.NewCollector(g.Attach, colly.Async())
	c.OnResponse(func(r *colly.Response) { fmt.Println("fetched", r.Request.URL.Path) })

	st, err := g.Seed(c, site.URL)
	c.Wait()
	if err != nil {
		fmt.Println(err)
	}
	d := st.Dropped
	fmt.Printf("sitemaps %d, queued %d; dropped: filter %d, duplicate %d, robots %d, scope %d\n",
		st.Sitemaps, st.Queued, d.Filter, d.Duplicate, d.Robots, d.Scope)
	// Output:
	// fetched /posts/1
	// sitemaps 2, queued 1; dropped: filter 1, duplicate 1, robots 1, scope 1
}

func ExampleGuard_FollowLinks() {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		switch r.URL.Path {
		case "/robots.txt":
		case "/":
			fmt.Fprint(w, `<html><body><a href="/about">about</a> <a href="/login" rel="nofollow">log in</a> <a href="/forum">forum</a></body></html>`)
		case "/forum": // a page that asks crawlers not to follow its links
			fmt.Fprint(w, `<html><head><meta name="robots" content="noindex, nofollow"></head><body><a href="/forum/spam">spam</a></body></html>`)
		default:
			fmt.Fprint(w, `<html><body>about us</body></html>`)
		}
	}))
	defer site.Close()

	g := &robotsmw.Guard{
		Rate: rate.Inf,
		ErrorHandler: func(r *colly.Request, err error) {
			var nf *robotsmw.NotFollowedError
			if errors.As(err, &nf) {
				fmt.Printf("not followed %s: %s\n", nf.URL.Path, nf.Reason)
			}
		},
	}
	c := colly.NewCollector(g.Attach)
	g.FollowLinks(c) // instead of OnHTML("a[href]", … Visit …)
	c.OnResponse(func(r *colly.Response) {
		if g.Directives(r).NoIndex {
			fmt.Println("fetched", r.Request.URL.Path, "(noindex)")
			return
		}
		fmt.Println("fetched", r.Request.URL.Path)
	})
	c.Visit(site.URL + "/")
	// Output:
	// fetched /
	// fetched /about
	// not followed /login: rel="nofollow"
	// fetched /forum (noindex)
	// not followed /forum/spam: page says nofollow (meta robots)
}
