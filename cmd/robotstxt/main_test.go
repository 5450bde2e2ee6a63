package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/robotsmw/robotsmw/internal/loadsite"
)

const robots = `User-agent: *
Disallow: /private
Allow: /private/open
Sitemap: https://example.com/sitemap.xml
Crawl-delay: x
Sitemap: /relative.xml
`

// sites are the test's loopback servers, by the token that stands for
// their URL in arguments:
//
//	SERVER    serves robots
//	NOTFOUND  answers 404 to everything
//	HTML      serves an html page as robots.txt
//	EMPTY     serves an empty robots.txt
//	DOWN      answers 503 to everything
//	REDIR     redirects robots.txt to SERVER's
//	HANG      never answers (until the test ends)
//	WALK      a site with sitemaps: see walkSite
type sites map[string]string

var siteTokens = []string{"SERVER", "NOTFOUND", "HTML", "EMPTY", "DOWN", "REDIR", "HANG", "WALK"}

func newSites(t *testing.T) (sites, *http.Client) {
	t.Helper()
	s := sites{}
	serve := func(name string, h http.HandlerFunc) *httptest.Server {
		srv := httptest.NewServer(h)
		t.Cleanup(srv.Close)
		s[name] = srv.URL
		return srv
	}
	text := func(body string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/robots.txt" {
				http.NotFound(w, r)
				return
			}
			w.Write([]byte(body))
		}
	}
	first := serve("SERVER", text(robots))
	serve("NOTFOUND", http.NotFound)
	serve("HTML", text("<!DOCTYPE html>\n<html><head><title>Welcome</title></head><body>Hello</body></html>\n"))
	serve("EMPTY", text(""))
	serve("DOWN", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "maintenance", http.StatusServiceUnavailable)
	})
	serve("REDIR", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, s["SERVER"]+"/robots.txt", http.StatusMovedPermanently)
	})
	hang := make(chan struct{})
	serve("HANG", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-hang:
		}
	})
	t.Cleanup(func() { close(hang) }) // before the servers close: cleanups run last first
	serve("WALK", walkSite)
	return s, first.Client()
}

