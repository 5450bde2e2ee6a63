package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/robotsmw/robotsmw/internal/sharedtest"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/robotsmw/robotsmw/internal/privatetest"
	"github.com/robotsmw/robotsmw/policy"
)

// serveBodies are the robots.txt files the API tests run on: hand-written
// ones for the tricky cases, the repository's fixtures, and the real-world
// corpus beside the clone when it is there.
func serveBodies(t *testing.T) map[string]string {
	t.Helper()
	bodies := map[string]string{
		"mixed": robots,
		"groups": "User-agent: *\nDisallow: /private\nAllow: /private/open\nCrawl-delay: 2\n\n" +
			"User-agent: FooBot\nuser-agent: BarBot\nDisallow: /\nAllow: /$\nAllow: /a/index.html\n\n" +
			"User-agent: foobot\nDisallow: /b*.pdf$\n",
		"none":    "Sitemap: https://example.com/s.xml\n",
		"lint":    "Disallow: /before\nUser-agent: *\nDisalow: /typo\nDisallow: no-slash\nCrawl-delay: soon\nClean-param: &\nFoo: bar\n",
		"empty":   "",
		"crlf":    "User-agent: *\r\nDisallow: /x\r\n\r\nUser-agent: Bot\rDisallow: /y\r",
		"escapes": "User-agent: *\nDisallow: /%7Efoo\nDisallow: /caf%C3%A9\nAllow: /a$b\n",
	}
	for _, dir := range []string{"../../testdata/robots", sharedtest.Corpus("robots")} {
		if dir == "" {
			continue
		}
		files, _ := filepath.Glob(filepath.Join(dir, "*"))
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			bodies[filepath.Base(f)] = string(b)
		}
	}
	return bodies
}

// asSent returns body as a JSON string carries it: bytes that are not
// UTF-8 become U+FFFD.
func asSent(t *testing.T, body string) string {
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	return s
}

var serveURLs = []string{
	"https://example.com/", "https://example.com/private", "https://example.com/private/open/x",
	"https://example.com/a/", "https://example.com/b1.pdf", "https://example.com/b1.pdfx",
	"/x", "/y?q=1", "/~foo", "/%7efoo", "/café", "/a$b", "/robots.txt", "https://example.com/search?q=a",
	"example.com/no-scheme", "ftp://example.com/f", "",
}

var serveAgents = []string{"Googlebot", "FooBot/1.0 (+https://example.org)", "barbot", "*", "Mozilla/5.0 (compatible; Other)"}

// postAPI sends a JSON request to the handler and decodes the answer.
func postAPI(t *testing.T, h http.Handler, path string, req any, resp any) int {
	t.Helper()
	body, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	r := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r.Host = "127.0.0.1:8080" // the page's own
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if resp != nil {
		if err := json.Unmarshal(w.Body.Bytes(), resp); err != nil {
			t.Fatalf("POST %s: answer %q is not JSON: %v", path, w.Body.String(), err)
		}
	}
	return w.Code
}

func testServer(allowPrivate bool) *server {
	e := &env{client: &http.Client{}}
	return &server{client: e.fetchClient(allowPrivate), allowPrivate: allowPrivate, timeout: 5 * time.Second}
}

// TestServeCheckEqualsPolicy checks that every verdict of /api/check is
// policy's: Explain of the agent's product token on the URL.
func TestServeCheckEqualsPolicy(t *testing.T) {
	h := testServer(false).handler()
	for name, body := range serveBodies(t) {
		var resp checkResponse
		if code := postAPI(t, h, "/api/check", checkRequest{Robots: body, URLs: serveURLs, Agents: serveAgents}, &resp); code != http.StatusOK {
			t.Fatalf("%s: POST /api/check = %d", name, code)
		}
		r := policy.Parse([]byte(asSent(t, body)))
		var want []verdict
		for _, raw := range serveURLs {
			if raw == "" {
				continue
			}
			for _, agent := range serveAgents {
				v := verdict{URL: raw, Agent: agent, Token: policy.ProductToken(agent)}
				u, err := url.Parse(raw)
				absolute := err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
				if !absolute && !strings.HasPrefix(raw, "/") {
					v.Error = "not an absolute http or https URL, nor a path starting with /"
					want = append(want, v)
					continue
				}
				d := r.Explain(v.Token, u)
				v.Allowed, v.Why, v.Group, v.GroupAgent, v.Exempt = d.Allowed, d.String(), d.Group.String(), d.Agent, d.Exempt
				if d.Rule != nil {
					rj := toRuleJSON(*d.Rule) // the pattern cut to maxPatternShown: TestServeCheckBounds
					v.Rule = &rj
				}
				if v.Allowed != r.Allowed(v.Token, u) {
					t.Fatalf("%s: Explain and Allowed disagree on %q for %q", name, raw, agent)
				}
				want = append(want, v)
			}
		}
		if len(resp.Results) != len(want) {
			t.Fatalf("%s: POST /api/check gave %d verdicts, want %d", name, len(resp.Results), len(want))
		}
		for i := range want {
			if !reflect.DeepEqual(resp.Results[i], want[i]) {
				t.Errorf("%s: POST /api/check verdict %d =\n%+v\nwant (policy's)\n%+v", name, i, resp.Results[i], want[i])
			}
		}
	}
}

