package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestDemo runs the example against its demo sites and checks the report.
func TestDemo(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run(context.Background(), nil, &out, &errOut); code != 0 {
		t.Fatalf("run = %d, want 0; stderr:\n%s", code, errOut.String())
	}
	report := out.String()
	for _, want := range []string{
		`blocked  shop/cart/checkout: disallowed by line 2: disallow: /cart/ (group "*")`,
		`blocked  partner/drafts/6: disallowed by line 2: disallow: /drafts/ (group "*")`,
		"retry    shop/catalog/2 in ",
		"robotsmw: status 503 Service Unavailable",
		// Linked only from the page that was retried after the queue had
		// run dry: the links of a retried page are crawled too.
		"fetched  shop/catalog/3 (200)",
		"fetched  partner/widget/4 (200)",
		"gave up  partner/widget/5: robotsmw: gave up: GET after 2 retries",
		"after 2 retries: robotsmw: status 500 Internal Server Error",
		"totals: requests sent 16 (robots.txt included), pages fetched 10, blocked 2,",
		"retried 3,",
		"gave up 1",
		"  localhost    sent  9, pages  5, blocked 1, retried 2, gave up 1;",
		"  127.0.0.1    sent  7, pages  5, blocked 1, retried 1, gave up 0;",
	} {
		if !strings.Contains(report, want) {
			t.Errorf("report lacks %q; report:\n%s", want, report)
		}
	}
	// The retry is reported before the page is fetched, and the page once.
	retry := strings.Index(report, "retry    shop/catalog/2")
	fetched := strings.Index(report, "fetched  shop/catalog/2 (200)")
	if retry < 0 || fetched < retry || strings.Count(report, "fetched  shop/catalog/2 ") != 1 {
		t.Errorf("want one retry of shop/catalog/2, then the page; report:\n%s", report)
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
		{[]string{"-url", "http://"}, 2, `-url "http://" is not an http or https URL with a host`},
		{[]string{"stray"}, 2, `unexpected argument "stray"`},
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
	if code := run(context.Background(), []string{"-v"}, &out, &errOut); code != 0 || !strings.Contains(errOut.String(), `msg="request blocked"`) {
		t.Errorf("run(-v) = %d, want 0 and a log with %s; stderr:\n%s", code, `msg="request blocked"`, errOut.String())
	}
}