// walkSite serves robots.txt, a sitemap index and the sitemaps it lists:
// read are the index, a.xml and b.xml (missing.xml fails); passed on are
// /p1, /p2 and /p4; dropped are an out-of-scope URL, a disallowed one and
// a duplicate. other.xml, which only a ROBOTS file lists, lists /q1.
func walkSite(w http.ResponseWriter, r *http.Request) {
	site := "http://" + r.Host
	urlset := func(locs ...string) string {
		var b strings.Builder
		b.WriteString(`<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`)
		for _, l := range locs {
			fmt.Fprintf(&b, "<url><loc>%s</loc></url>", l)
		}
		b.WriteString("</urlset>")
		return b.String()
	}
	switch r.URL.Path {
	case "/robots.txt":
		fmt.Fprint(w, "User-agent: *\nDisallow: /private\nSitemap: /index.xml\n")
	case "/index.xml":
		fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`+
			`<sitemap><loc>%[1]s/a.xml</loc></sitemap><sitemap><loc>%[1]s/b.xml</loc></sitemap><sitemap><loc>%[1]s/missing.xml</loc></sitemap>`+
			`</sitemapindex>`, site)
	case "/a.xml":
		fmt.Fprint(w, urlset(site+"/p1", site+"/p2", "https://other.example/p3", site+"/private/x"))
	case "/b.xml":
		fmt.Fprint(w, urlset(site+"/p1", site+"/p4"))
	case "/other.xml":
		fmt.Fprint(w, urlset(site+"/q1"))
	default:
		http.NotFound(w, r)
	}
}

// expand replaces the site tokens in args with the sites' URLs.
func (s sites) expand(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		for _, tok := range siteTokens {
			a = strings.ReplaceAll(a, tok, s[tok])
		}
		out[i] = a
	}
	return out
}

// runCmd runs the command with the sites' tokens replaced and returns its
// exit status, standard output and standard error.
func runCmd(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	s, client := newSites(t)
	var out, errOut bytes.Buffer
	code := run(context.Background(), s.expand(args), strings.NewReader(stdin), &out, &errOut, client)
	return code, s.collapse(out.String()), s.collapse(errOut.String())
}

// collapse replaces the sites' URLs in output with their tokens, so that
// tests can name them.
func (s sites) collapse(out string) string {
	toks := slices.Clone(siteTokens)
	// The longest URL first, in case one is a prefix of another.
	slices.SortFunc(toks, func(a, b string) int { return len(s[b]) - len(s[a]) })
	for _, tok := range toks {
		out = strings.ReplaceAll(out, s[tok], tok)
	}
	return out
}

func writeFile(t *testing.T, name, body string) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

type runCase struct {
	args     []string
	stdin    string
	code     int
	contains []string // in stdout
	stderr   []string // in stderr
	absent   []string // in neither
}

func (tt runCase) check(t *testing.T) {
	t.Helper()
	code, out, errOut := runCmd(t, tt.stdin, tt.args...)
	if code != tt.code {
		t.Errorf("run(%q) exit = %d, want %d (stdout %q, stderr %q)", tt.args, code, tt.code, out, errOut)
	}
	for _, want := range tt.contains {
		if !strings.Contains(out, want) {
			t.Errorf("run(%q) stdout = %q, want it to contain %q", tt.args, out, want)
		}
	}
	for _, want := range tt.stderr {
		if !strings.Contains(errOut, want) {
			t.Errorf("run(%q) stderr = %q, want it to contain %q", tt.args, errOut, want)
		}
	}
	for _, no := range tt.absent {
		if strings.Contains(out, no) || strings.Contains(errOut, no) {
			t.Errorf("run(%q) printed %q (stderr %q), want no %q", tt.args, out, errOut, no)
		}
	}
}

func TestCheck(t *testing.T) {
	file := writeFile(t, "robots.txt", robots)
	agents := writeFile(t, "agents.txt", "User-agent: Googlebot\nDisallow: /g\n\nUser-agent: other\nDisallow: /\n")
	for _, tt := range []runCase{
		{args: []string{"check", "-robots", file, "https://example.com/private/x"}, code: 1,
			contains: []string{`DISALLOWED https://example.com/private/x: by line 2: disallow: /private (group "*")`}},
		// A first argument that is a file or "-" is the ROBOTS.
		{args: []string{"check", file, "https://example.com/private/x", "https://example.com/public"}, code: 1,
			contains: []string{"DISALLOWED https://example.com/private/x: by line 2", `ALLOWED    https://example.com/public: no rule matched in group "*"`}},
		{args: []string{"check", "-", "https://example.com/private/open"}, stdin: robots, code: 0,
			contains: []string{`ALLOWED    https://example.com/private/open: by line 3: allow: /private/open (group "*")`}},
		{args: []string{"check", "-robots", "-", "https://example.com/private/open"}, stdin: robots, code: 0,
			contains: []string{"ALLOWED    https://example.com/private/open: by line 3"}},
		// Flags may follow the arguments.
		{args: []string{"check", agents, "https://example.com/g", "-agent", "Googlebot/2.1"}, code: 1,
			contains: []string{`DISALLOWED https://example.com/g: by line 2: disallow: /g (group "Googlebot")`}},
		// A browser-compatible bot User-Agent picks its bot's group.
		{args: []string{"check", "-agent", "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)", agents, "https://example.com/g"}, code: 1,
			contains: []string{`DISALLOWED https://example.com/g: by line 2: disallow: /g (group "Googlebot")`}},
		{args: []string{"check", "-agent", "Bingbot", agents, "https://example.com/g"}, code: 0,
			contains: []string{`ALLOWED    https://example.com/g: no group names "Bingbot" and there is no "*" group, so everything is allowed`}},
		{args: []string{"check", file, "https://example.com/robots.txt"}, code: 0,
			contains: []string{"ALLOWED    https://example.com/robots.txt: /robots.txt itself is always allowed"}},
		{args: []string{"check", "-", "https://example.com/a"}, stdin: "", code: 0,
			contains: []string{"ALLOWED    https://example.com/a: <stdin> is empty, so everything is allowed"}},
		// Each URL's own robots.txt, fetched.
		{args: []string{"check", "SERVER/private/x", "SERVER/public"}, code: 1,
			contains: []string{"DISALLOWED SERVER/private/x: by line 2", `ALLOWED    SERVER/public: no rule matched in group "*"`}},
		{args: []string{"check", "NOTFOUND/a"}, code: 0,
			contains: []string{"ALLOWED    NOTFOUND/a: NOTFOUND/robots.txt answered 404 Not Found, so everything is allowed"}},
		{args: []string{"check", "HTML/a"}, code: 0,
			contains: []string{"ALLOWED    HTML/a: HTML/robots.txt is an html page, not a robots.txt, so everything is allowed"}},
		{args: []string{"check", "EMPTY/a"}, code: 0,
			contains: []string{"ALLOWED    EMPTY/a: EMPTY/robots.txt is empty, so everything is allowed"}},
		{args: []string{"check", "DOWN/a", "SERVER/public"}, code: 2, // the verdict is RFC 9309's, not the site's
			contains: []string{"DISALLOWED DOWN/a: DOWN/robots.txt is unreachable (answered 503 Service Unavailable), so everything is disallowed",
				"ALLOWED    SERVER/public"}},
		{args: []string{"check", "REDIR/private/x"}, code: 1,
			contains: []string{"DISALLOWED REDIR/private/x: by line 2: disallow: /private"}},
		// A ROBOTS URL: its site's robots.txt applies to every URL.
		{args: []string{"check", "-robots", "SERVER/any/page", "https://example.com/private/x", "https://example.org/public"}, code: 1,
			contains: []string{"DISALLOWED https://example.com/private/x: by line 2", "ALLOWED    https://example.org/public: no rule matched"}},
		{args: []string{"check", "-robots", "NOTFOUND", "https://example.com/private/x"}, code: 0,
			contains: []string{"answered 404 Not Found, so everything is allowed"}},
		{args: []string{"check", "-robots", "example.com", "https://example.com/a"}, code: 2,
			stderr: []string{`robotstxt: check: open example.com: no such file or directory (did you mean "https://example.com"?)`}},
	} {
		tt.check(t)
	}
}

