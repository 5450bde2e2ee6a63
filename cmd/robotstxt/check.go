package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/robotsmw/robotsmw/policy"
)

func checkCommand() command {
	return command{
		name:     "check",
		synopsis: "[-agent A] [-json] [-timeout D] [-allow-private] [-robots ROBOTS | ROBOTS] [URL...]",
		summary:  "say whether robots.txt allows each URL, and which rule decided",
		help: `check prints one line per URL: ALLOWED or DISALLOWED, the URL, and why: the
deciding rule with its line and group, or that no rule of the group matched,
or why robots.txt gave no rules (it answered 404, is an html page or is
empty; or it could not be fetched, which disallows everything: RFC 9309
§2.3.1.4). When a Clean-param line of robots.txt (Yandex) names parameters
of the URL, the line ends with the URL's canonical form, without them.

Without a ROBOTS, each URL's own robots.txt is fetched. A first argument
that is "-" or an existing file is the ROBOTS, as is -robots. So is a single
argument that names a site's root (https://example.com, https://example.com/
or https://example.com/robots.txt) while standard input is not a terminal
and holds a line: "echo URL | robotstxt check https://example.com/" checks
the URLs of standard input against that site's robots.txt. With nothing on
standard input (a terminal, /dev/null, an empty pipe), that argument is the
URL checked, as always.
URLs are absolute http or https URLs with a host: https://example.com/a.
Without URL arguments, the URLs are read from standard input, one a line
(blank lines and lines starting with '#' are skipped), and each verdict is
printed as soon as it is known; a line that is no such URL is reported on
standard error and the others are checked.

With -json, each verdict is one JSON object on a line of its own (JSON
Lines), with the fields url, verdict ("allowed" or "disallowed"), agent,
robots, state, group, rule, line, canonical, reason and error (see
CheckResult in the source).

` + robotsHelp + `
When a robots.txt cannot be fetched (a network error, a timeout, 429 or a
5xx answer), its URLs are reported DISALLOWED, as RFC 9309 says a crawler
must treat them, and the exit status is 2: the verdict is not the site's.
A robots.txt larger than 500 KiB is read up to 500 KiB only (RFC 9309
§2.5), as crawlers do: check says so on standard error, once a file, and
sets "cut" with -json. -agent must not be empty (an empty token would
silently mean the "*" group).

examples:
  robotstxt check -agent Googlebot robots.txt https://example.com/private/x
  curl -s https://example.com/robots.txt | robotstxt check - https://example.com/a
  robotstxt check https://example.com/a https://example.org/b
  robotstxt check -json -robots https://example.com < urls.txt | jq .verdict
`,
		setup: checkFlags,
	}
}

func checkFlags(fs *flag.FlagSet) action {
	agent := fs.String("agent", "robotstxt",
		"the crawler's product token or User-Agent `A`; the group naming it applies, else the \"*\" group")
	robots := fs.String("robots", "",
		"use `ROBOTS` (a file, - or a URL of a site) for every URL instead of each URL's own robots.txt")
	asJSON := fs.Bool("json", false, "print one JSON object a line instead of text")
	timeout := new(time.Duration)
	timeoutVar(fs, timeout)
	return func(ctx context.Context, e *env, args []string) (int, error) {
		if err := checkTimeout(*timeout); err != nil {
			return 0, err
		}
		if err := checkAgent(*agent); err != nil {
			return 0, err
		}
		return e.check(ctx, checkRun{agent: *agent, robots: *robots, timeout: *timeout, json: *asJSON}, args)
	}
}

// checkRun is what the flags of one check say.
type checkRun struct {
	agent, robots string
	timeout       time.Duration
	json          bool
}

