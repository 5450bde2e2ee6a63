package sitemap

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
)

// A fakeWeb answers requests from a table of URLs without a network, and
// records every URL asked for.
type fakeWeb struct {
	mu    sync.Mutex // guards asked
	asked []string
	files map[string]string // URL → body; others are 404
}

func (f *fakeWeb) RoundTrip(req *http.Request) (*http.Response, error) {
	u := req.URL.String()
	f.mu.Lock()
	f.asked = append(f.asked, u)
	f.mu.Unlock()
	body, ok := f.files[u]
	code := http.StatusOK
	if !ok {
		code = http.StatusNotFound
	}
	return &http.Response{StatusCode: code, Header: http.Header{}, Body: io.NopCloser(strings.NewReader(body)),
		Request: req, ContentLength: int64(len(body))}, nil
}

func (f *fakeWeb) requests() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.asked)
}

func walkFake(t *testing.T, w *Walker, site string) ([]string, Stats, error) {
	t.Helper()
	unpaced(w)
	var got []string
	st, err := w.Walk(context.Background(), site, func(e Entry) error {
		got = append(got, e.Loc)
		return nil
	})
	slices.Sort(got)
	return got, st, err
}

func TestWalkSitemapElsewhereSeedsOnlyTheSite(t *testing.T) {
	// evil.test's robots.txt names "sitemaps" on internal
	// addresses that list their own pages. They may be read for
	// evil.test's pages, never seed their own.
	web := &fakeWeb{files: map[string]string{
		"http://evil.test/robots.txt": "Sitemap: http://127.0.0.1:8500/s.txt\n" +
			"Sitemap: http://169.254.169.254/latest/meta-data/\nSitemap: http://[::1]:9000/x.xml\n",
		"http://127.0.0.1:8500/s.txt": "http://127.0.0.1:8500/admin/delete?all=1\nhttp://127.0.0.1:8500/v1/kv/secret\n" +
			"http://127.0.0.1:6379/\nhttp://10.0.0.1/\nhttp://evil.test/ok\n",
		"http://169.254.169.254/latest/meta-data/": "http://169.254.169.254/latest/meta-data/iam\n",
		"http://[::1]:9000/x.xml":                  urlsetOf("http://[::1]:9000/a", "http://127.0.0.1:9000/b"),
	}}
	got, st, err := walkFake(t, &Walker{Client: &http.Client{Transport: web}}, "http://evil.test/")
	if err != nil {
		t.Fatalf("Walk: %v", err)
	}
	if want := []string{"http://evil.test/ok"}; !slices.Equal(got, want) {
		t.Errorf("Walk pages = %q, want %q", got, want)
	}
	if st.Dropped.Scope != 7 {
		t.Errorf("Walk Dropped.Scope = %d, want 7", st.Dropped.Scope)
	}
	for _, r := range web.requests() {
		if strings.Contains(r, "/robots.txt") && !strings.HasPrefix(r, "http://evil.test/") &&
			!strings.HasPrefix(r, "http://127.0.0.1:8500/") && !strings.HasPrefix(r, "http://169.254.169.254/") &&
			!strings.HasPrefix(r, "http://[::1]:9000/") {
			t.Errorf("Walk asked %s: a robots.txt of a host only a foreign sitemap named", r)
		}
	}
}

func TestWalkOneSpellingPerURL(t *testing.T) {
	// One normalisation everywhere, the origin key of
	// policy: default ports, trailing dot, case, IDN.
	lines := []string{"http://s.test/p5", "http://s.test:80/p5", "https://s.test:443/p6",
		"http://s.test./p3", "HTTP://S.TEST/p3#top", "http://bücher.s.test/b", "http://xn--bcher-kva.s.test/b"}
	for port := 1; port <= 64; port++ {
		lines = append(lines, fmt.Sprintf("http://s.test:%d/probe", port))
	}
	web := &fakeWeb{files: map[string]string{
		"http://s.test/robots.txt":  "Sitemap: http://S.test.:80/sitemap.txt\n",
		"http://s.test/sitemap.txt": strings.Join(lines, "\n"),
	}}
	got, st, err := walkFake(t, &Walker{Client: &http.Client{Transport: web}}, "http://s.test:80")
	if err != nil {
		t.Fatalf("Walk: %v", err)
	}
	want := []string{"http://s.test/p3", "http://s.test/p5", "https://s.test/p6"}
	if !slices.Equal(got, want) {
		t.Errorf("Walk pages = %q, want %q", got, want)
	}
	if st.Dropped.Duplicate != 2 {
		t.Errorf("Walk Dropped.Duplicate = %d, want 2", st.Dropped.Duplicate)
	}
	robots := map[string]bool{}
	for _, r := range web.requests() {
		if strings.HasSuffix(r, "/robots.txt") {
			robots[r] = true
		}
	}
	// http://s.test, https://s.test (p6 is checked against its own
	// robots.txt), bücher's for a cross-submission, and at most three
	// other ports of s.test.
	if len(robots) > 6 || !robots["http://s.test/robots.txt"] || robots["http://s.test:80/robots.txt"] {
		t.Errorf("Walk fetched robots.txt %d times: %v; want http://s.test once and at most 5 more", len(robots), robots)
	}
	if st.Cut&CutHosts == 0 {
		t.Errorf("Walk Stats.Cut = %v, want it to name hosts", st.Cut)
	}
}