// check takes absolute http and https URLs with a host only: Allowed reads
// "example.com/private" as Google does, with "example.com" as the host,
// but a command line that leaves out the scheme is a mistake to report.
func TestCheckBadURL(t *testing.T) {
	file := writeFile(t, "robots.txt", robots)
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
		{[]string{"check", file, "example.com/private"}, "example.com/private", "https://example.com/private"},
		// A file where a URL belongs.
		{[]string{"check", file}, file, "missing URL"},
		{[]string{"check", "-robots", file, file}, file, "is a file"},
		{[]string{"check", file, file}, file, "only one ROBOTS"},
	} {
		code, out, errOut := runCmd(t, "", c.args...)
		if code != 2 {
			t.Errorf("run(%q) exit = %d, want 2 (stdout %q, stderr %q)", c.args, code, out, errOut)
		}
		if out != "" {
			t.Errorf("run(%q) printed %q, want nothing before the usage error", c.args, out)
		}
		if !strings.HasPrefix(errOut, "robotstxt: check: ") || !strings.Contains(errOut, strconv.Quote(c.bad)) || !strings.Contains(errOut, c.hint) {
			t.Errorf("run(%q) stderr = %q, want \"robotstxt: check: \" naming %q and saying %q", c.args, errOut, c.bad, c.hint)
		}
	}
}

// lintLine is an output line of lint: FILE:LINE: severity: message.
var lintLine = regexp.MustCompile(`^(.+?):(\d+): (error|warning): .+ \[[a-z0-9-]+\]$`)

