package cmdline

import (
	"bytes"
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"
)

func TestSiteURL(t *testing.T) {
	for _, tc := range []struct{ raw, want string }{
		{"https://example.com/", ""},
		{"http://127.0.0.1:8080", ""},
		{"example.com", `-url "example.com" is not an http or https URL with a host (try "https://example.com")`},
		{"ftp://x/", `-url "ftp://x/" is not an http or https URL with a host`},
		{"https://", `-url "https://" is not an http or https URL with a host`},
		{"/path", `-url "/path" is not an http or https URL with a host`},
		{"mailto:me@example.com", `-url "mailto:me@example.com" is not an http or https URL with a host`},
		{"example.com:8080/a", `-url "example.com:8080/a" is not an http or https URL with a host (try "https://example.com:8080/a")`},
	} {
		_, err := SiteURL("url", tc.raw)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tc.want {
			t.Errorf("SiteURL(%q) = %q, want %q", tc.raw, got, tc.want)
		}
	}
}

func TestCommand(t *testing.T) {
	c := New("demo", "", "Does things.")
	c.String("url", "", "the `URL`")
	var out, errOut bytes.Buffer
	if code := c.Parse([]string{"-h"}, 0, &out, &errOut); code != ExitOK {
		t.Errorf("Parse(-h) = %d, want %d", code, ExitOK)
	}
	for _, want := range []string{"usage: demo [flags]\n\nDoes things.\n\nflags:\n  -url URL\n", "130 interrupted (Ctrl-C)"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("Parse(-h) printed %q, want %q in it", out.String(), want)
		}
	}
	c = New("demo", "", "Does things.")
	if code := c.Parse([]string{"extra"}, 0, &out, &errOut); code != ExitUsage || !strings.HasPrefix(errOut.String(), "demo: unexpected argument \"extra\"\n") {
		t.Errorf("Parse(extra) = %d, stderr %q; want %d and the argument named", code, errOut.String(), ExitUsage)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	errOut.Reset()
	if code := c.Finish(ctx, &errOut, ExitOK); code != ExitInterrupted || errOut.String() != "demo: interrupted\n" {
		t.Errorf("Finish after Ctrl-C = %d, %q; want %d, \"demo: interrupted\"", code, errOut.String(), ExitInterrupted)
	}
}

func TestErrorText(t *testing.T) {
	u, _ := url.Parse("http://127.0.0.1:8080/a?b=1")
	for _, tc := range []struct{ err, want string }{
		{"robotsmw: gave up: http://127.0.0.1:8080/a?b=1 not sent: context canceled", "robotsmw: gave up: not sent: context canceled"},
		{`Get "http://127.0.0.1:8080/a?b=1": dial tcp: connection refused`, "Get dial tcp: connection refused"},
		{"robotsmw: http://127.0.0.1:8080/a?b=1 disallowed by line 2", "robotsmw: disallowed by line 2"},
		{"Not Found", "Not Found"},
	} {
		if got := ErrorText(errors.New(tc.err), u); got != tc.want {
			t.Errorf("ErrorText(%q) = %q, want %q", tc.err, got, tc.want)
		}
	}
	// net/http's wrapping: neither "Get" nor the URL again.
	wrapped := &url.Error{Op: "Get", URL: u.String(), Err: errors.New("robotsmw: gave up: http://127.0.0.1:8080/a?b=1 not sent: context canceled")}
	if got, want := ErrorText(wrapped, u), "robotsmw: gave up: not sent: context canceled"; got != want {
		t.Errorf("ErrorText(%q) = %q, want %q", wrapped, got, want)
	}
}
