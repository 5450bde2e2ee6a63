package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The built command, shared by the tests that run it as a process.
var built struct {
	once sync.Once
	path string
	err  error
	dir  string
}

// binary builds the command once per test run and returns its path.
func binary(t *testing.T) string {
	t.Helper()
	built.once.Do(func() {
		built.dir, built.err = os.MkdirTemp("", "robotstxt-bin")
		if built.err != nil {
			return
		}
		built.path = filepath.Join(built.dir, "robotstxt")
		out, err := exec.Command("go", "build", "-o", built.path, ".").CombinedOutput()
		if err != nil {
			built.err = errors.New(string(out))
		}
	})
	if built.err != nil {
		t.Fatalf("go build: %v", built.err)
	}
	return built.path
}

func TestMain(m *testing.M) {
	code := m.Run()
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	os.Exit(code)
}

// runBinary runs the built command with stdin and returns its exit status,
// standard output and standard error.
func runBinary(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(binary(t), args...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("running %q: %v", args, err)
	}
	return cmd.ProcessState.ExitCode(), out.String(), errOut.String()
}

// jsonLines decodes every line of out into a T.
func jsonLines[T any](t *testing.T, out string) []T {
	t.Helper()
	var all []T
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		var v T
		dec := json.NewDecoder(strings.NewReader(sc.Text()))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("line %q is not a JSON object of %T: %v", sc.Text(), v, err)
		}
		all = append(all, v)
	}
	return all
}

const cleanRobots = "User-agent: *\nDisallow: /private\n\nUser-agent: mybot\nDisallow: /mine\n\nClean-param: ref&utm_source /shop/\n"

// TestBinaryCheckStdinJSON checks URLs read from standard input, with
// -json, against a robots.txt with a Clean-param line.
func TestBinaryCheckStdinJSON(t *testing.T) {
	file := writeFile(t, "robots.txt", cleanRobots)
	stdin := "# urls\nhttps://example.com/private/x\n\nhttps://example.com/shop/item?id=7&ref=mail\nnot a url\nhttps://example.com/mine\n"
	code, out, errOut := runBinary(t, stdin, "check", "-json", "-agent", "MyBot/1.0", file)
	if code != exitUsage {
		t.Errorf("check -json with a bad line on stdin: exit = %d, want %d (stderr %q)", code, exitUsage, errOut)
	}
	if !strings.Contains(errOut, "robotstxt: check: <stdin> line 5: ") {
		t.Errorf("check -json stderr = %q, want the bad line 5 named", errOut)
	}
	res := jsonLines[CheckResult](t, out)
	if len(res) != 3 {
		t.Fatalf("check -json printed %d results, want 3: %q", len(res), out)
	}
	want := []CheckResult{
		{URL: "https://example.com/private/x", Verdict: "allowed", Allowed: true, Agent: "MyBot", Robots: file, State: "parsed",
			Group: "mybot", Canonical: "https://example.com/private/x"},
		{URL: "https://example.com/shop/item?id=7&ref=mail", Verdict: "allowed", Allowed: true, Agent: "MyBot", Robots: file, State: "parsed",
			Group: "mybot", Canonical: "https://example.com/shop/item?id=7"},
		{URL: "https://example.com/mine", Verdict: "disallowed", Agent: "MyBot", Robots: file, State: "parsed",
			Group: "mybot", Rule: "disallow: /mine", Line: 5, Canonical: "https://example.com/mine"},
	}
	for i, w := range want {
		g := res[i]
		g.Reason = ""
		if g != w {
			t.Errorf("check -json result %d = %+v, want %+v", i, g, w)
		}
	}
	// Without -json, the canonical URL ends the line.
	_, out, _ = runBinary(t, "https://example.com/shop/a?ref=1&x=2\n", "check", "-robots", file)
	if want := "ALLOWED    https://example.com/shop/a?ref=1&x=2: no rule matched in group \"*\"; canonical (clean-param): https://example.com/shop/a?x=2\n"; out != want {
		t.Errorf("check with a Clean-param URL printed %q, want %q", out, want)
	}
}