func TestLint(t *testing.T) {
	file := writeFile(t, "robots.txt", robots+"Unicorns: yes\n")
	clean := writeFile(t, "clean.txt", "User-agent: *\nDisallow: /private\n")
	warned := writeFile(t, "warned.txt", "Foo: bar\nUser-agent: *\nDisallow: /a\n")
	html := writeFile(t, "page.html", "<html><body>Not here</body></html>\n")
	for _, tt := range []runCase{
		{args: []string{"lint", file}, code: 1,
			contains: []string{file + `:5: error: crawl-delay "x" is not a non-negative number`, file + ":6: error: sitemap url", file + `:7: warning: unknown directive "Unicorns"`},
			stderr:   []string{file + ": 2 errors, 1 warning\n"}},
		{args: []string{"lint", "-"}, stdin: robots, code: 1,
			contains: []string{"<stdin>:5: error: "}, stderr: []string{"<stdin>: 2 errors, 0 warnings\n"}},
		{args: []string{"lint", clean}, code: 0, stderr: []string{clean + ": no problems found\n"}},
		{args: []string{"lint", warned}, code: 0,
			contains: []string{warned + ":1: warning: unknown directive \"Foo\""}, stderr: []string{"0 errors, 1 warning"}},
		// A problem of the whole file has no line.
		{args: []string{"lint", html}, code: 1, contains: []string{html + ": error: file looks like an html page"}},
		// A URL is shown as its robots.txt URL, after redirects.
		{args: []string{"lint", "SERVER/some/page"}, code: 1,
			contains: []string{"SERVER/robots.txt:5: error: "}, stderr: []string{"SERVER/robots.txt: 2 errors"}},
		{args: []string{"lint", "REDIR"}, code: 1, contains: []string{"SERVER/robots.txt:5: error: "}, absent: []string{"REDIR/robots.txt:"}},
		{args: []string{"lint", "NOTFOUND"}, code: 2, stderr: []string{"robotstxt: lint: NOTFOUND/robots.txt answered 404 Not Found"}},
		{args: []string{"lint", filepath.Join(t.TempDir(), "none.txt")}, code: 2, stderr: []string{"robotstxt: lint: open ", "no such file"}},
	} {
		tt.check(t)
	}
}

// TestLintOutput checks the form of every line: FILE:LINE: severity:
// message [code], sorted by line.
func TestLintOutput(t *testing.T) {
	body := "Foo: bar\nUser-agent: *\nDisallow: fish\nSitemap: /s.xml\nUser-agent: *\nBar: baz\nSitemap: https://x.test/a/\nQux: 1\n"
	file := writeFile(t, "robots.txt", body)
	code, out, errOut := runCmd(t, "", "lint", file)
	if code != 1 {
		t.Errorf("run(lint %q) exit = %d, want 1 (stderr %q)", file, code, errOut)
	}
	var lines []int
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		m := lintLine.FindStringSubmatch(l)
		if m == nil || m[1] != file {
			t.Errorf("run(lint %q) printed %q, want FILE:LINE: severity: message [code]", file, l)
			continue
		}
		n, _ := strconv.Atoi(m[2])
		lines = append(lines, n)
	}
	if !slices.IsSorted(lines) {
		t.Errorf("run(lint %q) printed lines %v, want them sorted", file, lines)
	}
	// Every unknown directive is reported: before the first group, between
	// groups, after a Sitemap line.
	for _, n := range []int{1, 6, 8} {
		if !slices.Contains(lines, n) {
			t.Errorf("run(lint %q) reported lines %v, want line %d", file, lines, n)
		}
	}
}