func (e *env) check(ctx context.Context, cr checkRun, args []string) (int, error) {
	robotsArg := cr.robots
	switch {
	case robotsArg == "" && len(args) > 0 && isFile(args[0]):
		robotsArg, args = args[0], args[1:]
	case robotsArg == "" && len(args) == 1 && isSiteRoot(args[0]) && e.stdinHasLine():
		// echo URL | robotstxt check https://example.com/
		robotsArg, args = args[0], nil
	}
	fromStdin := len(args) == 0
	if fromStdin {
		switch {
		case robotsArg == "-":
			return 0, usagef("missing URL to check against standard input; standard input holds either ROBOTS or the URLs")
		case e.stdinIsTerminal():
			if robotsArg != "" {
				return 0, usagef("missing URL to check against %q", robotsArg)
			}
			return 0, usagef("missing URL")
		}
	}
	// Every argument is checked before any is, so that a mistake is not
	// reported after verdicts that it makes look complete.
	urls := make([]*url.URL, len(args))
	for i, raw := range args {
		u, err := crawlURL(raw, robotsArg != "")
		if err != nil {
			return 0, err
		}
		urls[i] = u
	}
	token := policy.ProductToken(cr.agent)
	f := e.newFetcher(cr.agent, cr.timeout)
	var fixed *robotsTxt
	switch {
	case robotsArg == "":
	case isLocal(robotsArg):
		rt, err := e.localRobots(robotsArg)
		if err != nil {
			return exitUsage, err
		}
		fixed = rt
	default:
		site, err := siteURL(robotsArg)
		if err != nil {
			return 0, err
		}
		if fixed, err = f.get(ctx, site); err != nil {
			return 0, err
		}
	}
	status := exitOK
	unreachable := map[string]bool{} // robots.txt files that could not be read
	cut := map[string]bool{}         // robots.txt files read in part, reported
	defer func() {
		files := fmt.Sprintf("%d robots.txt files", len(unreachable))
		switch len(unreachable) {
		case 0:
			return
		case 1:
			files = "1 robots.txt"
		}
		fmt.Fprintf(e.stderr, "robotstxt: check: %s could not be read; its URLs are reported DISALLOWED, as RFC 9309 §2.3.1.4 says (exit status 2)\n", files)
	}()
	one := func(raw string, u *url.URL) error {
		rt := fixed
		if rt == nil {
			var err error
			if rt, err = f.get(ctx, u); err != nil {
				return err
			}
		}
		res := rt.result(token, raw, u, cr.timeout)
		if res.Cut && !cut[res.Robots] {
			cut[res.Robots] = true
			fmt.Fprintf(e.stderr, "robotstxt: check: %s\n", rt.cutText())
		}
		switch {
		case rt.err != nil:
			status = exitUsage // the verdict is RFC 9309's, not the site's
			unreachable[res.Robots] = true
		case !res.Allowed && status == exitOK:
			status = exitFail
		}
		if cr.json {
			return writeJSON(e.stdout, res)
		}
		line := fmt.Sprintf("%-10s %s: %s", strings.ToUpper(res.Verdict), raw, res.Reason)
		if res.Canonical != "" && res.Canonical != u.String() {
			line += "; canonical (clean-param): " + res.Canonical
		}
		_, err := fmt.Fprintln(e.stdout, line)
		return err
	}
	if !fromStdin {
		for i, u := range urls {
			if err := one(args[i], u); err != nil {
				return status, err
			}
		}
		return status, nil
	}
	n, bad := 0, 0
	err := eachLine(ctx, e.stdin, func(num int, raw string) error {
		u, err := crawlURL(raw, robotsArg != "")
		if err != nil {
			bad++
			fmt.Fprintf(e.stderr, "robotstxt: check: %s line %d: %v\n", stdinName, num, err)
			return nil
		}
		n++
		return one(raw, u)
	})
	switch {
	case err != nil:
		return status, err
	case n == 0 && bad == 0 && robotsArg != "":
		return 0, usagef("missing URL to check against %q, as arguments or on standard input", robotsArg)
	case n == 0 && bad == 0:
		return 0, usagef("missing URL, as arguments or on standard input")
	case bad > 0:
		status = exitUsage
	}
	return status, nil
}

