// Command robotstxt checks URLs against robots.txt and explains the
// verdicts, lints robots.txt files, and lists and walks their sitemaps.
//
// Install it with
//
//	go install github.com/robotsmw/robotsmw/cmd/robotstxt@latest
//
// Usage:
//
//	robotstxt check [-agent A] [-json] [-timeout D] [-allow-private] [-robots ROBOTS | ROBOTS] [URL...]
//	robotstxt lint [-strict] [-json] [-timeout D] [-allow-private] ROBOTS...
//	robotstxt sitemaps [-base URL] [-walk [-urls] [-follow P]... [-rule P=TAG]... [-alternates] [-since DATE] [-max-size SIZE] [-warn-size SIZE]] [-agent A] [-timeout D] [-allow-private] SITE|ROBOTS|SITEMAP
//	robotstxt serve [-addr HOST:PORT] [-allow-private] [-timeout D]
//	robotstxt help [COMMAND]
//
// ROBOTS is a robots.txt file, "-" for standard input, or an http or https
// URL of a site. For a URL, the robots.txt of its site (scheme, host and
// port) is fetched, as a crawler does (RFC 9309 §2.3): https://example.com,
// https://example.com/robots.txt and https://example.com/any/page all read
// https://example.com/robots.txt, following up to 5 redirects.
//
// check prints one line per URL: ALLOWED or DISALLOWED, the URL, and why:
// the deciding rule with its line and group, or that no rule of the group
// matched, or why robots.txt gave no rules (it answered 404, is an HTML page
// or is empty; it could not be fetched, which disallows everything).
// Without a ROBOTS, each URL's own robots.txt is fetched. A first argument
// that is "-" or an existing file is the ROBOTS; so is a single argument
// naming a site's root (or its /robots.txt) while standard input is not a
// terminal and holds a line: "echo URL | robotstxt check https://site/".
// URLs must be absolute http or https URLs with a host; without URL
// arguments they are read from standard input, one a line. A robots.txt
// past 500 KiB is read up to it, and check says so on standard error. An
// empty -agent is refused. A robots.txt that cannot be fetched gives RFC
// 9309's verdict, DISALLOWED, and exit status 2. A URL with parameters a
// Clean-param line names is shown with its canonical form. -json prints one
// JSON object a URL (JSON Lines): url, verdict, agent, robots, state,
// group, rule, line, canonical, reason, error.
//
//	$ robotstxt check -agent Googlebot robots.txt https://example.com/private/x https://example.com/
//	DISALLOWED https://example.com/private/x: by line 2: disallow: /private (group "*")
//	ALLOWED    https://example.com/: no rule matched in group "*"
//
// lint prints what crawlers ignore or may misread in one or more files,
// sorted by line, as "FILE:LINE: error: message [code]" or "FILE:LINE:
// warning: message [code]" (FILE: error: … for the whole file), and a
// summary on standard error. An error is a line crawlers ignore or read
// differently from what it says; a warning a likely mistake. FILE is the
// file name, <stdin>, or the robots.txt URL after redirects. -strict fails
// on warnings too; -json prints one JSON object a file.
//
// sitemaps prints the sitemap URLs of the Sitemap lines, one per line;
// relative ones resolve against the robots.txt URL, or -base for a file.
// With -walk it walks the sitemaps (indexes, scope, robots.txt checks of
// each sitemap and page), or only the SITEMAP given (a URL with a path
// other than / and /robots.txt), and prints a summary: sitemap files read, page
// URLs, failed sitemaps, dropped URLs and skipped sitemaps by reason, large
// sitemaps (past -warn-size); with -urls it prints every page URL too, as
// each sitemap is read, and the summary goes to standard error. -since
// drops pages and skips index children whose lastmod is older; -max-size
// bounds each sitemap file (50MiB by default). While walking, a progress line is redrawn on standard error when
// that is a terminal.
//
// serve starts a local web page (on 127.0.0.1:8080 by default) to edit a
// robots.txt or fetch a site's live one, test URLs against it for several
// agents with the deciding line highlighted, lint it, summarise it and
// compare two versions; "robotstxt help serve" documents its JSON API.
//
// Every fetch (robots.txt, each sitemap file) gives up after -timeout
// (default 30s); Ctrl-C ends the command at once.
//
// Fetches reach public addresses, and the addresses of the sites named on
// the command line on those sites' own ports; -allow-private lifts that.
// They go through the proxies of HTTP_PROXY, HTTPS_PROXY and NO_PROXY, as
// curl's do; through a proxy, a URL's host is resolved and checked here
// before the request is sent to the proxy (a host that does not resolve
// here is refused), and the proxy itself may be on a private address.
//
// Exit status: 0 success (every URL allowed, no lint error); 1 a URL is
// disallowed, lint found an error (with -strict, a warning), or a sitemap
// of a walk failed; 2 bad usage, or a robots.txt could not be read; 130
// interrupted (Ctrl-C), after what was found so far was printed. "-h", "--help" and
// "help" print the usage, "robotstxt help COMMAND" and "robotstxt COMMAND
// -h" a command's own.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"syscall"
)

// Exit statuses.
const (
	exitOK          = 0
	exitFail        = 1 // a URL is disallowed, lint found an error, a sitemap failed
	exitUsage       = 2 // bad usage, or ROBOTS could not be read
	exitInterrupted = 130
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		// After the first Ctrl-C, a second one kills the process at once.
		<-ctx.Done()
		stop()
	}()
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr, &http.Client{})
	stop()
	os.Exit(code)
}

// env is what a command reads and writes: the run's environment.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	client         *http.Client // copied, with -timeout, for every fetch
	guard          *guard       // what a fetch may connect to; nil: anything
}

// run is the command with its environment passed in, so tests can drive
// it; it returns the exit status.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, client *http.Client) int {
	e := &env{stdin: stdin, stdout: stdout, stderr: stderr, client: client}
	if len(args) == 0 {
		return e.usageError("", errors.New("missing command"))
	}
	name, args := args[0], args[1:]
	switch name {
	case "-h", "-help", "--help", "help":
		if name == "help" && len(args) > 0 && !slices.Contains([]string{"-h", "-help", "--help"}, args[0]) {
			if len(args) > 1 {
				return e.usageError("", fmt.Errorf("help takes one COMMAND, got %d", len(args)))
			}
			c, ok := lookup(args[0])
			if !ok {
				return e.usageError("", fmt.Errorf("unknown command %q", args[0]))
			}
			c.printUsage(stdout)
			return exitOK
		}
		printUsage(stdout)
		return exitOK
	}
	c, ok := lookup(name)
	if !ok {
		if len(name) > 1 && name[0] == '-' {
			return e.usageError("", fmt.Errorf("unknown flag %q; flags follow the command", name))
		}
		return e.usageError("", fmt.Errorf("unknown command %q", name))
	}
	return c.run(ctx, e, args)
}

// errInterrupted reports that the run's context ended (Ctrl-C).
var errInterrupted = errors.New("interrupted")

// finish turns a command's outcome into an exit status, reporting err.
func (e *env) finish(c *command, status int, err error) int {
	var uerr usageErr
	switch {
	case err == nil:
		return status
	case errors.As(err, &uerr):
		return e.usageError(c.name, err)
	case errors.Is(err, errInterrupted):
		fmt.Fprintf(e.stderr, "robotstxt: %s: interrupted\n", c.name)
		return exitInterrupted
	}
	fmt.Fprintf(e.stderr, "robotstxt: %s: %v\n", c.name, err)
	if status == exitOK {
		status = exitUsage
	}
	return status
}
