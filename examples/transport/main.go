// Command transport is a small link checker built on a plain net/http
// client that robotsmw's Guard.Transport makes polite: it fetches a page,
// then checks each link on it, and prints the outcome of every link.
//
// Every request through the client is checked against robots.txt first (a
// disallowed link fails with an error wrapping robotsmw.ErrDisallowed, and
// nothing is sent), waits for its host's pace, and is retried after a 429
// or 503, once the host's Retry-After has passed.
//
// With no flags it needs no network: it serves a demo site on a loopback
// port. Its robots.txt disallows /private/; /status answers 503 with
// Retry-After: 1 once; /old-page is gone (404). The links are checked one
// after another as fast as the loop goes, and the Guard spaces the
// requests 50 ms apart (100 ms after the 503: a 503 also halves the
// host's rate for a while). The site's own request log, printed at the
// end, shows it, and shows that the site never saw the disallowed link.
//
//	go run ./examples/transport
//	go run ./examples/transport -url https://example.com
//
// With -url it checks the links of that page instead (20 at most), at one
// request per second per host.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/signal"
	"sync"
	"time"

	"golang.org/x/net/html"
	"golang.org/x/time/rate"

	"github.com/robotsmw/robotsmw/examples/internal/cmdline"
	robotsmw "github.com/robotsmw/robotsmw/middleware"
	"github.com/robotsmw/robotsmw/netguard"
)

const userAgent = "LinkCheck/1.0 (+https://example.org/bot)"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// run is the whole program; it returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cmd := cmdline.New("transport", "", `Checks the links of the embedded demo site's home page, offline, or of
the page of -url, with a plain net/http client that robotsmw's
Guard.Transport makes polite, and prints the outcome of every link.`)
	pageFlag := cmd.String("url", "", "check the links of this page instead of the demo site's")
	verbose := cmd.Bool("v", false, "print the Guard's log (log/slog) on stderr")
	allowPrivate := cmd.Bool("allow-private", false, "reach loopback, private and link-local addresses other than the site's own address and port (refused by default: netguard)")
	if code := cmd.Parse(args, 0, stdout, stderr); code >= 0 {
		return code
	}

	g := &robotsmw.Guard{
		// Matched against robots.txt; the requests carry the same
		// User-Agent.
		Agent: userAgent,
		// A 429 or 503 is retried once, after the host's pause. (A link
		// to a host that cannot be reached fails at once with
		// ErrRobotsUnreachable: its robots.txt could not be read.)
		MaxRetries: 1,
	}
	if *verbose {
		g.Logger = slog.New(slog.NewTextHandler(stderr, nil))
	}
	var page *url.URL
	var site *demoSite
	if *pageFlag != "" {
		u, err := cmdline.SiteURL("url", *pageFlag)
		if err != nil {
			fmt.Fprintf(stderr, "transport: %v\n", err)
			return 2
		}
		page = u
		g.Rate = 1 // a real site: one request per second per host
	} else {
		site = newDemoSite()
		defer site.Close()
		page, _ = url.Parse(site.URL + "/")
		g.Rate = rate.Limit(20) // 50 ms between requests: visible, yet quick
	}
	// The Transport waits for robots.txt, the host's pace and its pauses as
	// long as the request's context lets it: bound that with a Timeout.
	// The page's links may name any address: the check reaches the page's
	// own host and public ones only.
	var next http.RoundTripper
	if !*allowPrivate {
		tr, err := netguard.SiteTransport(ctx, page.String())
		if err != nil {
			fmt.Fprintf(stderr, "transport: %v\n", err)
			return 2
		}
		next = tr
	}
	client := &http.Client{Transport: g.Transport(next), Timeout: 15 * time.Second}

	start := time.Now()
	links, err := fetchLinks(ctx, client, page)
	if err != nil && ctx.Err() == nil {
		fmt.Fprintf(stderr, "transport: %v\n", err)
		return cmdline.ExitFail
	}
	if len(links) > 20 {
		links = links[:20]
	}
	fmt.Fprintf(stdout, "%5.2fs %s: %d links\n", time.Since(start).Seconds(), page, len(links))

	for _, link := range links {
		// The retries before and after tell whether this link was retried
		// (the loop sends one request at a time).
		before := g.Stats().Total
		t := time.Now()
		status, err := check(ctx, client, link)
		took := time.Since(t)
		after := g.Stats().Total

		name := link.String()
		if link.Host == page.Host {
			name = link.RequestURI()
		}
		stamp := fmt.Sprintf("%5.2fs", time.Since(start).Seconds())
		var dis *robotsmw.DisallowedError
		switch {
		case errors.As(err, &dis): // it wraps robotsmw.ErrDisallowed, and names the rule
			fmt.Fprintf(stdout, "%s blocked      %-16s %s; nothing sent\n", stamp, name, dis.Decision)
		case err != nil:
			fmt.Fprintf(stdout, "%s error        %-16s %v\n", stamp, name, err)
		case status >= 400:
			fmt.Fprintf(stdout, "%s broken   %d %-16s took %.2fs\n", stamp, status, name, took.Seconds())
		default:
			fmt.Fprintf(stdout, "%s ok       %d %-16s took %.2fs", stamp, status, name, took.Seconds())
			if n := after.Retried - before.Retried; n > 0 {
				fmt.Fprintf(stdout, ", retried %d× after 429/503", n)
			}
			fmt.Fprintln(stdout)
		}
		if ctx.Err() != nil {
			break
		}
	}

	st := g.Stats().Total
	fmt.Fprintf(stdout, "\nGuard: %d requests sent (robots.txt included), %d blocked, %d retried\n",
		st.Sent, st.Blocked, st.Retried)
	if site != nil {
		fmt.Fprintln(stdout, "what the site saw:")
		for _, e := range site.requests() {
			fmt.Fprintf(stdout, "  +%.3fs %s %-16s %d\n", e.gap.Seconds(), e.method, e.path, e.status)
		}
	}
	return cmd.Finish(ctx, stderr, cmdline.ExitOK)
}

// fetchLinks fetches the page and returns the http and https links on it,
// resolved and without duplicates.
func fetchLinks(ctx context.Context, client *http.Client, page *url.URL) ([]*url.URL, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, page.String(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("User-Agent", userAgent)
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: %s", page, resp.Status)
	}
	var links []*url.URL
	seen := map[string]bool{}
	z := html.NewTokenizer(io.LimitReader(resp.Body, 4<<20))
	for {
		switch z.Next() {
		case html.ErrorToken:
			return links, nil // the end of the page (or a broken one)
		case html.StartTagToken, html.SelfClosingTagToken:
			name, more := z.TagName()
			for string(name) == "a" && more {
				var key, val []byte
				key, val, more = z.TagAttr()
				if string(key) != "href" {
					continue
				}
				u, err := resp.Request.URL.Parse(string(val))
				if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
					continue
				}
				u.Fragment = ""
				if !seen[u.String()] {
					seen[u.String()] = true
					links = append(links, u)
				}
			}
		}
	}
}

// check sends a GET for link and returns the response's status.
func check(ctx context.Context, client *http.Client, link *url.URL) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, link.String(), nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("User-Agent", userAgent)
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20)) // so the connection is reused
	resp.Body.Close()
	return resp.StatusCode, nil
}

// The demo site.
const robotsTxt = `User-agent: *
Disallow: /private/
`

var pages = map[string]string{
	"/": `<h1>Home</h1>