// TestServeLintEqualsLint checks that every line of /api/lint is one of
// policy.Lint's, in its order, with the counts.
func TestServeLintEqualsLint(t *testing.T) {
	h := testServer(false).handler()
	for name, body := range serveBodies(t) {
		var resp lintResponse
		if code := postAPI(t, h, "/api/lint", lintRequest{Robots: body}, &resp); code != http.StatusOK {
			t.Fatalf("%s: POST /api/lint = %d", name, code)
		}
		diags := policy.Lint([]byte(asSent(t, body)))
		if len(resp.Diagnostics) != len(diags) {
			t.Fatalf("%s: POST /api/lint gave %d diagnostics, Lint %d", name, len(resp.Diagnostics), len(diags))
		}
		var errs, warnings int
		for i, d := range diags {
			got := resp.Diagnostics[i]
			if got.Line != d.Line || got.Severity != d.Severity.String() || got.Code != d.Code || got.Message != d.Message {
				t.Errorf("%s: POST /api/lint diagnostic %d = %+v, Lint's is %+v", name, i, got, d)
			}
			if got.Hint == "" {
				t.Errorf("%s: POST /api/lint: no fix hint for code %q", name, d.Code)
			}
			if d.Severity == policy.SeverityError {
				errs++
			} else {
				warnings++
			}
		}
		if resp.Errors != errs || resp.Warnings != warnings {
			t.Errorf("%s: POST /api/lint counts %d errors, %d warnings; want %d, %d", name, resp.Errors, resp.Warnings, errs, warnings)
		}
	}
}