func TestWalkOnePagePerPercentSpelling(t *testing.T) {
	// RFC 3986 §6.2.2: "~" and "%7E" (or "%7e") are one character, and
	// "%2f" and "%2F" one octet; "%2F" is not "/".
	web := &fakeWeb{files: map[string]string{
		"http://s.test/robots.txt": "Sitemap: http://s.test/index.xml\n",
		"http://s.test/index.xml": `<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">` +
			`<sitemap><loc>http://s.test/%7Esm.txt</loc></sitemap>` +
			`<sitemap><loc>http://s.test/~sm.txt</loc></sitemap></sitemapindex>`,
		"http://s.test/%7Esm.txt": strings.Join([]string{
			"http://s.test/%7Euser", "http://s.test/~user", "http://s.test/%7euser",
			"http://s.test/a%2fb", "http://s.test/a%2Fb", "http://s.test/a/b",
		}, "\n"),
	}}
	got, st, err := walkFake(t, &Walker{Client: &http.Client{Transport: web}}, "http://s.test")
	if err != nil {
		t.Fatalf("Walk: %v", err)
	}
	want := []string{"http://s.test/%7Euser", "http://s.test/a%2fb", "http://s.test/a/b"}
	if !slices.Equal(got, want) {
		t.Errorf("Walk pages = %q, want %q", got, want)
	}
	if st.Dropped.Duplicate != 3 || st.Skipped.Duplicate != 1 || st.Sitemaps != 2 {
		t.Errorf("Walk stats = %+v, want 3 pages and 1 sitemap dropped as duplicates, 2 sitemaps read", st)
	}
	for _, r := range web.requests() {
		if strings.Contains(r, "~sm.txt") {
			t.Errorf("Walk fetched %s, the sitemap it had read as /%%7Esm.txt", r)
		}
	}
}

func TestWalkRedirectToOtherPercentSpelling(t *testing.T) {
	// A server that answers /%7Esm.txt with a redirect to /~sm.txt, its
	// own spelling of the same URL, is read once, not skipped as a
	// sitemap read already. A page named with a stray "%" (no URI) is
	// kept apart from the one with "%25".
	web := &fakeWeb{files: map[string]string{
		"http://s.test/robots.txt": "Sitemap: http://s.test/%7Esm.txt\n",
		"http://s.test/~sm.txt":    "http://s.test/a?q=100%\nhttp://s.test/a?q=100%25\nhttp://s.test/%7e\nhttp://s.test/~\n",
	}}
	client := &http.Client{Transport: &redirecting{
		to:   map[string]string{"http://s.test/%7Esm.txt": "http://s.test/~sm.txt"},
		next: web,
	}}
	got, st, err := walkFake(t, &Walker{Client: client}, "http://s.test")
	if err != nil {
		t.Fatalf("Walk: %v", err)
	}
	want := []string{"http://s.test/%7e", "http://s.test/a?q=100%", "http://s.test/a?q=100%25"}
	if !slices.Equal(got, want) {
		t.Errorf("Walk pages = %q, want %q", got, want)
	}
	if st.Sitemaps != 1 || st.Skipped.Duplicate != 0 || st.Dropped.Duplicate != 1 {
		t.Errorf("Walk stats = %+v, want 1 sitemap read, none skipped, 1 page dropped as a duplicate", st)
	}
}

