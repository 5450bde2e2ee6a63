package sitemap

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/robotsmw/robotsmw/policy"
)

// A testSite serves fixed files; "{{host}}" in a body becomes the server's
// own base URL, "{{other}}" that of the site set as other.
type testSite struct {
	t     *testing.T
	srv   *httptest.Server
	other *testSite

	mu    sync.Mutex // guards files and hits
	files map[string]*testFile
	hits  map[string]int
}

type testFile struct {
	status  int
	body    string
	header  map[string]string
	fail503 int    // answer 503 this many times first
	to      string // redirect target (path or URL)
	etag    string // answer If-None-Match with 304
}

func newTestSite(t *testing.T, files map[string]*testFile) *testSite {
	t.Helper()
	s := &testSite{t: t, files: files, hits: make(map[string]int)}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *testSite) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	key := r.URL.RequestURI()
	s.hits[key]++
	f, ok := s.files[key]
	var fail bool
	if ok && f.fail503 > 0 {
		f.fail503--
		fail = true
	}
	s.mu.Unlock()
	switch {
	case !ok:
		http.NotFound(w, r)
	case fail:
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(http.StatusServiceUnavailable)
	case f.to != "":
		http.Redirect(w, r, s.expand(f.to), http.StatusMovedPermanently)
	case f.etag != "" && r.Header.Get("If-None-Match") == f.etag:
		w.WriteHeader(http.StatusNotModified)
	default:
		for k, v := range f.header {
			w.Header().Set(k, v)
		}
		if f.etag != "" {
			w.Header().Set("ETag", f.etag)
		}
		if f.status != 0 {
			w.WriteHeader(f.status)
		}
		fmt.Fprint(w, s.expand(f.body))
	}
}

func (s *testSite) expand(body string) string {
	body = strings.ReplaceAll(body, "{{host}}", s.srv.URL)
	if s.other != nil {
		body = strings.ReplaceAll(body, "{{other}}", s.other.srv.URL)
	}
	return body
}

func (s *testSite) hit(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hits[path]
}