func TestServeSummary(t *testing.T) {
	h := testServer(false).handler()
	body := "User-agent: *\nDisallow: /private\nCrawl-delay: 0.5\n\nUser-agent: SlowBot\nUser-agent: Slurp\nCrawl-delay: 20\nDisallow: /tmp\n\n" +
		"User-agent: Glacial\nCrawl-delay: 301\n\n" +
		"Clean-param: utm_source&ref /shop\nSitemap: https://example.com/s.xml\nSitemap: /rel.xml\nSitemap: ftp://x/y\n"
	var resp summaryResponse
	req := summaryRequest{Robots: body, URLs: []string{"/a", "https://example.com/x", "/shop/p?utm_source=x&id=2&ref=y", "/blog?ref=z"},
		Agents: []string{"SlowBot/2.0", "Other"}}
	if code := postAPI(t, h, "/api/summary", req, &resp); code != http.StatusOK {
		t.Fatalf("POST /api/summary = %d", code)
	}
	f := func(v float64) *float64 { return &v }
	wantGroups := []groupSummary{
		{Agent: "*", Lines: []int{1}, Rules: []ruleJSON{{false, "/private", 2}}, CrawlDelay: f(0.5),
			Guard: "the Guard waits 500ms after the end of each response before the next request to the host (the Crawl-delay), one request at a time, and starts them at most one every 1s (its default Rate)"},
		{Agent: "SlowBot", Lines: []int{5}, Rules: []ruleJSON{{false, "/tmp", 8}}, CrawlDelay: f(20),
			Guard: "the Guard waits 20s after the end of each response before the next request to the host (the Crawl-delay, counted from the end as Yandex defines it), one request at a time"},
		{Agent: "Slurp", Lines: []int{6}, Rules: []ruleJSON{{false, "/tmp", 8}}, CrawlDelay: f(20),
			Guard: "the Guard waits 20s after the end of each response before the next request to the host (the Crawl-delay, counted from the end as Yandex defines it), one request at a time"},
		{Agent: "Glacial", Lines: []int{10}, Rules: []ruleJSON{}, CrawlDelay: f(301),
			Guard: "more than 5m0s: the Guard does not crawl the host (ErrCrawlDelayTooLong), or waits 5m0s after each response with ClampCrawlDelay"},
	}
	if !reflect.DeepEqual(resp.Groups, wantGroups) {
		t.Errorf("POST /api/summary groups =\n%+v\nwant\n%+v", resp.Groups, wantGroups)
	}
	wantAgents := []agentSummary{{"SlowBot/2.0", "SlowBot", "SlowBot"}, {"Other", "Other", "*"}}
	if !reflect.DeepEqual(resp.Agents, wantAgents) {
		t.Errorf("POST /api/summary agents = %+v, want %+v", resp.Agents, wantAgents)
	}
	if want := []cleanParam{{Line: 13, Params: []string{"utm_source", "ref"}, Path: "/shop"}}; !reflect.DeepEqual(resp.CleanParams, want) {
		t.Errorf("POST /api/summary cleanParams = %+v, want %+v", resp.CleanParams, want)
	}
	// Only the URL under /shop loses the parameters; policy decides.
	if want := []canonicalURL{{"/shop/p?utm_source=x&id=2&ref=y", "/shop/p?id=2"}}; !reflect.DeepEqual(resp.Canonicals, want) {
		t.Errorf("POST /api/summary canonicals = %+v, want %+v", resp.Canonicals, want)
	}
	wantSitemaps := []sitemapSummary{
		{Value: "https://example.com/s.xml", Resolved: "https://example.com/s.xml"},
		{Value: "/rel.xml", Resolved: "https://example.com/rel.xml"}, // the first absolute test URL's site
		{Value: "ftp://x/y", Problem: "not an http or https URL: crawlers leave it out"},
	}
	if !reflect.DeepEqual(resp.Sitemaps, wantSitemaps) || resp.RobotsURL != "https://example.com/robots.txt" {
		t.Errorf("POST /api/summary sitemaps = %+v (base %q), want %+v", resp.Sitemaps, resp.RobotsURL, wantSitemaps)
	}

	// A base given wins, and a robots.txt URL after redirects is kept.
	req.Base = "https://www.example.org/robots.txt"
	resp = summaryResponse{}
	postAPI(t, h, "/api/summary", req, &resp)
	if got := resp.Sitemaps[1].Resolved; got != "https://www.example.org/rel.xml" {
		t.Errorf("POST /api/summary with base: /rel.xml resolved to %q", got)
	}
	// Without any site, a relative line is not resolved, and says why.
	req.Base, req.URLs = "", []string{"/a"}
	resp = summaryResponse{}
	postAPI(t, h, "/api/summary", req, &resp)
	if s := resp.Sitemaps[1]; s.Resolved != "" || !strings.Contains(s.Problem, "relative") {
		t.Errorf("POST /api/summary without a site: /rel.xml = %+v", s)
	}
}

func TestServeDiff(t *testing.T) {
	h := testServer(false).handler()
	current := "User-agent: *\nDisallow: /private\n"
	draft := "User-agent: *\nDisallow: /private\nDisallow: /tmp\nAllow: /private/press\n\nUser-agent: Googlebot\nDisallow: /g\n"
	urls := []string{"/", "/private/x", "/private/press/a", "/tmp/1", "/g", "bad url"}
	agents := []string{"OtherBot", "Googlebot"}
	var resp diffResponse
	if code := postAPI(t, h, "/api/diff", diffRequest{Current: current, Draft: draft, URLs: urls, Agents: agents}, &resp); code != http.StatusOK {
		t.Fatalf("POST /api/diff = %d", code)
	}
	type change struct {
		url, agent    string
		before, after bool
	}
	var got []change
	for _, c := range resp.Changes {
		got = append(got, change{c.URL, c.Agent, c.Before.Allowed, c.After.Allowed})
	}
	want := []change{
		{"/private/x", "Googlebot", false, true}, // the Googlebot group hides '*'
		{"/private/press/a", "OtherBot", false, true},
		{"/private/press/a", "Googlebot", false, true},
		{"/tmp/1", "OtherBot", true, false},
		{"/g", "Googlebot", true, false},
	}
	if !reflect.DeepEqual(got, want) || resp.Compared != 10 {
		t.Errorf("POST /api/diff = %+v of %d compared, want %+v of 10", got, resp.Compared, want)
	}
}