func TestSitemaps(t *testing.T) {
	file := writeFile(t, "robots.txt", robots+"Sitemap: sitemap-2.xml\nSitemap: ftp://example.com/s.xml\nSitemap: https://example.com/\xff.xml\n")
	none := writeFile(t, "none.txt", "User-agent: *\nDisallow: /x\n")
	sitemapFile := writeFile(t, "sitemap.xml", "<urlset><url><loc>https://example.com/a</loc></url></urlset>")
	for _, tt := range []runCase{
		{args: []string{"sitemaps", none}, code: 0, stderr: []string{"none.txt: no Sitemap lines\n"}},
		{args: []string{"sitemaps", sitemapFile}, code: 0, stderr: []string{"sitemap.xml: no Sitemap lines (the file is a sitemap, not a robots.txt"}},
		{args: []string{"sitemaps", file}, code: 0, contains: []string{"https://example.com/sitemap.xml\n"},
			stderr: []string{`relative Sitemap line "/relative.xml" left out; give -base URL`, `"ftp://example.com/s.xml" left out: not an http or https URL`,
				`Sitemap line "https://example.com/\xff.xml" left out: not UTF-8`},
			absent: []string{"relative.xml\n", "%FF"}},
		{args: []string{"sitemaps", "-base", "https://www.example.com/robots.txt", file}, code: 0,
			contains: []string{"https://example.com/sitemap.xml\nhttps://www.example.com/relative.xml\nhttps://www.example.com/sitemap-2.xml\n"}},
		{args: []string{"sitemaps", "-", "-base", "https://www.example.com"}, stdin: robots, code: 0,
			contains: []string{"https://www.example.com/relative.xml\n"}},
		// Fetched: relative lines resolve against the robots.txt URL, after
		// redirects.
		{args: []string{"sitemaps", "SERVER/anything"}, code: 0, contains: []string{"https://example.com/sitemap.xml\nSERVER/relative.xml\n"}},
		{args: []string{"sitemaps", "REDIR"}, code: 0, contains: []string{"SERVER/relative.xml\n"}},
		{args: []string{"sitemaps", "NOTFOUND"}, code: 0, stderr: []string{"NOTFOUND/robots.txt answered 404 Not Found: no robots.txt"}},
		{args: []string{"sitemaps", "DOWN"}, code: 2, stderr: []string{"robotstxt: sitemaps: DOWN/robots.txt is unreachable (answered 503 Service Unavailable)"}},
	} {
		tt.check(t)
	}
}

func TestSitemapsWalk(t *testing.T) {
	file := writeFile(t, "robots.txt", "User-agent: *\nDisallow: /private\nSitemap: /other.xml\n")
	summary := "sitemap files read: 3\npage URLs: 3\nfailed sitemaps: 1\n  WALK/missing.xml: answered 404 Not Found\n" +
		"dropped URLs: 3 (scope 1, robots 1, duplicate 1)\nskipped sitemaps: 0\n"
	for _, tt := range []runCase{
		{args: []string{"sitemaps", "-walk", "WALK"}, code: 1, contains: []string{summary}, absent: []string{"\r"}},
		{args: []string{"sitemaps", "-walk", "-urls", "WALK"}, code: 1,
			contains: []string{"WALK/p1\n", "WALK/p2\n", "WALK/p4\n"}, stderr: []string{summary}, absent: []string{"private", "other.example"}},
		// A file stands for the site -base names.
		{args: []string{"sitemaps", "-walk", "-urls", "-base", "WALK", file}, code: 0,
			contains: []string{"WALK/q1\n"}, stderr: []string{"sitemap files read: 1\npage URLs: 1\nfailed sitemaps: 0\n"}},
	} {
		tt.check(t)
	}
}

// A ttyBuffer is a buffer that says it is a terminal.
type ttyBuffer struct{ bytes.Buffer }

func (*ttyBuffer) Stat() (os.FileInfo, error) { return ttyInfo{}, nil }

type ttyInfo struct{ os.FileInfo }

func (ttyInfo) Mode() os.FileMode { return os.ModeDevice | os.ModeCharDevice | 0o620 }

func TestWalkProgress(t *testing.T) {
	s, client := newSites(t)
	args := s.expand([]string{"sitemaps", "-walk", "WALK"})
	var out bytes.Buffer
	var tty ttyBuffer
	if code := run(context.Background(), args, strings.NewReader(""), &out, &tty, client); code != 1 {
		t.Errorf("run(%q) exit = %d, want 1", args, code)
	}
	if !strings.HasPrefix(tty.String(), "\rwalking: ") || !strings.HasSuffix(tty.String(), "\r") {
		t.Errorf("run(%q) wrote %q to a terminal, want progress lines redrawn with \\r, erased at the end", args, tty.String())
	}
	for _, l := range strings.Split(tty.String(), "\r") {
		if len([]rune(l)) > maxProgress {
			t.Errorf("run(%q) drew %q, longer than %d", args, l, maxProgress)
		}
	}
	if strings.Contains(out.String(), "\r") {
		t.Errorf("run(%q) stdout = %q, want no progress in it", args, out.String())
	}
}