func TestWalkReportsCuts(t *testing.T) {
	// Each bound that cut the walk is named.
	var pages []string
	for i := range 50 {
		pages = append(pages, fmt.Sprintf("/p%d", i))
	}
	s := newTestSite(t, map[string]*testFile{
		"/robots.txt": {body: "Sitemap: /index.xml\n"},
		"/index.xml":  {body: indexOf("/deep.xml", "/a.xml", "/b.xml", "/c.xml")},
		"/deep.xml":   {body: indexOf("/deeper.xml")},
		"/a.xml":      {body: urlsetOf(pages...)},
		"/b.xml":      {body: urlsetOf("/b")},
		"/c.xml":      {body: urlsetOf("/c")},
	})
	_, st, _ := walkSite(t, &Walker{Options: Options{MaxDepth: 1, MaxURLs: 10, Concurrency: 1}}, s)
	if st.URLs != 10 || st.Cut&CutURLs == 0 || st.Cut&CutDepth == 0 {
		t.Errorf("Walk URLs = %d, Cut = %q; want 10 and urls,depth", st.URLs, st.Cut)
	}
	_, st, _ = walkSite(t, &Walker{Options: Options{MaxSitemaps: 2}}, s)
	if st.Cut != CutSitemaps {
		t.Errorf("Walk with MaxSitemaps 2: Cut = %q, want sitemaps", st.Cut)
	}
	_, st, _ = walkSite(t, &Walker{Options: Options{MaxSitemaps: 2}}, s)
	if st.Cut != CutSitemaps {
		t.Errorf("Walk with MaxSitemaps 2: Cut = %q, want sitemaps", st.Cut)
	}
	if n := (&Walker{}).maxURLs(); n != DefaultMaxURLs {
		t.Errorf("zero Walker's bound on URLs = %d, want DefaultMaxURLs", n)
	}
	if n := (&Walker{Options: Options{MaxURLs: -1}}).maxURLs(); n != 0 {
		t.Errorf("bound on URLs with MaxURLs -1 = %d, want none", n)
	}
}

func TestFingerprintsBytesPerURL(t *testing.T) {
	// The duplicate check holds at most 16 bytes a URL.
	f := newFingerprints()
	for i := range 300_000 {
		u := fmt.Sprintf("https://example.com/a/rather/long/path/to/page-%d.html", i)
		if !f.add(u) {
			t.Fatalf("add(%q) = false for a new URL", u)
		}
		if i%997 == 0 && f.add(u) {
			t.Fatalf("add(%q) = true for a URL added before", u)
		}
		if n := f.len(); n >= 10_000 && f.bytes() > 16*n {
			t.Fatalf("fingerprints of %d URLs hold %d bytes, more than 16 a URL", n, f.bytes())
		}
	}
}

func TestWalkSitemapOnRelatedHost(t *testing.T) {
	// example.test's robots.txt names a sitemap on www.example.test that
	// lists www's pages: they are kept when www's own robots.txt lists
	// the sitemap too (a cross-submission), dropped when it does not.
	for _, wwwListsIt := range []bool{true, false} {
		wwwRobots := ""
		if wwwListsIt {
			wwwRobots = "Sitemap: http://www.example.test/sitemap.txt\n"
		}
		web := &fakeWeb{files: map[string]string{
			"http://example.test/robots.txt":      "Sitemap: http://www.example.test/sitemap.txt\n",
			"http://www.example.test/robots.txt":  wwwRobots,
			"http://www.example.test/sitemap.txt": "http://www.example.test/a\nhttp://example.test/b\n",
		}}
		got, _, err := walkFake(t, &Walker{Client: &http.Client{Transport: web}}, "http://example.test/")
		if err != nil {
			t.Fatalf("Walk: %v", err)
		}
		want := []string{"http://example.test/b"}
		if wwwListsIt {
			want = []string{"http://example.test/b", "http://www.example.test/a"}
		}
		if !slices.Equal(got, want) {
			t.Errorf("www's robots.txt lists the sitemap: %v; Walk pages = %q, want %q", wwwListsIt, got, want)
		}
	}
}

func TestWalkRobotsRedirectedToWWW(t *testing.T) {
	// example.test/robots.txt redirects to www.example.test's, which names
	// a sitemap of www pages: they are the site's.
	web := &fakeWeb{files: map[string]string{
		"http://www.example.test/robots.txt":  "Sitemap: /sitemap.txt\n",
		"http://www.example.test/sitemap.txt": "http://www.example.test/a\n",
	}}
	client := &http.Client{Transport: &redirecting{
		to:   map[string]string{"http://example.test/robots.txt": "http://www.example.test/robots.txt"},
		next: web,
	}}
	got, _, err := walkFake(t, &Walker{Client: client}, "http://example.test/")
	if err != nil {
		t.Fatalf("Walk: %v", err)
	}
	if want := []string{"http://www.example.test/a"}; !slices.Equal(got, want) {
		t.Errorf("Walk pages = %q, want %q", got, want)
	}
	for _, r := range web.requests() {
		if r == "http://www.example.test/robots.txt" {
			continue
		}
		if strings.HasSuffix(r, "/robots.txt") {
			t.Errorf("Walk asked %s: a robots.txt beyond the site's", r)
		}
	}
}

// redirecting answers the URLs it maps with a redirect, and passes the
// others to next.
type redirecting struct {
	to   map[string]string
	next http.RoundTripper
}

func (r *redirecting) RoundTrip(req *http.Request) (*http.Response, error) {
	if to, ok := r.to[req.URL.String()]; ok {
		return &http.Response{StatusCode: http.StatusMovedPermanently, Header: http.Header{"Location": {to}},
			Body: http.NoBody, Request: req}, nil
	}
	return r.next.RoundTrip(req)
}
