// Command robotstxt checks URLs against robots.txt, explains the verdicts,
// lints robots.txt files and lists their sitemaps.
//
//	robotstxt check [-agent UA] [-robots FILE] URL...
//	robotstxt lint FILE|URL
//	robotstxt sitemaps FILE|URL
//
// FILE may be "-" for standard input. check takes absolute http and https
// URLs with a host only, and refuses anything else as bad usage. Without
// -robots, check fetches each URL's robots.txt as a crawler would
// (RFC 9309 §2.3), through the same cache the middleware uses.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/robotsmw/robotsmw/policy"
	"github.com/robotsmw/robotsmw/sitemap"
)

const usage = `usage:
  robotstxt check [-agent UA] [-robots FILE] URL...   verdict and deciding rule per URL
  robotstxt lint FILE|URL                              problems, with line numbers
  robotstxt sitemaps FILE|URL                          the Sitemap lines
FILE may be "-" for standard input; a URL is fetched (its origin's /robots.txt).
check's URLs are absolute http or https URLs, such as https://example.com/a.
exit status: 0 ok; 1 a URL is disallowed or lint found an error; 2 bad usage or I/O error
`

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr, http.DefaultClient))
}

// run is the command with its environment passed in, so tests can drive it.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, client *http.Client) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	cmd, args := args[0], args[1:]
	fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
	fs.SetOutput(stderr)
	agent := fs.String("agent", "robotstxt", "crawler User-Agent or product token")
	robotsFile := fs.String("robots", "", "robots.txt file to use instead of fetching (\"-\": standard input)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	src := source{stdin: stdin, cache: &policy.Cache{Client: client, UserAgent: *agent}}
	switch cmd {
	case "check":
		if fs.NArg() == 0 {
			fmt.Fprint(stderr, usage)
			return 2
		}
		return check(ctx, src, *agent, *robotsFile, fs.Args(), stdout, stderr)
	case "lint", "sitemaps":
		if fs.NArg() != 1 {
			fmt.Fprint(stderr, usage)
			return 2
		}
		body, robotsURL, err := src.body(ctx, fs.Arg(0))
		if err != nil {
			fmt.Fprintln(stderr, err)
			return 2
		}
		if cmd == "lint" {
			return lint(body, stdout)
		}
		// Relative Sitemap values resolve against the robots.txt URL; read
		// from a file, they have none and are left out like invalid ones.
		for _, s := range sitemap.FromRobots(robotsURL, policy.Parse(body).Sitemaps()) {
			fmt.Fprintln(stdout, s)
		}
		return 0
	}
	fmt.Fprintf(stderr, "robotstxt: unknown command %q\n%s", cmd, usage)
	return 2
}

func check(ctx context.Context, src source, agent, robotsFile string, args []string, stdout, stderr io.Writer) int {
	// Every argument is checked before any is, so that a mistake is not
	// reported after verdicts that it makes look complete.
	urls := make([]*url.URL, len(args))
	for i, raw := range args {
		u, err := crawlURL(raw)
		if err != nil {
			fmt.Fprintf(stderr, "%v\n%s", err, usage)
			return 2
		}
		urls[i] = u
	}
	token := policy.ProductToken(agent)
	var local *policy.Robots
	if robotsFile != "" {
		body, err := src.file(robotsFile)
		if err != nil {
			fmt.Fprintln(stderr, err)
			return 2
		}
		local = policy.Parse(body)
	}
	status := 0
	for i, u := range urls {
		raw := args[i]
		r := local
		if r == nil {
			e, err := src.cache.Get(ctx, u)
			if err != nil {
				// RFC 9309 §2.3.1.4: unreachable means disallowed for now.
				fmt.Fprintf(stdout, "%s: disallowed: robots.txt unreachable (%v); retry after %s\n",
					raw, err, e.RetryAt.Format(time.RFC3339))
				status = 1
				continue
			}
			r = e.Robots
		}
		d := r.Explain(token, u)
		if !d.Allowed {
			status = 1
		}
		fmt.Fprintf(stdout, "%s: %s\n", raw, d)
	}
	return status
}

// crawlURL parses a URL argument of check: an absolute http or https URL
// with a host, as a crawler fetches. Anything else is refused rather than
// read as policy.Robots.Allowed would read it: "example.com/private",
// which url.Parse takes for a relative path, is most likely an https URL
// without its scheme, and a file name most likely belongs after -robots.
func crawlURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Opaque == "" && u.Hostname() != "" {
		return u, nil
	}
	if info, serr := os.Stat(raw); serr == nil && info.Mode().IsRegular() {
		return nil, fmt.Errorf("robotstxt: check: %q is a file, not a URL; give a robots.txt file with -robots FILE", raw)
	}
	var uerr *url.Error
	if errors.As(err, &uerr) {
		return nil, fmt.Errorf("robotstxt: check: %q is not a valid URL: %v", raw, uerr.Err)
	}
	msg := fmt.Sprintf("robotstxt: check: %q is not an absolute http or https URL with a host", raw)
	if err == nil && u.Host == "" && !strings.HasPrefix(raw, "/") && !strings.Contains(raw, "://") &&
		(u.Scheme == "" || u.Opaque != "" && '0' <= u.Opaque[0] && u.Opaque[0] <= '9') {
		// "example.com/a", or "example.com:8080/a" with its port.
		msg += fmt.Sprintf(" (did you mean %q?)", "https://"+raw)
	}
	return nil, errors.New(msg)
}

func lint(body []byte, stdout io.Writer) int {
	status := 0
	for _, d := range policy.Lint(body) {
		fmt.Fprintln(stdout, d)
		if d.Severity == policy.SeverityError {
			status = 1
		}
	}
	return status
}

// A source reads robots.txt bodies from files, standard input or the web.
type source struct {
	stdin io.Reader
	cache *policy.Cache
}

func (s source) file(name string) ([]byte, error) {
	if name == "-" {
		b, err := io.ReadAll(io.LimitReader(s.stdin, 4*policy.MaxSize))
		if err != nil {
			return nil, fmt.Errorf("robotstxt: reading standard input: %w", err)
		}
		return b, nil
	}
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("robotstxt: %w", err)
	}
	return b, nil
}

// body reads a file, or fetches the robots.txt of a URL's origin as it is
// served; for a URL it also returns the robots.txt URL.
func (s source) body(ctx context.Context, arg string) ([]byte, *url.URL, error) {
	if !strings.HasPrefix(arg, "http://") && !strings.HasPrefix(arg, "https://") {
		b, err := s.file(arg)
		return b, nil, err
	}
	u, err := url.Parse(arg)
	if err != nil {
		return nil, nil, fmt.Errorf("robotstxt: %w", err)
	}
	robotsURL := &url.URL{Scheme: u.Scheme, Host: u.Host, Path: "/robots.txt"}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, robotsURL.String(), nil)
	if err != nil {
		return nil, nil, fmt.Errorf("robotstxt: %w", err)
	}
	req.Header.Set("User-Agent", s.cache.UserAgent)
	resp, err := s.cache.Client.Do(req)
	if err != nil {
		return nil, nil, fmt.Errorf("robotstxt: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return nil, nil, fmt.Errorf("robotstxt: %s: %s", robotsURL, resp.Status)
	}
	// Read past MaxSize so that lint can report the excess.
	b, err := io.ReadAll(io.LimitReader(resp.Body, 4*policy.MaxSize))
	if err != nil {
		return nil, nil, fmt.Errorf("robotstxt: reading %s: %w", robotsURL, err)
	}
	return b, robotsURL, nil
}