func TestIsTerminal(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "f"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, c := range []struct {
		name string
		w    interface{ Write([]byte) (int, error) }
		want bool
	}{
		{"buffer", &bytes.Buffer{}, false},
		{"regular file", f, false},
		{"terminal", &ttyBuffer{}, true},
	} {
		if got := isTerminal(c.w); got != c.want {
			t.Errorf("isTerminal(%s) = %v, want %v", c.name, got, c.want)
		}
	}
}

// TestTimeout runs every command that fetches against a server that never
// answers: each gives up after -timeout.
func TestTimeout(t *testing.T) {
	for _, tt := range []runCase{
		{args: []string{"check", "-timeout", "50ms", "HANG/a"}, code: 2,
			contains: []string{"DISALLOWED HANG/a: HANG/robots.txt is unreachable (no answer within 50ms (-timeout)), so everything is disallowed"}},
		{args: []string{"check", "-timeout", "50ms", "-robots", "HANG", "https://example.com/a"}, code: 2,
			contains: []string{"DISALLOWED https://example.com/a: HANG/robots.txt is unreachable (no answer within 50ms"}},
		{args: []string{"lint", "-timeout", "50ms", "HANG"}, code: 2,
			stderr: []string{"robotstxt: lint: HANG/robots.txt: no answer within 50ms (-timeout)"}},
		{args: []string{"sitemaps", "-timeout", "50ms", "HANG"}, code: 2,
			stderr: []string{"robotstxt: sitemaps: HANG/robots.txt is unreachable (no answer within 50ms"}},
		// The walk lists robots.txt among the failed files, and exits
		// 2 as every command does when a robots.txt could not be read.
		{args: []string{"sitemaps", "-walk", "-timeout", "50ms", "HANG"}, code: 2,
			contains: []string{"sitemap files read: 0\n", "failed sitemaps: 1\n  HANG/robots.txt: no answer within 50ms (-timeout)\n"}},
	} {
		tt.check(t)
	}
}

// TestInterrupt ends the run's context while a fetch waits for a server
// that never answers, as Ctrl-C does: the run ends at once, with 130.
func TestInterrupt(t *testing.T) {
	for _, args := range [][]string{
		{"check", "SRV/a"},
		{"check", "-robots", "SRV", "https://example.com/a"},
		{"lint", "SRV"},
		{"sitemaps", "SRV"},
		{"sitemaps", "-walk", "SRV"},
	} {
		srv, arrived := hangingServer(t)
		args := slices.Clone(args)
		for i := range args {
			args[i] = strings.ReplaceAll(args[i], "SRV", srv.URL)
		}
		ctx, cancel := context.WithCancel(context.Background())
		go func() {
			<-arrived
			cancel()
		}()
		var out, errOut bytes.Buffer
		code := run(ctx, args, strings.NewReader(""), &out, &errOut, srv.Client())
		cancel()
		if code != exitInterrupted || !strings.Contains(errOut.String(), "interrupted") {
			t.Errorf("run(%q) interrupted: exit = %d, stderr %q; want %d and \"interrupted\"", args, code, errOut.String(), exitInterrupted)
		}
		if slices.Contains(args, "-walk") && !strings.Contains(out.String()+errOut.String(), "walk interrupted: ") {
			t.Errorf("run(%q) interrupted: the summary %q does not say the walk was interrupted", args, out.String())
		}
	}
}