// TestServeFetch fetches live robots.txt files from loopback servers, with
// -allow-private, and checks the status rules of RFC 9309 §2.3.1.
func TestServeFetch(t *testing.T) {
	big := "User-agent: *\nDisallow: /x\n" + strings.Repeat("# padding\n", policy.MaxSize/10+10)
	site := func(h http.HandlerFunc) string {
		srv := httptest.NewServer(h)
		t.Cleanup(srv.Close)
		return srv.URL
	}
	ok := site(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("User-Agent") != serveAgent {
			t.Errorf("robots.txt fetched with User-Agent %q, want %q", r.Header.Get("User-Agent"), serveAgent)
		}
		fmt.Fprint(w, "User-agent: *\nDisallow: /private\n")
	})
	notFound := site(http.NotFound)
	down := site(func(w http.ResponseWriter, r *http.Request) { http.Error(w, "down", http.StatusServiceUnavailable) })
	redirect := site(func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, ok+"/robots.txt", http.StatusFound) })
	large := site(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, big) })
	h := testServer(true).handler()
	tests := []struct {
		url                             string
		state, allows, robots, finalURL string
		status                          int
		cut                             bool
		meaning                         string
		code                            int // of the answer: 0 for 200
	}{
		{url: ok + "/any/page", state: "parsed", allows: "rules", robots: "User-agent: *\nDisallow: /private\n", status: 200, meaning: "200 OK: its rules apply"},
		{url: notFound, state: "unavailable", allows: "everything", status: 404, meaning: "404 Not Found: there is no robots.txt, so everything is allowed"},
		{url: down, state: "unreachable", allows: "nothing", status: 503, meaning: "answered 503 Service Unavailable", code: http.StatusBadGateway},
		{url: redirect, state: "parsed", allows: "rules", robots: "User-agent: *\nDisallow: /private\n", status: 200,
			finalURL: ok + "/robots.txt", meaning: "robots.txt redirected to " + ok + "/robots.txt"},
		{url: large, state: "parsed", allows: "rules", robots: big[:policy.MaxSize], status: 200, cut: true, meaning: "only its first 500 KiB are read"},
	}
	for _, tt := range tests {
		var resp fetchResponse
		want := cmp.Or(tt.code, http.StatusOK)
		if code := postAPI(t, h, "/api/fetch", fetchRequest{URL: tt.url}, &resp); code != want {
			t.Fatalf("POST /api/fetch %s = %d, want %d", tt.url, code, want)
		}
		u, _ := url.Parse(tt.url)
		final := tt.finalURL
		if final == "" {
			final = robotsURL(u).String()
		}
		if resp.State != tt.state || resp.Allows != tt.allows || resp.Robots != tt.robots || resp.Status != tt.status ||
			resp.Cut != tt.cut || resp.RobotsURL != robotsURL(u).String() || resp.FinalURL != final || !strings.Contains(resp.Meaning, tt.meaning) {
			t.Errorf("POST /api/fetch %s = %+v (robots %d bytes)\nwant state %s, allows %s, status %d, cut %v, final %s, meaning with %q",
				tt.url, resp.State, len(resp.Robots), tt.state, tt.allows, tt.status, tt.cut, final, tt.meaning)
		}
	}

	// Without -allow-private the dial guard refuses loopback, and says
	// how to lift it; nothing reaches the server.
	var resp fetchResponse
	code := postAPI(t, testServer(false).handler(), "/api/fetch", fetchRequest{URL: ok}, &resp)
	if code != http.StatusForbidden || resp.State != "unreachable" || !strings.Contains(resp.Meaning, "loopback") || !strings.Contains(resp.Meaning, "-allow-private") {
		t.Errorf("POST /api/fetch of a loopback site without -allow-private = %d %+v, want 403 with the state", code, resp)
	}
	// A server on loopback only serves the person at this machine, who
	// typed the site: its own address is allowed, as the command line's
	// sites are, but not another private one a redirect points to.
	internal := privatetest.New(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "User-agent: *\nDisallow: /\n")
	}))
	toInternal := site(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, internal.URL+"/robots.txt", http.StatusFound)
	})
	local := testServer(false)
	local.listenHost = mustAddr(t, "127.0.0.1")
	resp = fetchResponse{}
	postAPI(t, local.handler(), "/api/fetch", fetchRequest{URL: ok}, &resp)
	if resp.State != "parsed" || resp.Robots != "User-agent: *\nDisallow: /private\n" {
		t.Errorf("POST /api/fetch of the typed loopback site, server on loopback = %+v", resp)
	}
	resp = fetchResponse{}
	postAPI(t, local.handler(), "/api/fetch", fetchRequest{URL: toInternal}, &resp)
	if resp.State != "unreachable" || !strings.Contains(resp.Meaning, "-allow-private") || internal.Conns() != 0 {
		t.Errorf("POST /api/fetch of a site redirecting to 127.0.0.2 = %+v; 127.0.0.2 saw %d connections", resp, internal.Conns())
	}
	for _, bad := range []string{"", "ftp://example.com/", "http://"} {
		if code := postAPI(t, h, "/api/fetch", fetchRequest{URL: bad}, nil); code != http.StatusBadRequest {
			t.Errorf("POST /api/fetch %q = %d, want 400", bad, code)
		}
	}
}