func urlsetOf(locs ...string) string {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`)
	for _, l := range locs {
		fmt.Fprintf(&b, "<url><loc>%s</loc></url>", l)
	}
	b.WriteString("</urlset>")
	return b.String()
}

func indexOf(locs ...string) string {
	var b strings.Builder
	b.WriteString(`<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`)
	for _, l := range locs {
		fmt.Fprintf(&b, "<sitemap><loc>%s</loc></sitemap>", l)
	}
	b.WriteString("</sitemapindex>")
	return b.String()
}

// walkSite walks s with w and returns the page URLs with the site's base
// replaced by "H" (and the other site's by "O"), sorted.
func walkSite(t *testing.T, w *Walker, s *testSite) ([]string, Stats, error) {
	t.Helper()
	unpaced(w)
	var mu sync.Mutex
	var got []string
	st, err := w.Walk(context.Background(), s.srv.URL, func(e Entry) error {
		mu.Lock()
		defer mu.Unlock()
		loc := strings.ReplaceAll(e.Loc, s.srv.URL, "H")
		if s.other != nil {
			loc = strings.ReplaceAll(loc, s.other.srv.URL, "O")
		}
		got = append(got, loc)
		return nil
	})
	slices.Sort(got)
	return got, st, err
}

// unpaced turns the Walker's own pacing off, unless the test set an
// Interval: these tests are about what is walked; pacing_test.go is about
// when.
func unpaced(w *Walker) {
	if w.Interval == 0 {
		w.Interval = -1
	}
}

// noSleep records the waits of a Walker instead of sleeping.
func noSleep(w *Walker) *[]time.Duration {
	unpaced(w)
	var waits []time.Duration
	var mu sync.Mutex
	w.sleep = func(ctx context.Context, d time.Duration) error {
		mu.Lock()
		waits = append(waits, d)
		mu.Unlock()
		return ctx.Err()
	}
	return &waits
}

func TestWalkIndexFormats(t *testing.T) {
	s := newTestSite(t, map[string]*testFile{
		"/robots.txt": {body: "User-agent: *\nDisallow:\nSitemap: {{host}}/index.xml\n"},
		"/index.xml":  {body: indexOf("{{host}}/a.xml.gz", "/b.txt", "c.rss")},
		"/a.xml.gz":   {body: gz(urlsetOf("/a1", "a2"))},
		"/b.txt":      {body: "{{host}}/b1\n{{host}}/a1\n"},
		"/c.rss": {body: `<rss version="2.0"><channel><link>{{host}}/</link>
<item><link>{{host}}/c1</link></item><item><link>/c2</link></item></channel></rss>`},
	})
	w := &Walker{}
	var reports []string
	w.OnSitemap = func(r SitemapReport) {
		reports = append(reports, fmt.Sprintf("%s depth %d index %v pages %d children %d",
			strings.TrimPrefix(r.URL, s.srv.URL), r.Depth, r.Index, r.Pages, r.Children))
	}
	got, st, err := walkSite(t, w, s)
	if err != nil {
		t.Fatalf("Walk: %v", err)
	}
	slices.Sort(reports)
	wantReports := []string{
		"/a.xml.gz depth 1 index false pages 2 children 0",
		"/b.txt depth 1 index false pages 2 children 0",
		"/c.rss depth 1 index false pages 2 children 0",
		"/index.xml depth 0 index true pages 0 children 3",
	}
	if !slices.Equal(reports, wantReports) {
		t.Errorf("OnSitemap saw %q, want %q", reports, wantReports)
	}
	want := []string{"H/a1", "H/a2", "H/b1", "H/c1", "H/c2"}
	if !slices.Equal(got, want) {
		t.Errorf("Walk pages = %q, want %q", got, want)
	}
	if st.Sitemaps != 4 || st.URLs != 5 || st.Dropped.Duplicate != 1 || st.Failed != 0 {
		t.Errorf("Walk stats = %+v, want 4 sitemaps, 5 URLs, 1 duplicate, 0 failed", st)
	}
}

func TestWalkRobotsLines(t *testing.T) {
	// Duplicate and relative Sitemap lines, a comment, junk, robots.txt
	// listed as a sitemap, and robots.txt redirected: relative lines resolve
	// against where it redirected to (docs/sitemaps.md, cases 3, 11, 21,
	// case 74).
	s := newTestSite(t, map[string]*testFile{
		"/robots.txt": {to: "/new/robots.txt"},
		"/new/robots.txt": {body: `Sitemap: sm.xml
sitemap: {{host}}/new/sm.xml
Sitemap: /top.xml  # comment
Sitemap: Sitemap: {{host}}/junk.xml
Sitemap: {{host}}/robots.txt
User-agent: *
Disallow:
`},
		"/new/sm.xml": {body: urlsetOf("{{host}}/p1")},
		"/top.xml":    {body: urlsetOf("{{host}}/p2")},
	})
	got, st, err := walkSite(t, &Walker{}, s)
	if err != nil {
		t.Fatalf("Walk: %v", err)
	}
	if want := []string{"H/p1", "H/p2"}; !slices.Equal(got, want) {
		t.Errorf("Walk pages = %q, want %q", got, want)
	}
	if st.Sitemaps != 2 || st.Skipped.Duplicate != 1 {
		t.Errorf("Walk stats = %+v, want 2 sitemaps, 1 skipped duplicate (robots.txt)", st)
	}
	if n := s.hit("/new/sm.xml"); n != 1 {
		t.Errorf("/new/sm.xml fetched %d times, want 1", n)
	}
	if n := s.hit("/robots.txt"); n != 1 {
		t.Errorf("/robots.txt fetched %d times, want 1", n)
	}
}

// A Sitemap line that is not UTF-8 is skipped, as Scrapy skips it: it is
// not fetched percent-encoded (/%FF.xml), nor reported as a failed sitemap.
func TestWalkRobotsLineNotUTF8(t *testing.T) {
	s := newTestSite(t, map[string]*testFile{
		"/robots.txt": {body: "Sitemap: {{host}}/\xff.xml\nSitemap: /caf\xe9.xml\nSitemap: /ok.xml\n"},
		"/ok.xml":     {body: urlsetOf("{{host}}/p1")},
		"/%FF.xml":    {body: urlsetOf("{{host}}/wrong")},
	})
	got, st, err := walkSite(t, &Walker{Options: Options{NoFallback: true}}, s)
	if err != nil {
		t.Fatalf("Walk: %v", err)
	}
	if want := []string{"H/p1"}; !slices.Equal(got, want) {
		t.Errorf("Walk pages = %q, want %q", got, want)
	}
	if st.Sitemaps != 1 || st.Failed != 0 {
		t.Errorf("Walk stats = %+v, want 1 sitemap, none failed", st)
	}
	for _, p := range []string{"/%FF.xml", "/caf%E9.xml"} {
		if n := s.hit(p); n != 0 {
			t.Errorf("%s fetched %d times, want 0", p, n)
		}
	}
}

func TestWalkLoops(t *testing.T) {
	// An index that lists itself, a cycle a → b → a, and a child that
	// redirects to an ancestor (docs/sitemaps.md, cases 72, 73).
	s := newTestSite(t, map[string]*testFile{
		"/robots.txt": {body: "Sitemap: /a.xml\n"},
		"/a.xml":      {body: indexOf("/a.xml", "/b.xml", "/moved.xml")},
		"/b.xml":      {body: indexOf("/a.xml", "/leaf.xml")},
		"/moved.xml":  {to: "/b.xml"},
		"/leaf.xml":   {body: urlsetOf("/p")},
	})
	got, st, err := walkSite(t, &Walker{}, s)
	if err != nil {
		t.Fatalf("Walk: %v", err)
	}
	if want := []string{"H/p"}; !slices.Equal(got, want) {
		t.Errorf("Walk pages = %q, want %q", got, want)
	}
	for _, p := range []string{"/a.xml", "/b.xml", "/leaf.xml"} {
		if n := s.hit(p); n != 1 {
			t.Errorf("%s fetched %d times, want 1", p, n)
		}
	}
	if st.Skipped.Duplicate != 3 {
		t.Errorf("Walk Skipped.Duplicate = %d, want 3 (a lists a, b lists a, moved → b)", st.Skipped.Duplicate)
	}
}

func TestWalkDepth(t *testing.T) {
	files := map[string]*testFile{"/robots.txt": {body: "Sitemap: /i0.xml\n"}}
	for i := range 12 {
		files[fmt.Sprintf("/i%d.xml", i)] = &testFile{body: indexOf(fmt.Sprintf("/i%d.xml", i+1))}
	}
	s := newTestSite(t, files)
	_, st, err := walkSite(t, &Walker{Options: Options{MaxDepth: 3}}, s)
	if !errors.Is(err, ErrTooDeep) {
		t.Errorf("Walk error = %v, want ErrTooDeep", err)
	}
	if st.Sitemaps != 4 || st.Skipped.Limit != 1 {
		t.Errorf("Walk stats = %+v, want 4 sitemaps read, 1 skipped for depth (docs/sitemaps.md, case 75)", st)
	}
}

func TestWalkDisallowedSitemap(t *testing.T) {
	s := newTestSite(t, map[string]*testFile{
		// A path with dot segments is judged as the server reads it.
		"/robots.txt":      {body: "User-agent: *\nDisallow: /private/\nDisallow: /secret\nSitemap: /private/sm.xml\nSitemap: /sm.xml\nSitemap: /x/%2e%2e/private/sm.xml\n"},
		"/private/sm.xml":  {body: urlsetOf("/x")},
		"/sm.xml":          {body: urlsetOf("/a", "/secret/b", "/c", "/c/../secret/d")},
		"/sitemap.xml":     {body: urlsetOf("/never")},
		"/secret/more.xml": {body: urlsetOf("/y")},
	})
	got, st, err := walkSite(t, &Walker{}, s)
	if err != nil {
		t.Fatalf("Walk: %v", err)
	}
	if want := []string{"H/a", "H/c"}; !slices.Equal(got, want) {
		t.Errorf("Walk pages = %q, want %q", got, want)
	}
	if n := s.hit("/private/sm.xml"); n != 0 {
		t.Errorf("disallowed sitemap fetched %d times, want 0", n)
	}
	if n := s.hit("/x/%2e%2e/private/sm.xml") + s.hit("/x/../private/sm.xml"); n != 0 {
		t.Errorf("disallowed sitemap fetched by a path with dot segments %d times, want 0", n)
	}
	if st.Skipped.Robots != 2 || st.Dropped.Robots != 2 {
		t.Errorf("Walk stats = %+v, want 2 sitemaps and 2 pages dropped by robots.txt", st)
	}
}

// A robots.txt fetch its Client abandons (another crawl sharing the
// Walker's Cache ended: see policy.Cache.Client) is no answer of the site:
// the walk asks again and reads the sitemaps robots.txt lists.
func TestWalkAbandonedRobotsFetch(t *testing.T) {
	s := newTestSite(t, map[string]*testFile{
		"/robots.txt": {body: "User-agent: *\nDisallow: /private\nSitemap: /sm.xml\n"},
		"/sm.xml":     {body: urlsetOf("/a", "/private/b")},
	})
	var abandoned atomic.Int32
	client := &http.Client{Transport: roundTripper(func(r *http.Request) (*http.Response, error) {
		if r.URL.Path == "/robots.txt" && abandoned.Add(1) <= 2 {
			return nil, fmt.Errorf("the crawl that asked for it ended: %w", context.Canceled)
		}
		return http.DefaultTransport.RoundTrip(r)
	})}
	w := &Walker{Client: client, Robots: &policy.Cache{Client: client}}
	got, st, err := walkSite(t, w, s)
	if err != nil || !slices.Equal(got, []string{"H/a"}) {
		t.Errorf("Walk with robots.txt's fetch abandoned twice = %q, %v; want H/a and no error", got, err)
	}
	if n := s.hit("/robots.txt"); n != 1 || abandoned.Load() != 3 {
		t.Errorf("robots.txt reached the site %d times after %d tries, want once after 3", n, abandoned.Load())
	}
	if st.Dropped.Robots != 1 {
		t.Errorf("Walk stats = %+v, want 1 page dropped by robots.txt", st)
	}
}

// roundTripper is an http.RoundTripper made of a function.
type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestWalkRetryAfter(t *testing.T) {
	s := newTestSite(t, map[string]*testFile{
		"/robots.txt": {body: "Sitemap: /index.xml\n"},
		"/index.xml":  {body: indexOf("/busy.xml", "/gone.xml", "/ok.xml")},
		"/busy.xml":   {body: urlsetOf("/b"), fail503: 1},
		"/ok.xml":     {body: urlsetOf("/o")},
	})
	w := &Walker{}
	waits := noSleep(w)
	got, st, err := walkSite(t, w, s)
	if want := []string{"H/b", "H/o"}; !slices.Equal(got, want) {
		t.Errorf("Walk pages = %q, want %q", got, want)
	}
	if !slices.Equal(*waits, []time.Duration{time.Second}) {
		t.Errorf("Walk waited %v, want [1s] (Retry-After: 1)", *waits)
	}
	// The 404 child is reported; its siblings were walked (case 78).
	var we *WalkError
	var fe *FetchError
	if !errors.As(err, &we) || !errors.As(err, &fe) || fe.StatusCode != 404 || !strings.HasSuffix(fe.URL, "/gone.xml") {
		t.Fatalf("Walk error = %v, want a *WalkError with the 404 of /gone.xml", err)
	}
	if st.Failed != 1 || we.Failed != 1 {
		t.Errorf("Walk stats = %+v, want 1 failed", st)
	}
}

func TestWalkRetryGivesUp(t *testing.T) {
	s := newTestSite(t, map[string]*testFile{
		"/robots.txt": {body: "Sitemap: /busy.xml\n"},
		"/busy.xml":   {body: urlsetOf("/b"), fail503: 10},
	})
	w := &Walker{}
	waits := noSleep(w)
	_, _, err := walkSite(t, w, s)
	var fe *FetchError
	if !errors.As(err, &fe) || fe.StatusCode != 503 {
		t.Fatalf("Walk error = %v, want a FetchError with status 503", err)
	}
	if n := s.hit("/busy.xml"); n != defaultRetries+1 || len(*waits) != defaultRetries {
		t.Errorf("busy sitemap fetched %d times with waits %v, want %d fetches", n, *waits, defaultRetries+1)
	}
}

func TestWalkCrossHost(t *testing.T) {
	// The sitemap of H lists pages on O. O's robots.txt lists H's sitemap
	// for /cross.xml only: cross-submission (sitemaps.org).
	h := newTestSite(t, map[string]*testFile{
		"/robots.txt": {body: "Sitemap: /own.xml\nSitemap: /cross.xml\n"},
		"/own.xml":    {body: urlsetOf("/mine", "{{other}}/theirs-1", "{{other}}/theirs-2")},
		"/cross.xml":  {body: urlsetOf("{{other}}/submitted")},
	})
	o := newTestSite(t, map[string]*testFile{
		"/robots.txt": {body: "Sitemap: {{other}}/cross.xml\n"},
	})
	h.other, o.other = o, h
	got, st, err := walkSite(t, &Walker{}, h)
	if err != nil {
		t.Fatalf("Walk: %v", err)
	}
	if want := []string{"H/mine", "O/submitted"}; !slices.Equal(got, want) {
		t.Errorf("Walk pages = %q, want %q", got, want)
	}
	if st.Dropped.Scope != 2 {
		t.Errorf("Walk Dropped.Scope = %d, want 2", st.Dropped.Scope)
	}
	if n := o.hit("/robots.txt"); n != 1 {
		t.Errorf("other host's robots.txt fetched %d times, want 1", n)
	}
}

func TestWalkForeignChild(t *testing.T) {
	// An index child on another host is not fetched (docs/sitemaps.md,
	// case 76); a sitemap robots.txt announces on another host is, and may
	// list the announcing host's pages, but not its own host's (an
	// attacker's robots.txt must not make the walk seed another host).
	o := newTestSite(t, map[string]*testFile{
		"/robots.txt": {body: ""},
		"/cdn.xml":    {body: urlsetOf("{{other}}/page", "{{host}}/cdn-page")},
		"/child.xml":  {body: urlsetOf("{{other}}/never")},
	})
	h := newTestSite(t, map[string]*testFile{
		"/robots.txt": {body: "Sitemap: {{other}}/cdn.xml\nSitemap: /index.xml\n"},
		"/index.xml":  {body: indexOf("{{other}}/child.xml")},
	})
	h.other, o.other = o, h
	got, st, err := walkSite(t, &Walker{}, h)
	if err != nil {
		t.Fatalf("Walk: %v", err)
	}
	if want := []string{"H/page"}; !slices.Equal(got, want) || st.Dropped.Scope != 1 {
		t.Errorf("Walk pages = %q, Dropped.Scope = %d; want %q and 1", got, st.Dropped.Scope, want)
	}
	if n := o.hit("/child.xml"); n != 0 || st.Skipped.Scope != 1 {
		t.Errorf("foreign child fetched %d times, Skipped.Scope = %d; want 0 and 1", n, st.Skipped.Scope)
	}
}

func TestWalkStrict(t *testing.T) {
	s := newTestSite(t, map[string]*testFile{
		"/robots.txt":              {body: "Sitemap: /catalog/sitemap.xml?x=1\n"},
		"/catalog/sitemap.xml?x=1": {body: urlsetOf("/catalog/show?item=1", "/image/show", "/catalog", "/catalog/")},
	})
	got, st, err := walkSite(t, &Walker{Options: Options{Strict: true}}, s)
	if err != nil {
		t.Fatalf("Walk: %v", err)
	}
	if want := []string{"H/catalog/", "H/catalog/show?item=1"}; !slices.Equal(got, want) {
		t.Errorf("Walk pages = %q, want %q (docs/sitemaps.md, cases 91, 92)", got, want)
	}
	if st.Dropped.Scope != 2 {
		t.Errorf("Walk Dropped.Scope = %d, want 2", st.Dropped.Scope)
	}
	got, _, _ = walkSite(t, &Walker{}, s)
	if len(got) != 4 {
		t.Errorf("Walk pages without Strict = %q, want all 4", got)
	}
}

func TestWalkFilters(t *testing.T) {
	s := newTestSite(t, map[string]*testFile{
		"/robots.txt": {body: "Sitemap: /sm.xml\n"},
		"/sm.xml": {body: `<urlset>
<url><loc>/blog/old</loc><lastmod>2020-01-01</lastmod></url>
<url><loc>/blog/new</loc><lastmod>2026-01-01T10:00:00Z</lastmod></url>
<url><loc>/blog/undated</loc></url>
<url><loc>/blog/doc.pdf</loc></url>
<url><loc>/shop/item</loc></url>
</urlset>`},
	})
	w := &Walker{Options: Options{
		Since:   time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC),
		Include: []string{"/blog/"},
		Exclude: []string{"/*.pdf$"},
	}}
	got, st, err := walkSite(t, w, s)
	if err != nil {
		t.Fatalf("Walk: %v", err)
	}
	if want := []string{"H/blog/new", "H/blog/undated"}; !slices.Equal(got, want) {
		t.Errorf("Walk pages = %q, want %q", got, want)
	}
	if st.Dropped.Filter != 3 {
		t.Errorf("Walk Dropped.Filter = %d, want 3", st.Dropped.Filter)
	}
}

func TestWalkMaxURLs(t *testing.T) {
	s := newTestSite(t, map[string]*testFile{
		"/robots.txt": {body: "Sitemap: /index.xml\n"},
		"/index.xml":  {body: indexOf("/a.xml", "/b.xml")},
		"/a.xml":      {body: urlsetOf("/1", "/2", "/3")},
		"/b.xml":      {body: urlsetOf("/4")},
	})
	got, st, _ := walkSite(t, &Walker{Options: Options{MaxURLs: 2}}, s)
	if len(got) != 2 || st.URLs != 2 || st.Dropped.Limit != 1 || st.Skipped.Limit != 1 {
		t.Errorf("Walk with MaxURLs 2 = %q, %+v; want 2 URLs, 1 dropped, 1 sitemap skipped", got, st)
	}
	if n := s.hit("/b.xml"); n != 0 {
		t.Errorf("/b.xml fetched %d times after MaxURLs, want 0", n)
	}
}

func TestWalkFallback(t *testing.T) {
	s := newTestSite(t, map[string]*testFile{
		"/sitemap.xml": {body: urlsetOf("/a")},
	})
	got, _, err := walkSite(t, &Walker{}, s)
	if err != nil || !slices.Equal(got, []string{"H/a"}) {
		t.Errorf("Walk with no robots.txt = %q, %v; want [H/a] from /sitemap.xml", got, err)
	}
	got, st, err := walkSite(t, &Walker{Options: Options{NoFallback: true}}, s)
	if err != nil || len(got) != 0 || st.Sitemaps != 0 {
		t.Errorf("Walk with NoFallback = %q, %+v, %v; want nothing", got, st, err)
	}
	empty := newTestSite(t, map[string]*testFile{"/robots.txt": {body: "User-agent: *\nDisallow:\n"}})
	got, st, err = walkSite(t, &Walker{}, empty)
	if err != nil || len(got) != 0 || st.Failed != 0 {
		t.Errorf("Walk of a site without sitemaps = %q, %+v, %v; want nothing and no error", got, st, err)
	}
}

func TestWalkConditional(t *testing.T) {
	s := newTestSite(t, map[string]*testFile{
		"/robots.txt": {body: "Sitemap: /index.xml\n"},
		"/index.xml":  {body: indexOf("/a.xml", "/b.xml"), etag: `"i1"`},
		"/a.xml":      {body: urlsetOf("/a"), etag: `"a1"`},
		"/b.xml":      {body: urlsetOf("/b"), header: map[string]string{"Last-Modified": "Mon, 02 Jan 2006 15:04:05 GMT"}},
	})
	w := &Walker{}
	got, _, err := walkSite(t, w, s)
	if err != nil || len(got) != 2 {
		t.Fatalf("first Walk = %q, %v", got, err)
	}
	s.mu.Lock()
	s.files["/b.xml"].body = urlsetOf("/b", "/b2")
	s.mu.Unlock()
	got, st, err := walkSite(t, w, s)
	if err != nil {
		t.Fatalf("second Walk: %v", err)
	}
	// a.xml answers 304; b.xml has no ETag and the server ignores
	// If-Modified-Since, so it is read again; the index is always read.
	if want := []string{"H/b", "H/b2"}; !slices.Equal(got, want) || st.NotModified != 1 || st.Sitemaps != 2 {
		t.Errorf("second Walk = %q, %+v; want %q, 1 not modified, 2 read", got, st, want)
	}
}

func TestWalkStops(t *testing.T) {
	s := newTestSite(t, map[string]*testFile{
		"/robots.txt": {body: "Sitemap: /a.xml\n"},
		"/a.xml":      {body: urlsetOf("/1", "/2", "/3")},
	})
	stop := errors.New("enough")
	n := 0
	st, err := (&Walker{}).Walk(context.Background(), s.srv.URL, func(Entry) error {
		n++
		if n == 2 {
			return stop
		}
		return nil
	})
	if err != stop || st.URLs != 1 {
		t.Errorf("Walk with fn failing at the 2nd page = %+v, %v; want 1 URL and fn's error", st, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := (&Walker{}).Walk(ctx, s.srv.URL, func(Entry) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Errorf("Walk with a cancelled context = %v, want context.Canceled", err)
	}
	if _, err := (&Walker{}).Walk(ctx, "ftp://x", nil); err == nil {
		t.Errorf("Walk(ftp://x) = nil error, want one")
	}
}

func TestWalkRobotsUnreachable(t *testing.T) {
	s := newTestSite(t, map[string]*testFile{
		"/robots.txt":  {status: 500},
		"/sitemap.xml": {body: urlsetOf("/a")},
	})
	got, st, err := walkSite(t, &Walker{}, s)
	var fe *FetchError
	if len(got) != 0 || st.Failed != 1 || !errors.As(err, &fe) || !strings.HasSuffix(fe.URL, "/robots.txt") {
		t.Errorf("Walk with robots.txt 500 = %q, %+v, %v; want nothing fetched and the robots.txt error", got, st, err)
	}
}

func TestMatchPattern(t *testing.T) {
	for _, tc := range []struct {
		pattern, target string
		want            bool
	}{
		{"/blog/", "/blog/x", true},
		{"/blog/", "/blo", false},
		{"/*.pdf$", "/a/b.pdf", true},
		{"/*.pdf$", "/a/b.pdf?x", false},
		{"/*.pdf", "/a/b.pdf?x", true},
		{"*", "/anything", true},
		{"/a*b*c$", "/axxbyyc", true},
		{"/a*b*c$", "/axxbyyca", false},
		{"/$", "/", true},
		{"/$", "/x", false},
		{"/a**", "/a", true},
	} {
		if got := matchPattern(tc.pattern, tc.target); got != tc.want {
			t.Errorf("matchPattern(%q, %q) = %v, want %v", tc.pattern, tc.target, got, tc.want)
		}
	}
}

func TestRelated(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{"www.example.com", "blog.example.com", true},
		{"example.com", "www.example.com", true},
		{"this.github.io", "that.github.io", false},
		{"example.com", "example.org", false},
		{"127.0.0.1", "127.0.0.1", true},
		{"127.0.0.1", "127.0.0.2", false},
	} {
		if got := related(tc.a, tc.b); got != tc.want {
			t.Errorf("related(%q, %q) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestWalkMaxURLsThenAgain(t *testing.T) {
	// A sitemap cut short by MaxURLs is not remembered as read: the next
	// walk reads it again instead of getting a 304 for it.
	locs := make([]string, 10)
	for i := range locs {
		locs[i] = fmt.Sprintf("/p%d", i)
	}
	s := newTestSite(t, map[string]*testFile{
		"/robots.txt": {body: "Sitemap: /sm.xml\n"},
		"/sm.xml":     {body: urlsetOf(locs...), etag: `"v1"`},
	})
	w := &Walker{Options: Options{MaxURLs: 4}}
	for i := range 2 {
		got, st, err := walkSite(t, w, s)
		if err != nil || len(got) != 4 || st.NotModified != 0 {
			t.Errorf("walk %d with MaxURLs 4 = %d pages, %+v, %v; want 4 pages, not a 304", i+1, len(got), st, err)
		}
	}
	w.MaxURLs = 0
	if got, _, _ := walkSite(t, w, s); len(got) != 10 {
		t.Errorf("walk without MaxURLs = %d pages, want 10", len(got))
	}
	if _, st, _ := walkSite(t, w, s); st.NotModified != 1 {
		t.Errorf("walk after a full read: NotModified = %d, want 1", st.NotModified)
	}
}

func TestWalkCycleAtMaxDepth(t *testing.T) {
	// A child at the depth limit that points back to an index walked
	// already is a duplicate, not a depth failure.
	s := newTestSite(t, map[string]*testFile{
		"/robots.txt": {body: "Sitemap: /i.xml\n"},
		"/i.xml":      {body: indexOf("/d1.xml")},
		"/d1.xml":     {body: indexOf("/d2.xml")},
		"/d2.xml":     {body: indexOf("/i.xml", "/leaf.xml")},
		"/leaf.xml":   {body: urlsetOf("/p")},
	})
	_, st, err := walkSite(t, &Walker{Options: Options{MaxDepth: 2}}, s)
	if !errors.Is(err, ErrTooDeep) || st.Failed != 1 || st.Skipped.Duplicate != 1 {
		t.Errorf("Walk = %+v, %v; want 1 failure (leaf.xml too deep) and the cycle counted as a duplicate", st, err)
	}
}

func TestWalkNoRetries(t *testing.T) {
	s := newTestSite(t, map[string]*testFile{
		"/robots.txt": {body: "Sitemap: /busy.xml\n"},
		"/busy.xml":   {body: urlsetOf("/b"), fail503: 10},
	})
	w := &Walker{Options: Options{Retries: -1}}
	waits := noSleep(w)
	_, _, err := walkSite(t, w, s)
	var fe *FetchError
	if !errors.As(err, &fe) || fe.StatusCode != 503 || s.hit("/busy.xml") != 1 || len(*waits) != 0 {
		t.Errorf("Walk with Retries -1 = %v after %d fetches; want the 503 after 1 fetch", err, s.hit("/busy.xml"))
	}
}

func TestWalkFallbackSoft404(t *testing.T) {
	// /sitemap.xml answering 200 with an HTML page (or text that is no
	// URL) is no sitemap and no error: nothing was read, nothing dropped.
	for _, body := range []string{"<html><body>Not found</body></html>", "Page not found\nSorry about that\n"} {
		s := newTestSite(t, map[string]*testFile{
			"/robots.txt":  {body: "User-agent: *\nDisallow:\n"},
			"/sitemap.xml": {body: body},
		})
		var reports int
		w := &Walker{Options: Options{OnSitemap: func(SitemapReport) { reports++ }}}
		_, st, err := walkSite(t, w, s)
		if err != nil || st.Sitemaps != 0 || st.Failed != 0 || reports != 0 || st.Dropped.Total() != 0 {
			t.Errorf("Walk with a soft-404 /sitemap.xml %q = %+v, %v, %d reports; want nothing read or dropped, no error", body, st, err, reports)
		}
	}
}

func TestWalkConcurrencyAcrossHosts(t *testing.T) {
	// Sitemaps on two hosts are fetched at the same time, those of one
	// host one after the other. Each sitemap handler waits (at most 10 s,
	// a deadlock guard) until the other host has a fetch in flight.
	type host struct {
		mu       sync.Mutex
		inFlight int
		peak     int
		arrived  chan struct{}
		once     sync.Once
	}
	hosts := [2]*host{{arrived: make(chan struct{})}, {arrived: make(chan struct{})}}
	var overlapped [2]bool
	var srvs [2]*httptest.Server
	for i := range hosts {
		h, other := hosts[i], hosts[1-i]
		srvs[i] = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/robots.txt":
				if i == 0 {
					fmt.Fprintf(w, "Sitemap: /a.xml\nSitemap: /b.xml\nSitemap: %s/c.xml\n", srvs[1].URL)
				}
				return
			}
			h.mu.Lock()
			h.inFlight++
			h.peak = max(h.peak, h.inFlight)
			h.mu.Unlock()
			h.once.Do(func() { close(h.arrived) })
			select {
			case <-other.arrived:
				h.mu.Lock()
				overlapped[i] = true
				h.mu.Unlock()
			case <-time.After(10 * time.Second):
			}
			fmt.Fprint(w, urlsetOf("/p"+r.URL.Path))
			h.mu.Lock()
			h.inFlight--
			h.mu.Unlock()
		}))
		t.Cleanup(srvs[i].Close)
	}
	// Both servers are 127.0.0.1, one host name for pacing (pacing.go, one
	// request in flight per host name); this test is about the walk's
	// concurrency across hosts, so the Walker's pacing is off.
	st, err := (&Walker{Options: Options{Interval: -1}}).Walk(context.Background(), srvs[0].URL, func(Entry) error { return nil })
	if err != nil || st.Sitemaps != 3 {
		t.Fatalf("Walk = %+v, %v; want 3 sitemaps read", st, err)
	}
	for i, h := range hosts {
		h.mu.Lock()
		if h.peak != 1 || !overlapped[i] {
			t.Errorf("host %d: %d sitemap fetches at once, overlapped with the other host: %v; want 1 and true", i, h.peak, overlapped[i])
		}
		h.mu.Unlock()
	}
}

// closeSignal is a transport that closes closed when a response's body to
// a request for path is closed.
type closeSignal struct {
	next   http.RoundTripper
	path   string
	closed chan struct{}
	once   sync.Once
}

func (c *closeSignal) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := c.next.RoundTrip(r)
	if err == nil && r.URL.Path == c.path {
		resp.Body = &signalBody{ReadCloser: resp.Body, c: c}
	}
	return resp, err
}

type signalBody struct {
	io.ReadCloser
	c *closeSignal
}

func (b *signalBody) Close() error {
	err := b.ReadCloser.Close()
	b.c.once.Do(func() { close(b.c.closed) })
	return err
}

func TestWalkSlowFnDoesNotHoldTheResponse(t *testing.T) {
	// fn takes the first page only once the sitemap's response was closed:
	// the walk must read the rest of a file it cannot hand over rather
	// than keep the response open while fn is behind (a paced client's
	// place for the host, which fn's own requests may need, is given
	// back with it), and the time fn takes must not count against
	// Timeout, which bounds the fetch.
	const n = 5000
	locs := make([]string, n)
	for i := range locs {
		locs[i] = fmt.Sprintf("/p%d", i)
	}
	s := newTestSite(t, map[string]*testFile{
		"/robots.txt": {body: "Sitemap: /sm.xml\n"},
		"/sm.xml":     {body: urlsetOf(locs...)},
	})
	sig := &closeSignal{next: http.DefaultTransport, path: "/sm.xml", closed: make(chan struct{})}
	const timeout = 300 * time.Millisecond
	w := &Walker{Client: &http.Client{Transport: sig}, Options: Options{Concurrency: 1, Timeout: timeout}}
	unpaced(w)
	got, first := 0, true
	st, err := w.Walk(context.Background(), s.srv.URL, func(Entry) error {
		if first {
			first = false
			select {
			case <-sig.closed:
			case <-time.After(10 * time.Second):
				t.Error("Walk kept the sitemap's response open while fn was behind")
				return errors.New("stop")
			}
			time.Sleep(2 * timeout) // fn slower than the fetch's Timeout
		}
		got++
		return nil
	})
	if err != nil || got != n || st.URLs != n {
		t.Errorf("Walk with a slow fn = %+v, %v, %d pages; want %d pages and no error", st, err, got, n)
	}
}

func TestWalkCountsEntriesWithoutURL(t *testing.T) {
	// Every entry left out is counted: those the Reader finds no usable
	// URL in (missing, empty, too long, a text line that is no URL) and
	// those whose URL the Reader had to repair (bytes that are not UTF-8,
	// read as U+FFFD: a URL the site never wrote).
	long := "/" + strings.Repeat("a", 2100)
	huge := "/" + strings.Repeat("b", 9000)
	s := newTestSite(t, map[string]*testFile{
		"/robots.txt": {body: "Sitemap: /x.xml\nSitemap: /t.txt\n"},
		"/x.xml": {body: "<urlset><url><loc>{{host}}" + long + "</loc></url><url><loc>{{host}}" + huge +
			"</loc></url><url><loc>/ok1</loc></url><url><loc></loc></url><url><lastmod>2020-01-01</lastmod></url>" +
			"<url><loc>/bad\xff</loc></url></urlset>"},
		"/t.txt": {body: "{{host}}" + long + "\n{{host}}" + huge + "\n{{host}}/ok2\n\n/relative\nftp://x/y\n{{host}}/bad\xfe\n"},
	})
	got, st, err := walkSite(t, &Walker{}, s)
	if err != nil || !slices.Equal(got, []string{"H/ok1", "H/ok2"}) {
		t.Fatalf("Walk = %q, %v; want H/ok1 and H/ok2", got, err)
	}
	// x.xml: too long, far too long, empty, none, not UTF-8; t.txt: too
	// long, far too long, relative, ftp, not UTF-8 (the blank line is none).
	if st.Dropped.Invalid != 10 || st.Dropped.Total() != 10 {
		t.Errorf("Walk's Dropped = %+v, want 10 Invalid", st.Dropped)
	}

	// An index's entries without a URL are sitemaps skipped, not pages.
	s = newTestSite(t, map[string]*testFile{
		"/robots.txt": {body: "Sitemap: /index.xml\n"},
		"/index.xml":  {body: "<sitemapindex><sitemap></sitemap><sitemap><loc></loc></sitemap><sitemap><loc>/a.xml</loc></sitemap></sitemapindex>"},
		"/a.xml":      {body: urlsetOf("/ok")},
	})
	got, st, err = walkSite(t, &Walker{}, s)
	if err != nil || !slices.Equal(got, []string{"H/ok"}) || st.Skipped.Invalid != 2 || st.Dropped.Total() != 0 {
		t.Errorf("Walk of an index with two entries without a URL = %q, %+v, %v; want H/ok, 2 sitemaps skipped as Invalid, no page dropped", got, st, err)
	}
}

func TestWalkRedirectToAnotherPort(t *testing.T) {
	// The site's sitemap redirects to another port of its host (O, on the
	// same loopback address): an other service, maybe internal, whose
	// pages are not the site's unless its own robots.txt says so.
	o := newTestSite(t, map[string]*testFile{
		"/robots.txt": {body: "User-agent: *\nAllow: /\n"},
		"/moved.xml":  {body: urlsetOf("{{host}}/admin/delete-all")},
	})
	h := newTestSite(t, map[string]*testFile{
		"/robots.txt": {body: "Sitemap: /sm.xml\n"},
		"/sm.xml":     {to: "{{other}}/moved.xml"},
	})
	h.other, o.other = o, h
	for _, strict := range []bool{false, true} {
		got, st, err := walkSite(t, &Walker{Options: Options{Strict: strict}}, h)
		if err != nil || len(got) != 0 || st.Dropped.Scope != 1 {
			t.Errorf("Walk(Strict %v) of a sitemap redirected to another port = %q, %+v, %v; want no page, 1 dropped by scope", strict, got, st, err)
		}
	}
}

func TestWalkSpoolKeepsMaxSize(t *testing.T) {
	// The rest of a file read into memory while fn is behind is still
	// bounded by MaxSize: a file of exactly MaxSize is read, one of a byte
	// more fails.
	const n = 5000
	locs := make([]string, n)
	for i := range locs {
		locs[i] = fmt.Sprintf("/p%d", i)
	}
	body := urlsetOf(locs...)
	for _, over := range []int64{0, 1} {
		s := newTestSite(t, map[string]*testFile{
			"/robots.txt": {body: "Sitemap: /sm.xml\n"},
			"/sm.xml":     {body: body},
		})
		sig := &closeSignal{next: http.DefaultTransport, path: "/sm.xml", closed: make(chan struct{})}
		w := &Walker{Client: &http.Client{Transport: sig}, Options: Options{Concurrency: 1, MaxSize: int64(len(body)) - over}}
		unpaced(w)
		first, got := true, 0
		_, err := w.Walk(context.Background(), s.srv.URL, func(Entry) error {
			if first {
				first = false
				select {
				case <-sig.closed: // the rest was taken into memory
				case <-time.After(10 * time.Second):
					return errors.New("the response was not closed")
				}
			}
			got++
			return nil
		})
		if ok := err == nil && got == n; ok != (over == 0) {
			t.Errorf("Walk of a %d-byte file with MaxSize %d = %d pages, %v; want all pages only if it fits", len(body), w.MaxSize, got, err)
		}
		if over == 1 && !errors.Is(err, ErrTooLarge) {
			t.Errorf("Walk of a file a byte over MaxSize = %v, want ErrTooLarge", err)
		}
	}
}
