package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestDemo runs the example against its demo site and checks the report.
func TestDemo(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run(context.Background(), nil, &out, &errOut); code != 0 {
		t.Fatalf("run = %d, want 0; stderr:\n%s", code, errOut.String())
	}
	report := out.String()
	for _, want := range []string{
		": 5 links",
		"ok       200 /docs ",
		"ok       200 /docs/install ",
		`blocked      /private/admin   disallowed by line 2: disallow: /private/ (group "*"); nothing sent`,
		"ok       200 /status ",
		", retried 1× after 429/503",
		"broken   404 /old-page ",
		"Guard: 7 requests sent (robots.txt included), 1 blocked, 1 retried",
		// The site's log: robots.txt first, the 503 and its retry.
		"what the site saw:\n  +0.000s GET /robots.txt      200\n",
		"GET /status          503\n",
		"GET /status          200\n",
	} {
		if !strings.Contains(report, want) {
			t.Errorf("report lacks %q; report:\n%s", want, report)
		}
	}
	_, log, _ := strings.Cut(report, "what the site saw:")
	if strings.Contains(log, "/private") {
		t.Errorf("the site saw the disallowed link:\n%s", log)
	}
	if n := strings.Count(log, " GET "); n != 7 {
		t.Errorf("the site saw %d requests, want 7:\n%s", n, log)
	}
	if errOut.Len() > 0 {
		t.Errorf("stderr: %s", errOut.String())
	}
}

func TestUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"-url", "example.com/docs"}, 2, "-url \"example.com/docs\" is not an http or https URL with a host (try \"https://example.com/docs\")"},
		{[]string{"-url", "mailto:me@example.com"}, 2, "-url \"mailto:me@example.com\" is not an http or https URL with a host\n"},
		{[]string{"stray"}, 2, `unexpected argument "stray"`},
		{[]string{"-url", "http://127.0.0.1:1/"}, 1, "robots.txt unreachable"},
	} {
		var out, errOut bytes.Buffer
		code := run(context.Background(), tc.args, &out, &errOut)
		if code != tc.code || !strings.Contains(errOut.String(), tc.msg) {
			t.Errorf("run(%q) = %d, stderr %q; want %d and %q", tc.args, code, errOut.String(), tc.code, tc.msg)
		}
	}
}

// TestVerbose: -v prints the Guard's log on stderr (and nothing without it:
// see the test above).
func TestVerbose(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"-v"}, &out, &errOut); code != 0 || !strings.Contains(errOut.String(), `msg="host paused"`) {
		t.Errorf("run(-v) = %d, want 0 and a log with %s; stderr:\n%s", code, `msg="host paused"`, errOut.String())
	}
}
