package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestCheckSiteAndStdin: a single argument that is a site's root (or its
// robots.txt) is the ROBOTS when standard input holds URLs; with nothing
// on standard input it is the URL checked; any other URL argument is the
// URL checked, whatever standard input holds.
func TestCheckSiteAndStdin(t *testing.T) {
	for _, tt := range []runCase{
		{args: []string{"check", "SERVER/"}, stdin: "https://example.com/private/x\n\nhttps://example.com/public\n", code: 1,
			contains: []string{"DISALLOWED https://example.com/private/x: by line 2", `ALLOWED    https://example.com/public: no rule matched in group "*"`},
			absent:   []string{"SERVER/: "}},
		{args: []string{"check", "SERVER"}, stdin: "  \nhttps://example.com/private/x\n", code: 1,
			contains: []string{"DISALLOWED https://example.com/private/x: by line 2"}},
		{args: []string{"check", "SERVER/robots.txt"}, stdin: "https://example.com/public\n", code: 0,
			contains: []string{"ALLOWED    https://example.com/public: no rule matched"}},
		// Nothing on standard input: the argument is the URL checked.
		{args: []string{"check", "SERVER/"}, stdin: "", code: 0,
			contains: []string{`ALLOWED    SERVER/: no rule matched in group "*"`}},
		{args: []string{"check", "SERVER/"}, stdin: " \n\n", code: 0,
			contains: []string{`ALLOWED    SERVER/: no rule matched in group "*"`}},
		// Not a site's root: checked as a URL, as always.
		{args: []string{"check", "SERVER/private/x"}, stdin: "https://example.com/public\n", code: 1,
			contains: []string{"DISALLOWED SERVER/private/x"}, absent: []string{"example.com"}},
		{args: []string{"check", "SERVER/?q=1"}, stdin: "https://example.com/public\n", code: 0,
			contains: []string{"ALLOWED    SERVER/?q=1"}, absent: []string{"example.com"}},
	} {
		tt.check(t)
	}
}

// TestBinaryCheckSiteFromPipe: echo URL | robotstxt check http://site/,
// through the built command, whose standard input is a pipe.
func TestBinaryCheckSiteFromPipe(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			w.Write([]byte("User-agent: *\nDisallow: /private\n"))
		}
	}))
	defer srv.Close()
	code, out, errOut := runBinary(t, srv.URL+"/private/a\n"+srv.URL+"/b\n", "check", "-allow-private", srv.URL+"/")
	if code != 1 || !strings.Contains(out, "DISALLOWED "+srv.URL+"/private/a: by line 2") || !strings.Contains(out, "ALLOWED    "+srv.URL+"/b:") {
		t.Errorf("echo URLs | check SITE/ = %d, %q (stderr %q); want both URLs of standard input checked, exit 1", code, out, errOut)
	}
	code, out, errOut = runBinary(t, "", "check", "-allow-private", srv.URL+"/")
	if code != 0 || !strings.Contains(out, "ALLOWED    "+srv.URL+"/:") {
		t.Errorf("check SITE/ < /dev/null-like empty pipe = %d, %q (stderr %q); want SITE/ itself checked", code, out, errOut)
	}
}

// TestCheckCut: a robots.txt past 500 KiB is read up to it, as crawlers
// do, and check says so once per file (a file: where it was cut; a fetched
// one: that it reached the limit), and sets "cut" with -json.
func TestCheckCut(t *testing.T) {
	big := "User-agent: *\nDisallow: /a\n" + strings.Repeat("# filler line of comment text\n", 18_000) + "Disallow: /late\n"
	file := writeFile(t, "robots.txt", big)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(big)) }))
	defer srv.Close()
	for _, tt := range []runCase{
		{args: []string{"check", file, "https://example.com/late", "https://example.com/a"}, code: 1,
			contains: []string{"ALLOWED    https://example.com/late: no rule matched", "DISALLOWED https://example.com/a"},
			stderr:   []string{file + ":", "only the first 512000 bytes (500 KiB) are read, so line", "(RFC 9309 §2.5)"}},
		{args: []string{"check", "-json", file, "https://example.com/late"}, code: 0, contains: []string{`"cut":true`}},
		{args: []string{"check", "-robots", srv.URL, "https://example.com/late", "https://example.com/b"}, code: 0,
			stderr: []string{srv.URL + "/robots.txt reached 500 KiB, past which crawlers read nothing (RFC 9309 §2.5)"}},
		{args: []string{"check", "SERVER/a"}, code: 0, absent: []string{"cut", "500 KiB"}},
	} {
		tt.check(t)
		if tt.args[1] == "-robots" {
			_, _, errOut := runCmd(t, "", tt.args...)
			if n := strings.Count(errOut, "reached 500 KiB"); n != 1 {
				t.Errorf("run(%q) said %d times that robots.txt was cut, want once: %q", tt.args, n, errOut)
			}
		}
	}
}

// TestEmptyAgent: -agent "" is refused, not silently read as "*".
func TestEmptyAgent(t *testing.T) {
	for _, args := range [][]string{
		{"check", "-agent", "", "SERVER/a"},
		{"check", "-agent", " ", "SERVER/a"},
		{"sitemaps", "-agent", "", "SERVER"},
	} {
		runCase{args: args, code: 2, stderr: []string{"-agent is empty"}, absent: []string{"ALLOWED"}}.check(t)
	}
}