// TestBinaryCheckUnreachable: a robots.txt that cannot be fetched gives
// RFC 9309's verdict (disallowed) and exit status 2, in text and JSON.
func TestBinaryCheckUnreachable(t *testing.T) {
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "down", http.StatusServiceUnavailable)
	}))
	defer down.Close()
	ok := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("User-agent: *\nDisallow: /no\n"))
	}))
	defer ok.Close()
	code, out, errOut := runBinary(t, "", "check", ok.URL+"/no", down.URL+"/a", down.URL+"/b")
	if code != exitUsage || !strings.Contains(out, "DISALLOWED "+down.URL+"/a: "+down.URL+"/robots.txt is unreachable (answered 503 Service Unavailable), so everything is disallowed") {
		t.Errorf("check with an unreachable robots.txt: exit %d, stdout %q; want %d and the RFC verdict", code, out, exitUsage)
	}
	if want := "robotstxt: check: 1 robots.txt could not be read; its URLs are reported DISALLOWED, as RFC 9309 §2.3.1.4 says (exit status 2)\n"; errOut != want {
		t.Errorf("check with an unreachable robots.txt: stderr %q, want %q", errOut, want)
	}
	code, out, _ = runBinary(t, down.URL+"/b\n", "check", "-json")
	res := jsonLines[CheckResult](t, out)
	if code != exitUsage || len(res) != 1 || res[0].State != "unreachable" || res[0].Allowed || res[0].Error == "" {
		t.Errorf("check -json with an unreachable robots.txt: exit %d, %+v; want %d and one unreachable, disallowed result with its error", code, res, exitUsage)
	}
}

// TestBinaryLint lints several files, with -json and -strict.
func TestBinaryLint(t *testing.T) {
	clean := writeFile(t, "clean.txt", "User-agent: *\nDisallow:\n")
	warn := writeFile(t, "warn.txt", "User-agent: *\nDisallow: /a\nDisallow: /a\nNoindex: /b\n")
	bad := writeFile(t, "bad.txt", "User-agent: *\nDisallow: a\n")
	missing := filepath.Join(t.TempDir(), "missing.txt")

	for _, tc := range []struct {
		args []string
		code int
	}{
		{[]string{"lint", clean}, exitOK},
		{[]string{"lint", clean, warn}, exitOK},
		{[]string{"lint", "-strict", clean, warn}, exitFail},
		{[]string{"lint", clean, bad}, exitFail},
		{[]string{"lint", clean, missing, bad}, exitUsage},
	} {
		code, _, errOut := runBinary(t, "", tc.args...)
		if code != tc.code {
			t.Errorf("%q: exit %d, want %d (stderr %q)", tc.args, code, tc.code, errOut)
		}
	}

	code, out, _ := runBinary(t, "", "lint", "-json", clean, warn, missing)
	reps := jsonLines[LintReport](t, out)
	if code != exitUsage || len(reps) != 3 {
		t.Fatalf("lint -json of 3 files: exit %d, %d reports; want %d and 3: %q", code, len(reps), exitUsage, out)
	}
	if r := reps[0]; r.File != clean || r.Errors+r.Warnings != 0 || len(r.Diagnostics) != 0 || r.Error != "" {
		t.Errorf("lint -json %s = %+v, want no diagnostics", clean, r)
	}
	if r := reps[1]; r.Warnings != 2 || len(r.Diagnostics) != 2 || r.Diagnostics[0] != (LintDiagnostic{Line: 3, Severity: "warning", Code: "duplicate-rule", Message: r.Diagnostics[0].Message}) ||
		r.Diagnostics[1].Code != "noindex" {
		t.Errorf("lint -json %s = %+v, want duplicate-rule on line 3 and noindex on line 4", warn, r)
	}
	if r := reps[2]; r.File != missing || r.Error == "" {
		t.Errorf("lint -json %s = %+v, want its read error", missing, r)
	}

	// Summaries in the singular and the plural.
	_, _, errOut := runBinary(t, "", "lint", bad)
	if want := bad + ": 1 error, 0 warnings\n"; errOut != want {
		t.Errorf("lint %s stderr = %q, want %q", bad, errOut, want)
	}
	_, _, errOut = runBinary(t, "", "lint", clean, bad)
	if !strings.HasSuffix(errOut, "2 files: 1 error, 0 warnings\n") {
		t.Errorf("lint of 2 files stderr = %q, want the total last", errOut)
	}
}

