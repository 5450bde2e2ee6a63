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
		synopsis: "[-strict] [-json] [-timeout D] [-allow-private] ROBOTS...",
		summary:  "report what crawlers ignore or may misread in robots.txt files",
		help: `lint prints the problems of each robots.txt, sorted by line, one a line:

  FILE:LINE: error: message [code]
  FILE:LINE: warning: message [code]

An error is a line crawlers ignore or read differently from what it says; a
warning is a likely mistake: the line is read, but probably does not do what
was meant, or other crawlers read it otherwise. FILE is the file name,
<stdin> for standard input, or the robots.txt URL (after redirects);
problems of the whole file have no LINE. A summary such as "robots.txt: 2
errors, 1 warning" goes to standard error, with a total for several files.

With -json, each file is one JSON object on a line of its own (JSON Lines):
file, errors, warnings, diagnostics (line, severity, code, message) and, for
a file that could not be read, error (see LintReport in the source).

The exit status is 1 when a file has an error, or with -strict a warning;
2 when a file could not be read (the others are still linted).

` + robotsHelp,
		setup: lintFlags,
	}
}

func lintFlags(fs *flag.FlagSet) action {
	strict := fs.Bool("strict", false, "fail (exit 1) on warnings too, for CI")
	asJSON := fs.Bool("json", false, "print one JSON object a file instead of text")
	timeout := new(time.Duration)
	timeoutVar(fs, timeout)
	return func(ctx context.Context, e *env, args []string) (int, error) {
		if err := checkTimeout(*timeout); err != nil {
			return 0, err
		}
		if len(args) == 0 {
			return 0, usagef("missing ROBOTS")
		}
		if n := count(args, "-"); n > 1 {
			return 0, usagef("standard input (-) can be given once, got %d", n)
		}
		for _, arg := range args {
			// URLs are checked before any file is linted.
			if !isLocal(arg) {
				if _, err := siteURL(arg); err != nil {
					return 0, err
				}
			}
		}
		return e.lint(ctx, args, *strict, *asJSON, *timeout)
	}
}

func count(list []string, s string) int {
	n := 0
	for _, v := range list {
		if v == s {
			n++
		}
	}
	return n
}

// A LintReport is what lint found in one robots.txt: one line of
// "lint -json" (JSON Lines). Other commands that lint reuse it.
type LintReport struct {
	File        string           `json:"file"` // file name, <stdin>, or the robots.txt URL after redirects
	Errors      int              `json:"errors"`
	Warnings    int              `json:"warnings"`
	Diagnostics []LintDiagnostic `json:"diagnostics"`
	Error       string           `json:"error,omitempty"` // why the file could not be read
}

// A LintDiagnostic is one problem; see policy.Diagnostic.
type LintDiagnostic struct {
	Line     int    `json:"line"` // 0 for the whole file
	Severity string `json:"severity"`
	Code     string `json:"code"`
	Message  string `json:"message"`
}

// lintReport lints body, named name.
func lintReport(name string, body []byte) LintReport {
	diags := policy.Lint(body)
	// Lint sorts by line already; whole-file problems (line 0) come first.
	slices.SortStableFunc(diags, func(a, b policy.Diagnostic) int { return a.Line - b.Line })
	r := LintReport{File: name, Diagnostics: make([]LintDiagnostic, 0, len(diags))}
	for _, d := range diags {
		switch d.Severity {
		case policy.SeverityError:
			r.Errors++
		case policy.SeverityWarning:
			r.Warnings++
		}
		r.Diagnostics = append(r.Diagnostics, LintDiagnostic{Line: d.Line, Severity: d.Severity.String(), Code: d.Code, Message: d.Message})
	}
	return r
}

func (e *env) lint(ctx context.Context, args []string, strict, asJSON bool, timeout time.Duration) (int, error) {
	status := exitOK
	var errs, warnings, failed int
	for _, arg := range args {
		body, name, err := e.lintBody(ctx, arg, timeout)
		if err != nil && ctx.Err() != nil {
			return status, errInterrupted
		}
		var r LintReport
		if err != nil {
			r = LintReport{File: name, Diagnostics: []LintDiagnostic{}, Error: err.Error()}
			status, failed = exitUsage, failed+1
			if !asJSON {
				fmt.Fprintf(e.stderr, "robotstxt: lint: %v\n", err)
			}
		} else {
			r = lintReport(name, body)
		}
		errs, warnings = errs+r.Errors, warnings+r.Warnings
		if (r.Errors > 0 || strict && r.Warnings > 0) && status == exitOK {
			status = exitFail
		}
		if asJSON {
			if err := writeJSON(e.stdout, r); err != nil {
				return status, err
			}
			continue
		}
		if r.Error != "" {
			continue
		}
		for _, d := range r.Diagnostics {
			if d.Line == 0 {
				fmt.Fprintf(e.stdout, "%s: %s: %s [%s]\n", r.File, d.Severity, d.Message, d.Code)
			} else {
				fmt.Fprintf(e.stdout, "%s:%d: %s: %s [%s]\n", r.File, d.Line, d.Severity, d.Message, d.Code)
			}
		}
		if len(args) == 1 || r.Errors+r.Warnings > 0 {
			fmt.Fprintf(e.stderr, "%s: %s\n", r.File, problems(r.Errors, r.Warnings))
		}
	}
	if len(args) > 1 && !asJSON {
		total := plural(len(args), "file") + ": " + problems(errs, warnings)
		if failed > 0 {
			total += fmt.Sprintf("; %s could not be read", plural(failed, "file"))
		}
		fmt.Fprintln(e.stderr, total)
	}
	return status, nil
}

// problems returns "no problems found" or "2 errors, 1 warning".
func problems(errs, warnings int) string {
	if errs+warnings == 0 {
		return "no problems found"
	}
	return plural(errs, "error") + ", " + plural(warnings, "warning")
}

// lintBody reads a ROBOTS argument of lint: a file, standard input or a
// fetched robots.txt, with the name to show for it.
func (e *env) lintBody(ctx context.Context, arg string, timeout time.Duration) ([]byte, string, error) {
	if isLocal(arg) {
		return e.readLocal(arg)
	}
	site, err := siteURL(arg)
	if err != nil {
		return nil, arg, err
	}
	return e.fetchRaw(ctx, site, "robotstxt", timeout)
}