// TestServeSitemaps walks the sitemaps a draft lists, read as the
// robots.txt of a loopback site.
func TestServeSitemaps(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(walkSite))
	defer srv.Close()
	h := testServer(true).handler()
	var resp sitemapsResponse
	// The draft, not the site's live robots.txt, is walked: it lists the
	// index and disallows /p2.
	draft := "User-agent: *\nDisallow: /p2\nSitemap: /index.xml\n"
	if code := postAPI(t, h, "/api/sitemaps", sitemapsRequest{Robots: draft, Base: srv.URL}, &resp); code != http.StatusOK {
		t.Fatalf("POST /api/sitemaps = %d", code)
	}
	if resp.Sitemaps != 3 || resp.Indexes != 1 || resp.URLs != 3 || resp.Failed != 1 || resp.Error != "" ||
		!reflect.DeepEqual(resp.Dropped, map[string]int{"scope": 1, "robots": 1, "duplicate": 1}) || len(resp.Reports) != 4 {
		t.Errorf("POST /api/sitemaps = %+v", resp)
	}
	var failed []string
	for _, r := range resp.Reports {
		if r.Error != "" {
			failed = append(failed, r.URL+": "+r.Error)
		}
	}
	if len(failed) != 1 || !strings.Contains(failed[0], "missing.xml") || !strings.Contains(failed[0], "404") {
		t.Errorf("POST /api/sitemaps failed sitemaps = %q", failed)
	}
	if code := postAPI(t, h, "/api/sitemaps", sitemapsRequest{Robots: draft}, nil); code != http.StatusBadRequest {
		t.Errorf("POST /api/sitemaps without a base = %d, want 400", code)
	}
	// Without -allow-private, the loopback site's sitemaps are refused.
	postAPI(t, testServer(false).handler(), "/api/sitemaps", sitemapsRequest{Robots: draft, Base: srv.URL}, &resp)
	if resp.Sitemaps != 0 || resp.Failed != 1 || len(resp.Reports) != 1 || !strings.Contains(resp.Reports[0].Error, "-allow-private") {
		t.Errorf("POST /api/sitemaps of a loopback site without -allow-private = %+v", resp)
	}
}