// reason returns the verdict rt gives for agent and u, why, and the
// decision when the rules of a robots.txt decided it.
func (rt *robotsTxt) reason(agent string, u *url.URL, timeout time.Duration) (bool, string, *policy.Decision) {
	switch {
	case rt.err != nil:
		// RFC 9309 §2.3.1.4: unreachable means disallowed for now.
		return false, fmt.Sprintf("%s is unreachable (%s), so everything is disallowed (RFC 9309 §2.3.1.4)",
			robotsName(rt, rt.err), describe(rt.err, timeout)), nil
	case rt.state == policy.StateUnavailable:
		// RFC 9309 §2.3.1.3.
		why := "answered " + statusText(rt.status)
		if errors.Is(rt.whyAll, policy.ErrTooManyRedirects) {
			why = "redirected more than 5 times or in a loop"
		}
		return true, fmt.Sprintf("%s %s, so everything is allowed", rt.name, why), nil
	}
	d := rt.robots.Explain(agent, u)
	switch {
	case d.Exempt:
		return true, "/robots.txt itself is always allowed", &d
	case d.Group == policy.GroupNone:
		why := noRules(rt.name, rt.body)
		if why == "" {
			why = fmt.Sprintf("no group names %q and there is no \"*\" group", agent)
		}
		return true, why + ", so everything is allowed", &d
	case d.Rule == nil:
		return d.Allowed, fmt.Sprintf("no rule matched in group %q", d.Agent), &d
	}
	return d.Allowed, fmt.Sprintf("by %s (group %q)", d.Rule, d.Agent), &d
}

// robotsName names the robots.txt an unreachable error is about.
func robotsName(rt *robotsTxt, err error) string {
	var ferr *policy.FetchError
	if errors.As(err, &ferr) && ferr.URL != "" {
		return ferr.URL
	}
	return rt.name
}

// crawlURL parses a URL argument of check: an absolute http or https URL
// with a host, as a crawler fetches. Anything else is refused rather than
// read as policy.Robots.Allowed would read it: "example.com/private",
// which url.Parse takes for a relative path, is most likely an https URL
// without its scheme. haveRobots tells whether a ROBOTS was given, for
// the hint when a file stands where a URL belongs.
func crawlURL(raw string, haveRobots bool) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Opaque == "" && u.Hostname() != "" {
		return u, nil
	}
	if info, serr := os.Stat(raw); serr == nil && info.Mode().IsRegular() {
		if haveRobots {
			return nil, usagef("%q is a file, not a URL; only one ROBOTS can be given, as the first argument or with -robots", raw)
		}
		return nil, usagef("%q is a file, not a URL", raw)
	}
	var uerr *url.Error
	if errors.As(err, &uerr) {
		return nil, usagef("%q is not a valid URL: %v", raw, uerr.Err)
	}
	if strings.HasSuffix(strings.ToLower(raw), ".txt") && !strings.Contains(raw, "://") {
		// Meant as ROBOTS, most likely: say so rather than suggest a URL.
		return nil, usagef("%q: no such robots.txt file (and not an http or https URL)", raw)
	}
	msg := fmt.Sprintf("%q is not an absolute http or https URL with a host", raw)
	if err == nil && u.Host == "" && !strings.HasPrefix(raw, "/") && !strings.Contains(raw, "://") && !strings.ContainsAny(raw, " \t") &&
		(u.Scheme == "" || u.Opaque != "" && '0' <= u.Opaque[0] && u.Opaque[0] <= '9') {
		// "example.com/a", or "example.com:8080/a" with its port.
		msg += fmt.Sprintf(" (did you mean %q?)", "https://"+raw)
	}
	return nil, usageErr{msg}
}

// checkAgent refuses an empty -agent, which policy.ProductToken turns
// into no token at all: it would match the "*" group without a word.
func checkAgent(agent string) error {
	if strings.TrimSpace(agent) == "" {
		return usagef("-agent is empty; give the crawler's product token or User-Agent, such as -agent Googlebot (the default is robotstxt)")
	}
	return nil
}

// isSiteRoot reports whether arg is an http or https URL of a site's
// root or of its robots.txt, without a query: the URL check reads as a
// ROBOTS when standard input holds the URLs.
func isSiteRoot(arg string) bool {
	u, err := url.Parse(arg)
	if err != nil || isLocal(arg) || u.Hostname() == "" || u.RawQuery != "" || u.ForceQuery {
		return false
	}
	return u.Path == "" || u.Path == "/" || u.Path == "/robots.txt"
}
