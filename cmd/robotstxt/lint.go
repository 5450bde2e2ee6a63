package main

import (
	"context"
	"flag"
	"fmt"
	"slices"
	"time"

	"github.com/robotsmw/robotsmw/policy"
)

func lintCommand() command {
	return command{
		name:     "lint",
		synopsis: "[-timeout D] ROBOTS",
		summary:  "report what crawlers ignore or may misread in a robots.txt",
		help: `lint prints the problems of a robots.txt, sorted by line, one a line:

  FILE:LINE: error: message [code]
  FILE:LINE: warning: message [code]

FILE is the file name, <stdin> for standard input, or the robots.txt URL
(after redirects); problems of the whole file have no LINE. A summary such as
"robots.txt: 2 errors, 1 warning" goes to standard error. The exit status is
1 when there is an error, 0 when there are only warnings or none.

` + robotsHelp,
		setup: lintFlags,
	}
}

func lintFlags(fs *flag.FlagSet) action {
	timeout := new(time.Duration)
	timeoutVar(fs, timeout)
	return func(ctx context.Context, e *env, args []string) (int, error) {
		if err := checkTimeout(*timeout); err != nil {
			return 0, err
		}
		switch len(args) {
		case 0:
			return 0, usagef("missing ROBOTS")
		case 1:
		default:
			return 0, usagef("takes one ROBOTS argument, got %d", len(args))
		}
		return e.lint(ctx, args[0], *timeout)
	}
}

func (e *env) lint(ctx context.Context, arg string, timeout time.Duration) (int, error) {
	var body []byte
	var name string
	var err error
	if isLocal(arg) {
		body, name, err = e.readLocal(arg)
	} else {
		site, uerr := siteURL(arg)
		if uerr != nil {
			return 0, uerr
		}
		body, name, err = e.fetchRaw(ctx, site, "robotstxt", timeout)
	}
	if err != nil {
		return exitUsage, err
	}
	diags := policy.Lint(body)
	// Lint sorts by line already; whole-file problems (line 0) come first.
	slices.SortStableFunc(diags, func(a, b policy.Diagnostic) int { return a.Line - b.Line })
	var errs, warnings int
	for _, d := range diags {
		switch d.Severity {
		case policy.SeverityError:
			errs++
		case policy.SeverityWarning:
			warnings++
		}
		if d.Line == 0 {
			fmt.Fprintf(e.stdout, "%s: %s: %s [%s]\n", name, d.Severity, d.Message, d.Code)
		} else {
			fmt.Fprintf(e.stdout, "%s:%d: %s: %s [%s]\n", name, d.Line, d.Severity, d.Message, d.Code)
		}
	}
	if errs+warnings == 0 {
		fmt.Fprintf(e.stderr, "%s: no problems found\n", name)
	} else {
		fmt.Fprintf(e.stderr, "%s: %s, %s\n", name, plural(errs, "error"), plural(warnings, "warning"))
	}
	if errs > 0 {
		return exitFail, nil
	}
	return exitOK, nil
}