// TestServeRequests checks the handler's answers to what is not a good
// API request, and the security headers of every answer.
func TestServeRequests(t *testing.T) {
	s := testServer(false)
	s.listenHost = mustAddr(t, "127.0.0.1")
	h := s.handler()
	do := func(method, path, ctype, host, body string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(method, path, strings.NewReader(body))
		if ctype != "" {
			r.Header.Set("Content-Type", ctype)
		}
		r.Host = "127.0.0.1:8080"
		if host != "" {
			r.Host = host
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	tests := []struct {
		method, path, ctype, host, body string
		code                            int
		contains                        string
	}{
		{"GET", "/", "", "127.0.0.1:8080", "", 200, `<textarea id="robots"`},
		{"GET", "/", "", "localhost:8080", "", 200, "robots.txt analyser"},
		{"GET", "/", "", "[::1]:8080", "", 200, "robots.txt analyser"},
		{"GET", "/static/app.js", "", "", "", 200, "use strict"},
		{"GET", "/static/style.css", "", "", "", 200, ":root"},
		{"GET", "/static/", "", "", "", 404, ""}, // no listing of the assets
		{"GET", "/static", "", "", "", 307, ""},  // to /static/, which is 404
		{"GET", "/nothing", "", "", "", 404, ""},
		{"GET", "/", "", "attacker.example:8080", "", 421, `{"error":"robotstxt serve: unexpected Host attacker.example:8080"}`}, // DNS rebinding
		{"POST", "/api/lint", "application/json", "attacker.example", `{"robots":""}`, 421, `"error":`},
		{"GET", "/api/lint", "", "", "", 405, `"error":"GET /api/lint: use POST`},
		{"POST", "/api/nothing", "application/json", "", `{}`, 404, `"error":"no API at /api/nothing"`},
		{"POST", "/api/lint", "text/plain", "", `{"robots":""}`, 415, "Content-Type: application/json"},
		{"POST", "/api/lint", "application/x-www-form-urlencoded", "", `robots=x`, 415, ""},
		{"POST", "/api/lint", "application/json; charset=utf-8", "", `{"robots":"User-agent: *"}`, 200, `"errors":0`},
		{"POST", "/api/lint", "application/json", "", `{"robot":""}`, 400, `unknown field`},
		{"POST", "/api/lint", "application/json", "", `{"robots":""} {}`, 400, "more than one value"},
		{"POST", "/api/lint", "application/json", "", `{"robots":` + strings.Repeat(" ", maxAPIBody) + `""}`, 413, "request too large"},
		{"POST", "/api/lint", "application/json", "", `{"robots":"` + strings.Repeat("a", maxRead+1) + `"}`, 400, "more than the"},
		{"POST", "/api/check", "application/json", "", `{"robots":"","urls":["/"],"agents":[]}`, 400, "no agents"},
		{"POST", "/api/check", "application/json", "", `{"robots":"","urls":["/"],"agents":[" "]}`, 400, "no agents"},
		{"POST", "/api/check", "application/json", "", `{"robots":"","urls":[],"agents":[]}`, 200, `"results":[]`},
		{"POST", "/api/check", "application/json", "", `{"robots":"","urls":[` + strings.Repeat(`"/",`, maxURLs) + `"/"],"agents":["a"]}`, 400, "URLs, more than"},
		{"POST", "/api/check", "application/json", "", `{"robots":"","urls":[` + strings.Repeat(`"/",`, maxChecks/maxAgents) + `"/"],"agents":[` + strings.Repeat(`"a",`, maxAgents-1) + `"a"]}`, 400, "checks, more than"},
		{"POST", "/api/diff", "application/json", "", `{"current":"","draft":"","urls":[` + strings.Repeat(`"/",`, maxChecks/maxAgents) + `"/"],"agents":[` + strings.Repeat(`"a",`, maxAgents-1) + `"a"]}`, 400, "checks, more than"},
		{"POST", "/api/summary", "application/json", "", `{"robots":"","base":"example.com"}`, 400, "not an absolute"},
	}
	for _, tt := range tests {
		w := do(tt.method, tt.path, tt.ctype, tt.host, tt.body)
		if w.Code != tt.code || !strings.Contains(w.Body.String(), tt.contains) {
			t.Errorf("%s %s (Host %q, %s) = %d %.200q, want %d with %q", tt.method, tt.path, tt.host, tt.ctype, w.Code, w.Body.String(), tt.code, tt.contains)
		}
		if csp := w.Header().Get("Content-Security-Policy"); csp != contentSecurityPolicy {
			t.Errorf("%s %s: Content-Security-Policy = %q", tt.method, tt.path, csp)
		}
		if w.Header().Get("X-Content-Type-Options") != "nosniff" || w.Header().Get("Cache-Control") != "no-store" {
			t.Errorf("%s %s: headers %v", tt.method, tt.path, w.Header())
		}
	}
	// The page has nothing inline that the policy would block.
	page := do("GET", "/", "", "", "").Body.String()
	for _, inline := range []string{"<script>", "style=", " onclick=", "<style", "javascript:", "http://", "https://cdn"} {
		if strings.Contains(page, inline) {
			t.Errorf("GET /: the page holds %q, which the Content-Security-Policy blocks or an offline page cannot load", inline)
		}
	}
}

func TestServeHostAllowed(t *testing.T) {
	tests := []struct {
		listen, host string
		want         bool
	}{
		{"127.0.0.1", "127.0.0.1:8080", true},
		{"127.0.0.1", "localhost", true},
		{"127.0.0.1", "LOCALHOST.:80", true},
		{"127.0.0.1", "127.0.0.2:8080", true},
		{"127.0.0.1", "[::1]:8080", true},
		{"127.0.0.1", "example.com", false},
		{"127.0.0.1", "192.168.1.2:8080", false},
		{"192.168.1.2", "192.168.1.2:8080", true},
		{"192.168.1.2", "example.com:8080", false},
		{"", "example.com:8080", true}, // every interface: any name may be the machine's
	}
	for _, tt := range tests {
		s := &server{}
		if tt.listen != "" {
			s.listenHost = mustAddr(t, tt.listen)
		}
		if got := s.hostAllowed(tt.host); got != tt.want {
			t.Errorf("listening on %q: hostAllowed(%q) = %v, want %v", tt.listen, tt.host, got, tt.want)
		}
	}
}

// syncBuffer is a bytes.Buffer that the server goroutine writes while the
// test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestServeCommand runs "robotstxt serve" on a free loopback port, uses
// the page and the API over TCP, and ends it as Ctrl-C does.
func TestServeCommand(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"serve", "-addr", "127.0.0.1:0"}, strings.NewReader(""), &stdout, &stderr, &http.Client{})
	}()
	var base string
	for deadline := time.Now().Add(10 * time.Second); base == "" && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if out := stdout.String(); strings.HasSuffix(out, "/\n") {
			base = strings.TrimSuffix(strings.TrimPrefix(out, "robotstxt serve: listening on "), "\n")
		}
	}
	if !strings.HasPrefix(base, "http://127.0.0.1:") {
		t.Fatalf("robotstxt serve printed %q, %q; want its address", stdout.String(), stderr.String())
	}
	resp, err := http.Get(base)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !bytes.Contains(page, []byte("robots.txt analyser")) {
		t.Errorf("GET %s = %d %.100q", base, resp.StatusCode, page)
	}
	resp, err = http.Post(base+"api/check", "application/json",
		strings.NewReader(`{"robots":"User-agent: *\nDisallow: /p\n","urls":["/p"],"agents":["Bot"]}`))
	if err != nil {
		t.Fatal(err)
	}
	var check checkResponse
	json.NewDecoder(resp.Body).Decode(&check)
	resp.Body.Close()
	if len(check.Results) != 1 || check.Results[0].Allowed || check.Results[0].Rule.Line != 2 {
		t.Errorf("POST %sapi/check = %+v", base, check)
	}
	cancel()
	select {
	case code := <-done:
		if code != exitInterrupted || stderr.String() != "robotstxt: serve: interrupted\n" {
			t.Errorf("robotstxt serve ended with %d, stderr %q", code, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("robotstxt serve did not end with its context")
	}
}

func TestServeUsage(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run(context.Background(), []string{"serve", "extra"}, nil, &stdout, &stderr, nil); code != exitUsage ||
		!strings.Contains(stderr.String(), "takes no arguments") {
		t.Errorf("robotstxt serve extra = %d, stderr %q", code, stderr.String())
	}
	stderr.Reset()
	if code := run(context.Background(), []string{"serve", "-addr", "256.0.0.1:x"}, nil, &stdout, &stderr, nil); code != exitUsage ||
		stderr.String() == "" {
		t.Errorf("robotstxt serve -addr 256.0.0.1:x = %d, stderr %q", code, stderr.String())
	}
	stdout.Reset()
	if code := run(context.Background(), []string{"help", "serve"}, nil, &stdout, &stderr, nil); code != exitOK ||
		!strings.Contains(stdout.String(), "POST /api/check") || !strings.Contains(stdout.String(), "-allow-private") {
		t.Errorf("robotstxt help serve = %d, %q", code, stdout.String())
	}
}

func mustAddr(t *testing.T, s string) netip.Addr {
	t.Helper()
	a, err := netip.ParseAddr(s)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestServeCheckBounds checks what bounds an answer of /api/check and
// /api/diff besides the number of checks: a rule's pattern is repeated
// cut to maxPatternShown bytes, and the checks stop once their context
// ends (a client gone, maxCheckWork run out) with an error that says so.
func TestServeCheckBounds(t *testing.T) {
	long := "/" + strings.Repeat("é", 400) // 801 bytes
	s := testServer(false)
	resp, err := s.check(context.Background(), &checkRequest{Robots: "User-agent: *\nDisallow: " + long + "\n", URLs: []string{long}, Agents: []string{"a"}})
	if err != nil {
		t.Fatalf("check with a long rule: %v", err)
	}
	v := resp.Results[0]
	if v.Rule == nil || len(v.Rule.Pattern) > maxPatternShown+len("…") || !strings.HasSuffix(v.Rule.Pattern, "…") ||
		!strings.HasPrefix(long, strings.TrimSuffix(v.Rule.Pattern, "…")) || !utf8.ValidString(v.Rule.Pattern) {
		t.Errorf("check with a rule of %d bytes: pattern %q, want its first %d bytes at most, cut between characters, and …", len(long), v.Rule.Pattern, maxPatternShown)
	}
	if len(v.Why) > 2*maxPatternShown {
		t.Errorf("check with a rule of %d bytes: why has %d bytes", len(long), len(v.Why))
	}

	cases, err := newTestCases([]string{"/a", "/b"}, []string{"a"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	if _, err := cases.verdicts(ctx, policy.Parse(nil)); err == nil || !strings.Contains(err.Error(), "took more than") || !strings.Contains(err.Error(), "0 of 2 done") {
		t.Errorf("verdicts after maxCheckWork ran out: %v, want an error saying the checks took too long", err)
	}
	ctx, cancel = context.WithCancel(context.Background())
	cancel()
	if _, err := cases.verdicts(ctx, policy.Parse(nil)); !errors.Is(err, context.Canceled) {
		t.Errorf("verdicts for a client gone: %v, want context.Canceled", err)
	}
}

// FuzzServeCheck holds /api/check and /api/lint to policy on any text,
// URL and agent: every verdict is Explain's, every diagnostic Lint's, and
// nothing panics.
func FuzzServeCheck(f *testing.F) {
	f.Add(robots, "https://example.com/private/x", "Googlebot")
	f.Add("User-agent: a\nDisallow: /*$\nAllow: /$\n", "/", "A/1.0")
	f.Add("\xef\xbb\xbfuser-agent:*\rdisallow:/%7e\n", "/~x?y", "")
	s := testServer(false)
	f.Fuzz(func(t *testing.T, body, raw, agent string) {
		body = asSent(t, body) // what a JSON request can carry
		resp, err := s.check(context.Background(), &checkRequest{Robots: body, URLs: []string{raw}, Agents: []string{agent}})
		if err != nil {
			if !strings.Contains(err.Error(), "no agents") || strings.TrimSpace(agent) != "" {
				t.Fatalf("check(%q, %q, %q): %v", body, raw, agent, err)
			}
			return
		}
		if strings.TrimSpace(raw) == "" {
			if len(resp.Results) != 0 {
				t.Fatalf("check of a blank URL gave %+v", resp.Results)
			}
			return
		}
		v := resp.Results[0]
		u, perr := testURL(strings.TrimSpace(raw))
		if (perr == nil) != (v.Error == "") {
			t.Fatalf("check(%q): error %q, testURL: %v", raw, v.Error, perr)
		}
		if perr == nil {
			d := policy.Parse([]byte(body)).Explain(policy.ProductToken(strings.TrimSpace(agent)), u)
			if v.Allowed != d.Allowed || v.Why != d.String() || v.GroupAgent != d.Agent ||
				(v.Rule == nil) != (d.Rule == nil) || v.Rule != nil && v.Rule.Line != d.Rule.Line {
				t.Fatalf("check(%q, %q, %q) = %+v, Explain %+v", body, raw, agent, v, d)
			}
		}
		lint, err := s.lint(context.Background(), &lintRequest{Robots: body})
		if err != nil {
			t.Fatal(err)
		}
		diags := policy.Lint([]byte(body))
		if len(lint.Diagnostics) != len(diags) {
			t.Fatalf("lint(%q): %d diagnostics, Lint %d", body, len(lint.Diagnostics), len(diags))
		}
		for i, d := range diags {
			if g := lint.Diagnostics[i]; g.Line != d.Line || g.Code != d.Code || g.Message != d.Message || g.Severity != d.Severity.String() {
				t.Fatalf("lint(%q) diagnostic %d = %+v, Lint %+v", body, i, g, d)
			}
		}
	})
}