func TestUsageErrors(t *testing.T) {
	file := writeFile(t, "robots.txt", robots)
	for _, c := range []struct {
		args []string
		msg  string // the start of standard error
	}{
		{nil, "robotstxt: missing command\n"},
		{[]string{"frobnicate"}, `robotstxt: unknown command "frobnicate"`},
		{[]string{"-x"}, `robotstxt: unknown flag "-x"`},
		{[]string{"help", "frobnicate"}, `robotstxt: unknown command "frobnicate"`},
		{[]string{"check"}, "robotstxt: check: missing URL, as arguments or on standard input\n"},
		{[]string{"check", "-nope"}, "robotstxt: check: flag provided but not defined: -nope"},
		{[]string{"check", "-timeout", "0s", "https://example.com/"}, "robotstxt: check: -timeout must be positive, got 0s"},
		{[]string{"check", "-timeout", "soon", "https://example.com/"}, `robotstxt: check: invalid value "soon" for flag -timeout`},
		{[]string{"lint"}, "robotstxt: lint: missing ROBOTS\n"},
		{[]string{"lint", "-", "-"}, "robotstxt: lint: standard input (-) can be given once, got 2\n"},
		{[]string{"lint", "-agent", "x", file}, "robotstxt: lint: flag provided but not defined: -agent"},
		{[]string{"lint", "-robots", file}, "robotstxt: lint: flag provided but not defined: -robots"},
		{[]string{"lint", "https://"}, `robotstxt: lint: "https://" has no host`},
		{[]string{"sitemaps"}, "robotstxt: sitemaps: missing SITE or ROBOTS\n"},
		{[]string{"sitemaps", "-urls", file}, "robotstxt: sitemaps: -urls needs -walk\n"},
		{[]string{"sitemaps", "-walk", file}, "robotstxt: sitemaps: -walk with a ROBOTS file needs -base"},
		{[]string{"sitemaps", "-base", "example.com", file}, `robotstxt: sitemaps: -base "example.com" is not an absolute http or https URL`},
		{[]string{"sitemaps", "-base", "https://example.com", "SERVER"}, "robotstxt: sitemaps: -base is for a ROBOTS file"},
		{[]string{"sitemaps", "-robots", file}, "robotstxt: sitemaps: flag provided but not defined: -robots"},
	} {
		code, out, errOut := runCmd(t, "", c.args...)
		if code != 2 || out != "" {
			t.Errorf("run(%q) exit = %d, stdout %q; want 2 and nothing", c.args, code, out)
		}
		if !strings.HasPrefix(errOut, c.msg) {
			t.Errorf("run(%q) stderr = %q, want it to start with %q", c.args, errOut, c.msg)
		}
		if !strings.Contains(errOut, "usage:") || !strings.Contains(errOut, `run "robotstxt help`) {
			t.Errorf("run(%q) stderr = %q, want a short usage hint", c.args, errOut)
		}
	}
}

func TestHelp(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string // the start of standard output
	}{
		{[]string{"-h"}, "robotstxt checks URLs"},
		{[]string{"-help"}, "robotstxt checks URLs"},
		{[]string{"--help"}, "robotstxt checks URLs"},
		{[]string{"help"}, "robotstxt checks URLs"},
		{[]string{"help", "-h"}, "robotstxt checks URLs"},
		{[]string{"help", "check"}, "usage: robotstxt check "},
		{[]string{"check", "-h"}, "usage: robotstxt check "},
		{[]string{"check", "--help"}, "usage: robotstxt check "},
		{[]string{"check", "https://example.com/", "-help"}, "usage: robotstxt check "},
		{[]string{"help", "lint"}, "usage: robotstxt lint "},
		{[]string{"lint", "-h"}, "usage: robotstxt lint "},
		{[]string{"help", "sitemaps"}, "usage: robotstxt sitemaps "},
		{[]string{"sitemaps", "--help"}, "usage: robotstxt sitemaps "},
	} {
		code, out, errOut := runCmd(t, "", c.args...)
		if code != 0 || errOut != "" {
			t.Errorf("run(%q) exit = %d, stderr %q; want 0 and nothing", c.args, code, errOut)
		}
		if !strings.HasPrefix(out, c.want) {
			t.Errorf("run(%q) stdout = %q, want it to start with %q", c.args, out, c.want)
		}
	}
	code, out, _ := runCmd(t, "", "help")
	for _, cmd := range commands() {
		if code != 0 || !strings.Contains(out, "robotstxt "+cmd.name+" "+cmd.synopsis) {
			t.Errorf("run(help) = %d, %q; want 0 and the synopsis of %s", code, out, cmd.name)
		}
	}
}

