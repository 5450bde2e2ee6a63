package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/robotsmw/robotsmw/policy"
)

// A CheckResult is the verdict of check on one URL: one line of
// "check -json" (JSON Lines). Other commands that report verdicts reuse it.
type CheckResult struct {
	URL     string `json:"url"`     // as given
	Verdict string `json:"verdict"` // "allowed" or "disallowed"
	Allowed bool   `json:"allowed"`
	Agent   string `json:"agent"`  // the product token matched (RFC 9309 §2.2.1)
	Robots  string `json:"robots"` // the robots.txt: file name, <stdin> or URL after redirects
	// State is what became of robots.txt: "parsed" (rules read),
	// "unavailable" (4xx: everything allowed, RFC 9309 §2.3.1.3) or
	// "unreachable" (everything disallowed for now, §2.3.1.4).
	State string `json:"state"`
	// Group is the product token of the group that applied, "*" for the
	// global one; empty when none did.
	Group string `json:"group,omitempty"`
	// Rule and Line are the deciding rule as written ("disallow: /x") and
	// its line; empty when no rule matched.
	Rule string `json:"rule,omitempty"`
	Line int    `json:"line,omitempty"`
	// Canonical is the URL without the parameters a Clean-param line of
	// robots.txt names (Yandex); the URL itself when none does.
	Canonical string `json:"canonical"`
	Reason    string `json:"reason"`          // the text check prints after the URL
	Error     string `json:"error,omitempty"` // why robots.txt is unreachable
	// Cut is set when robots.txt is larger than policy.MaxSize (500
	// KiB): only its first 500 KiB were read (RFC 9309 §2.5), and the
	// rules past them do not apply.
	Cut bool `json:"cut,omitempty"`
}

// result returns rt's verdict on u for agent, given as raw.
func (rt *robotsTxt) result(agent, raw string, u *url.URL, timeout time.Duration) CheckResult {
	allowed, why, d := rt.reason(agent, u, timeout)
	res := CheckResult{URL: raw, Allowed: allowed, Verdict: "disallowed", Agent: agent, Robots: rt.name,
		State: "parsed", Reason: why, Canonical: u.String()}
	if allowed {
		res.Verdict = "allowed"
	}
	switch {
	case rt.err != nil:
		res.State = "unreachable"
		res.Robots = robotsName(rt, rt.err)
		res.Error = describe(rt.err, timeout)
	case rt.state == policy.StateUnavailable:
		res.State = "unavailable"
	default:
		res.Canonical = rt.robots.Canonical(u).String()
		res.Cut = rt.cut()
	}
	if d != nil {
		res.Group = d.Agent
		if d.Rule != nil {
			key := "disallow"
			if d.Rule.Allow {
				key = "allow"
			}
			res.Rule, res.Line = key+": "+d.Rule.Pattern, d.Rule.Line
		}
	}
	return res
}

// writeJSON writes v as one line of JSON.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// maxURLLine bounds a line of standard input read as a URL: well past the
// 2,048 characters URLs in practice keep to.
const maxURLLine = 64 << 10

// eachLine calls fn with each line of r that is neither blank nor a
// comment ('#'), trimmed, and its 1-based number; it stops at the end of
// ctx (errInterrupted) or at fn's first error.
func eachLine(ctx context.Context, r io.Reader, fn func(num int, line string) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), maxURLLine)
	for num := 1; sc.Scan(); num++ {
		if ctx.Err() != nil {
			return errInterrupted
		}
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		if err := fn(num, line); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return errors.New("reading standard input: a line is longer than 64 KiB")
		}
		return errors.New("reading standard input: " + err.Error())
	}
	if ctx.Err() != nil {
		return errInterrupted // the Ctrl-C that ended the input
	}
	return nil
}

// stdinHasLine reports whether standard input holds a line that is not
// blank: false for a terminal, /dev/null or an input that ends first. It
// waits for that line or the end of the input, and keeps what it read for
// the next reads of e.stdin.
func (e *env) stdinHasLine() bool {
	if e.stdinIsTerminal() {
		return false
	}
	br, ok := e.stdin.(*bufio.Reader)
	if !ok {
		br = bufio.NewReaderSize(e.stdin, maxURLLine)
		e.stdin = br
	}
	for n := 1; ; n++ {
		b, err := br.Peek(n)
		if len(b) == n && !isBlank(b[n-1]) {
			return true
		}
		if err != nil || n == br.Size() {
			return false
		}
	}
}

// isBlank reports whether c is ASCII white space.
func isBlank(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

// stdinIsTerminal reports whether standard input is a terminal: then no
// URLs are waiting on it, and check without URLs is a usage mistake.
func (e *env) stdinIsTerminal() bool {
	f, ok := e.stdin.(*os.File)
	if !ok {
		return false
	}
	info, err := f.Stat()
	return err == nil && info.Mode()&os.ModeCharDevice != 0
}
