package robotsmw_test

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"

	"github.com/gocolly/colly/v2"
	"golang.org/x/time/rate"

	robotsmw "github.com/robotsmw/robotsmw/middleware"
)

// The Stats of a collector made with the one-liner.
func ExampleGuardOf() {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			fmt.Fprint(w, "User-agent: *\nDisallow: /private\n")
			return
		}
		fmt.Fprint(w, "<html><body>hello</body></html>")
	}))
	defer site.Close()

	c := colly.NewCollector(robotsmw.Attach())
	c.Visit(site.URL + "/")
	c.Visit(site.URL + "/private/page")

	st := robotsmw.GuardOf(c).Stats().Total
	fmt.Printf("pages fetched %d, requests sent %d (robots.txt included), blocked %d\n", st.Pages, st.Sent, st.Blocked)
	// Output:
	// pages fetched 1, requests sent 2 (robots.txt included), blocked 1
}

// Logging from the one-liner: the Guard's Logger may be set after Attach,
// before the first request. Here a text log without times, with paths
// for URLs; slog.Default() would do too.
func ExampleGuardOf_logger() {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			fmt.Fprint(w, "User-agent: *\nDisallow: /private\n")
			return
		}
		fmt.Fprint(w, "<html><body>hello</body></html>")
	}))
	defer site.Close()

	c := colly.NewCollector(robotsmw.Attach())
	robotsmw.GuardOf(c).Logger = slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			switch a.Key {
			case slog.TimeKey, "expires", "host":
				return slog.Attr{}
			case "url", "origin":
				u, _ := url.Parse(a.Value.String())
				return slog.String(a.Key, u.Path)
			}
			return a
		},
	}))
	c.Visit(site.URL + "/")
	c.Visit(site.URL + "/private/page")
	// Output:
	// level=INFO msg="robots.txt fetched" origin="" status=200 state=parsed
	// level=INFO msg="request blocked" url=/private/page agent=colly group=* line=2 rule="disallow: /private"
}

// The Guard's log, here as text without times and with paths for URLs.
func ExampleGuard_Logger() {
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			fmt.Fprint(w, "User-agent: *\nDisallow: /private\n")
		case "/gone":
			w.WriteHeader(http.StatusInternalServerError)
		default:
			fmt.Fprint(w, "<html><body>hello</body></html>")
		}
	}))
	defer site.Close()

	text := slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			switch a.Key {
			case slog.TimeKey, "paused_until", "next_attempt", "pause", "expires", "error", "cause", "host":
				return slog.Attr{} // they change from run to run
			case "url", "origin":
				u, _ := url.Parse(a.Value.String())
				return slog.String(a.Key, u.Path)
			}
			return a
		},
	})
	g := &robotsmw.Guard{Rate: rate.Inf, MaxRetries: -1, MaxRobotsFailures: 1, Logger: slog.New(text)}
	c := colly.NewCollector(g.Attach)
	c.Visit(site.URL + "/")
	c.Visit(site.URL + "/private/page")
	c.Visit(site.URL + "/gone")
	c.Wait()
	// Output:
	// level=INFO msg="robots.txt fetched" origin="" status=200 state=parsed
	// level=INFO msg="request blocked" url=/private/page agent=colly group=* line=2 rule="disallow: /private"
	// level=WARN msg="host paused" url=/gone status=500
	// level=WARN msg="request gave up" url=/gone
}