// TestHelpFlags checks that each command's usage lists exactly the flags
// that command accepts.
func TestHelpFlags(t *testing.T) {
	flagLine := regexp.MustCompile(`(?m)^  -([a-z-]+)`)
	for _, c := range commands() {
		var accepted []string
		c.flagSet().VisitAll(func(f *flag.Flag) { accepted = append(accepted, f.Name) })
		code, out, _ := runCmd(t, "", c.name, "-h")
		var listed []string
		for _, m := range flagLine.FindAllStringSubmatch(out, -1) {
			listed = append(listed, m[1])
		}
		if code != 0 || !slices.Equal(listed, accepted) {
			t.Errorf("run(%s -h) = %d, lists flags %q, want 0 and %q", c.name, code, listed, accepted)
		}
		for _, name := range listed {
			if code, _, errOut := runCmd(t, "", c.name, "-"+name+"=x"); strings.Contains(errOut, "not defined") {
				t.Errorf("run(%s -%s=x) = %d, %q: a flag the usage lists is rejected", c.name, name, code, errOut)
			}
		}
	}
}

func TestParseInterspersed(t *testing.T) {
	for _, c := range []struct {
		args  []string
		pos   []string
		agent string
	}{
		{[]string{"a", "-agent", "x", "b"}, []string{"a", "b"}, "x"},
		{[]string{"-", "-agent=x"}, []string{"-"}, "x"},
		{[]string{"a", "--", "-agent", "x"}, []string{"a", "-agent", "x"}, ""},
		{nil, nil, ""},
	} {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		agent := fs.String("agent", "", "")
		pos, err := parseInterspersed(fs, c.args)
		if err != nil || !slices.Equal(pos, c.pos) || *agent != c.agent {
			t.Errorf("parseInterspersed(%q) = %q, %v with -agent %q; want %q with %q", c.args, pos, err, *agent, c.pos, c.agent)
		}
	}
}

// sitemaps -walk goes through the Guard, so it is as
// polite as a crawl, judged at the server: one request in flight, and
// the Crawl-delay counted from the end of each response, robots.txt's
// included.
func TestWalkIsPaced(t *testing.T) {
	srv := loadsite.New(t, func(*http.Request) time.Duration { return 50 * time.Millisecond }, func(w http.ResponseWriter, r *http.Request) {
		site := "http://" + r.Host
		switch r.URL.Path {
		case "/robots.txt":
			fmt.Fprint(w, "User-agent: *\nCrawl-delay: 1.5\nSitemap: /index.xml\n")
		case "/index.xml":
			fmt.Fprintf(w, `<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><sitemap><loc>%s/a.xml</loc></sitemap></sitemapindex>`, site)
		case "/a.xml":
			fmt.Fprintf(w, `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>%s/p1</loc></url></urlset>`, site)
		default:
			http.NotFound(w, r)
		}
	})
	args := []string{"sitemaps", "-walk", srv.URL}
	var out, errOut bytes.Buffer
	if code := run(context.Background(), args, strings.NewReader(""), &out, &errOut, srv.Client()); code != 0 {
		t.Fatalf("run(%q) exit = %d, stderr %q", args, code, errOut.String())
	}
	peak, spans := srv.Result()
	if len(spans) != 3 || peak != 1 {
		t.Fatalf("server saw %d requests, peak in flight %d; want 3 (robots.txt, index, a.xml), 1", len(spans), peak)
	}
	for i := 1; i < len(spans); i++ {
		if idle := spans[i].Start.Sub(spans[i-1].End); idle < 1500*time.Millisecond {
			t.Errorf("request %d started %v after the end of the one before, want ≥ Crawl-delay 1.5s", i, idle)
		}
	}
}
