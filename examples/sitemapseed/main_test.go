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
		"sitemaps read:      3",
		"pages queued:       5",
		"dropped, filter:    2",
		"dropped, robots:    1",
		"dropped, duplicate: 1",
		"dropped, scope:     1",
		"pages fetched:      5 (/, /about, /blog/new-feature, /contact, /pricing)",
		"fetched /blog/new-feature  200,",
		// What Since, Exclude and robots.txt dropped was never requested.
		"never requested:    /blog/annual-report.pdf, /blog/launch-2019, /drafts/next-post",
	} {
		if !strings.Contains(report, want) {
			t.Errorf("report lacks %q; report:\n%s", want, report)
		}
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
		{[]string{"-url", "example.com"}, 2, `-url "example.com" is not an http or https URL with a host (try "https://example.com")`},
		{[]string{"-url", "ftp://example.com"}, 2, `-url "ftp://example.com" is not an http or https URL with a host`},
		{[]string{"stray"}, 2, `unexpected argument "stray"`},
		{[]string{"-nosuchflag"}, 2, "flag provided but not defined: -nosuchflag\nusage: sitemapseed [flags]"},
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
	if code := run(context.Background(), []string{"-v"}, &out, &errOut); code != 0 || !strings.Contains(errOut.String(), `msg="sitemap read"`) {
		t.Errorf("run(-v) = %d, want 0 and a log with %s; stderr:\n%s", code, `msg="sitemap read"`, errOut.String())
	}
}