// hangingServer returns a server that never answers until the test ends,
// and a channel that receives when its first request arrived.
func hangingServer(t *testing.T) (*httptest.Server, <-chan struct{}) {
	arrived := make(chan struct{}, 1)
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case arrived <- struct{}{}:
		default:
		}
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) }) // before the server closes: cleanups run last first
	return srv, arrived
}

// TestBinaryInterrupt sends SIGINT while check waits for a robots.txt:
// the command reports it and exits 130.
func TestBinaryInterrupt(t *testing.T) {
	srv, arrived := hangingServer(t)
	cmd := exec.Command(binary(t), "check", srv.URL+"/a")
	var errOut bytes.Buffer
	cmd.Stderr = &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-arrived:
	case <-time.After(time.Minute):
		cmd.Process.Kill()
		t.Fatal("the command never fetched robots.txt")
	}
	cmd.Process.Signal(syscall.SIGINT)
	cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != exitInterrupted || !strings.Contains(errOut.String(), "interrupted") {
		t.Errorf("check after SIGINT: exit %d, stderr %q; want %d and \"interrupted\"", code, errOut.String(), exitInterrupted)
	}
}

// TestBinarySitemapsFromSitemap walks one given sitemap with -follow,
// -rule and -alternates, through the built command.
func TestBinarySitemapsFromSitemap(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		site := "http://" + r.Host
		switch r.URL.Path {
		case "/robots.txt":
			w.Write([]byte("User-agent: *\nDisallow: /private\nSitemap: /listed.xml\n"))
		case "/listed.xml":
			w.Write([]byte(`<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>/from-robots</loc></url></urlset>`))
		case "/index.xml":
			w.Write([]byte(`<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><sitemap><loc>/shop.xml</loc></sitemap><sitemap><loc>/blog.xml</loc></sitemap></sitemapindex>`))
		case "/shop.xml":
			w.Write([]byte(`<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:xhtml="http://www.w3.org/1999/xhtml">` +
				`<url><loc>` + site + `/product/1</loc><xhtml:link rel="alternate" hreflang="de" href="/de/product/1"/></url>` +
				`<url><loc>/about</loc></url><url><loc>/private/product/2</loc></url></urlset>`))
		case "/blog.xml":
			w.Write([]byte(`<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>/blog/1</loc></url></urlset>`))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	code, out, errOut := runBinary(t, "", "sitemaps", "-walk", "-urls", "-follow", "/shop", "-rule", "/product/=product",
		"-rule", "/de/=translation", "-alternates", srv.URL+"/index.xml")
	want := srv.URL + "/product/1\tproduct\n" + srv.URL + "/de/product/1\ttranslation\n"
	if code != exitOK || out != want {
		t.Errorf("sitemaps -walk SITEMAP with -follow, -rule, -alternates: exit %d, stdout %q; want 0 and %q (stderr %q)", code, out, want, errOut)
	}
	if !strings.Contains(errOut, "sitemap files read: 2\npage URLs: 2\n") {
		t.Errorf("sitemaps -walk SITEMAP summary = %q, want 2 sitemaps (the index and one child) and 2 pages", errOut)
	}
	code, _, errOut = runBinary(t, "", "sitemaps", "-rule", "/x", srv.URL)
	if code != exitUsage || !strings.Contains(errOut, "is not PATTERN=TAG") {
		t.Errorf("sitemaps -rule /x: exit %d, stderr %q; want %d and the rule's form", code, errOut, exitUsage)
	}
}