<a href="/docs">docs</a> <a href="/docs/install#linux">install</a>
<a href="/private/admin">admin</a> <a href="/status">status</a>
<a href="/old-page">an old page</a> <a href="/docs">docs again</a>`,
	"/docs":          `<h1>Docs</h1>`,
	"/docs/install":  `<h1>Install</h1>`,
	"/status":        `<h1>All systems go</h1>`,
	"/private/admin": `<h1>Admin</h1>`,
}

// A demoSite serves the demo pages and logs each request.
type demoSite struct {
	*httptest.Server
	mu   sync.Mutex
	last time.Time
	log  []logEntry
	busy bool // /status answered 503 once
}

// A logEntry is a request the site answered, and the time since the one
// before.
type logEntry struct {
	gap          time.Duration
	method, path string
	status       int
}

func newDemoSite() *demoSite {
	s := &demoSite{}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

func (s *demoSite) serve(w http.ResponseWriter, r *http.Request) {
	status, body := s.answer(r)
	if status == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", "1")
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	fmt.Fprint(w, body)
}

// answer decides the status and body of r's response, and logs it.
func (s *demoSite) answer(r *http.Request) (int, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	status, body := http.StatusOK, pages[r.URL.Path]
	switch {
	case r.URL.Path == "/robots.txt":
		body = robotsTxt
	case r.URL.Path == "/status" && !s.busy:
		s.busy = true
		status, body = http.StatusServiceUnavailable, "down for maintenance, back in a second"
	case body == "":
		status, body = http.StatusNotFound, "not found"
	}
	now := time.Now()
	var gap time.Duration
	if !s.last.IsZero() {
		gap = now.Sub(s.last)
	}
	s.last = now
	s.log = append(s.log, logEntry{gap, r.Method, r.URL.Path, status})
	return status, body
}

// requests returns the site's request log.
func (s *demoSite) requests() []logEntry {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]logEntry(nil), s.log...)
}
