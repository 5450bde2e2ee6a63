package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const robots = `User-agent: *
Disallow: /private
Allow: /private/open
Sitemap: https://example.com/sitemap.xml
Crawl-delay: x
Sitemap: /relative.xml
`

func runCmd(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/robots.txt" {
			http.NotFound(w, r)
			return
		}
		w.Write([]byte(robots))
	}))
	defer srv.Close()
	for i, a := range args {
		args[i] = strings.ReplaceAll(a, "SERVER", srv.URL)
	}
	var out, errOut bytes.Buffer
	code := run(context.Background(), args, strings.NewReader(stdin), &out, &errOut, srv.Client())
	return code, out.String(), errOut.String()
}

func TestCheck(t *testing.T) {
	file := filepath.Join(t.TempDir(), "robots.txt")
	if err := os.WriteFile(file, []byte(robots), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args     []string
		stdin    string
		code     int
		contains []string
	}{
		{[]string{"check", "-robots", file, "https://example.com/private/x"}, "", 1,
			[]string{"https://example.com/private/x: disallowed by line 2: disallow: /private"}},
		{[]string{"check", "-robots", "-", "https://example.com/private/open"}, robots, 0,
			[]string{"allowed by line 3: allow: /private/open"}},
		{[]string{"check", "SERVER/private/x", "SERVER/public"}, "", 1,
			[]string{"/private/x: disallowed by line 2", "/public: allowed: no rule matched"}},
		{[]string{"sitemaps", file}, "", 0, []string{"https://example.com/sitemap.xml"}},
		{[]string{"sitemaps", "SERVER/anything"}, "", 0, []string{"https://example.com/sitemap.xml", "/relative.xml"}},
		{[]string{"lint", file}, "", 1, []string{"line 5"}},
	}
	for _, tt := range tests {
		code, out, errOut := runCmd(t, tt.stdin, tt.args...)
		if code != tt.code {
			t.Errorf("run(%q) = %d, want %d (stdout %q, stderr %q)", tt.args, code, tt.code, out, errOut)
		}
		for _, want := range tt.contains {
			if !strings.Contains(out, want) {
				t.Errorf("run(%q) printed %q, want it to contain %q", tt.args, out, want)
			}
		}
	}
}

func TestUsage(t *testing.T) {
	for _, args := range [][]string{nil, {"frobnicate"}, {"check"}, {"lint"}, {"check", "-nope"}} {
		if code, _, errOut := runCmd(t, "", args...); code != 2 || errOut == "" {
			t.Errorf("run(%q) = %d with stderr %q, want 2 and a usage message", args, code, errOut)
		}
	}
}

// check takes absolute http and https URLs with a host only: Allowed reads
// "example.com/private" as Google does, with "example.com" as the host,
// but a command line that leaves out the scheme is a mistake to report.
func TestCheckBadURL(t *testing.T) {
	file := filepath.Join(t.TempDir(), "robots.txt")
	if err := os.WriteFile(file, []byte(robots), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		bad  string // the argument the message must name
		hint string // more the message must say
	}{
		{[]string{"check", "-robots", file, "example.com/private"}, "example.com/private", "https://example.com/private"},
		{[]string{"check", "-robots", file, "https://example.com/ok", "example.com:8080/private"}, "example.com:8080/private", ""},
		{[]string{"check", "-robots", file, "/private"}, "/private", ""},
		{[]string{"check", "-robots", file, "//example.com/private"}, "//example.com/private", ""},
		{[]string{"check", "-robots", file, "ftp://example.com/private"}, "ftp://example.com/private", ""},
		{[]string{"check", "-robots", file, "mailto:bot@example.com"}, "mailto:bot@example.com", ""},
		{[]string{"check", "-robots", file, "https:///private"}, "https:///private", ""},
		{[]string{"check", "-robots", file, "http://:80/private"}, "http://:80/private", ""},
		{[]string{"check", "-robots", file, "https://example.com/%zz"}, "https://example.com/%zz", ""},
		{[]string{"check", "SERVER/public", "example.com/private"}, "example.com/private", ""},
		// A file where a URL belongs.
		{[]string{"check", file}, file, "-robots"},
		{[]string{"check", "-robots", file, file}, file, "is a file"},
	} {
		code, out, errOut := runCmd(t, "", c.args...)
		if code != 2 {
			t.Errorf("run(%q) = %d, want 2 (stdout %q, stderr %q)", c.args, code, out, errOut)
		}
		if out != "" {
			t.Errorf("run(%q) printed %q, want nothing before the usage error", c.args, out)
		}
		if !strings.Contains(errOut, strconv.Quote(c.bad)) || !strings.Contains(errOut, c.hint) {
			t.Errorf("run(%q) wrote %q to stderr, want it to name %q and say %q", c.args, errOut, c.bad, c.hint)
		}
	}
}
