package sitemap

import (
	"bytes"
	"errors"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// The tests of Options.Filter walk the situations of Scrapy's own
// SitemapSpider tests (tests/test_spider.py in
// https://github.com/scrapy/scrapy: test_sitemap_filter,
// test_sitemap_filter_with_alternate_links, test_sitemapindex_filter,
// test_get_sitemap_urls_from_robotstxt), written for the Walker.

// TestWalkFilterLastMod: a Filter that keeps the pages modified after
// 2008 drops the older one; without it both are passed on.
func TestWalkFilterLastMod(t *testing.T) {
	files := map[string]*testFile{
		"/robots.txt": {body: "Sitemap: /sitemap.xml\n"},
		"/sitemap.xml": {body: `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:xhtml="http://www.w3.org/1999/xhtml">
<url><loc>{{host}}/english/</loc><lastmod>2010-01-01</lastmod></url>
<url><loc>{{host}}/portuguese/</loc><lastmod>2005-01-01</lastmod></url>
</urlset>`},
	}
	for _, tc := range []struct {
		name    string
		filter  func(Entry) (Entry, bool)
		want    []string
		dropped int
	}{
		{"no filter", nil, []string{"H/english/", "H/portuguese/"}, 0},
		{"after 2008", func(e Entry) (Entry, bool) { return e, e.LastMod.Year() > 2008 }, []string{"H/english/"}, 1},
	} {
		s := newTestSite(t, files)
		got, st, err := walkSite(t, &Walker{Options: Options{Filter: tc.filter}}, s)
		if err != nil {
			t.Fatalf("%s: Walk: %v", tc.name, err)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: Walk pages = %q, want %q", tc.name, got, tc.want)
		}
		if st.Dropped.Filter != tc.dropped {
			t.Errorf("%s: Walk Dropped.Filter = %d, want %d", tc.name, st.Dropped.Filter, tc.dropped)
		}
	}
}

// TestWalkFilterRewritesToAlternate: a Filter that replaces each page by
// its German alternate, and drops the pages without one, passes on the
// German page only.
func TestWalkFilterRewritesToAlternate(t *testing.T) {
	s := newTestSite(t, map[string]*testFile{
		"/robots.txt": {body: "Sitemap: /sitemap.xml\n"},
		"/sitemap.xml": {body: `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:xhtml="http://www.w3.org/1999/xhtml">
<url><loc>{{host}}/english/article_1/</loc><lastmod>2010-01-01</lastmod>
<xhtml:link rel="alternate" hreflang="de" href="{{host}}/deutsch/article_1/"/></url>
<url><loc>{{host}}/english/article_2/</loc><lastmod>2015-01-01</lastmod></url>
</urlset>`},
	})
	var mu sync.Mutex
	var seen []Entry
	german := func(e Entry) (Entry, bool) {
		mu.Lock()
		seen = append(seen, e)
		mu.Unlock()
		for _, a := range e.Alternates {
			if strings.Contains(a.Href, "/deutsch/") {
				e.Loc = a.Href
				return e, true
			}
		}
		return e, false
	}
	got, st, err := walkSite(t, &Walker{Options: Options{Filter: german}}, s)
	if err != nil {
		t.Fatalf("Walk: %v", err)
	}
	if want := []string{"H/deutsch/article_1/"}; !slices.Equal(got, want) {
		t.Errorf("Walk pages = %q, want %q", got, want)
	}
	if st.Dropped.Filter != 1 || st.URLs != 1 {
		t.Errorf("Walk stats = %+v, want 1 URL, 1 dropped by the filter", st)
	}
	// The Filter saw absolute, typed entries.
	if len(seen) != 2 || seen[0].Loc != s.srv.URL+"/english/article_1/" || seen[0].LastMod.Year() != 2010 ||
		len(seen[0].Alternates) != 1 || seen[0].Alternates[0].Hreflang != "de" || seen[0].Priority != -1 || seen[0].Index {
		t.Errorf("Filter saw %+v, want the two pages, the first with its lastmod and German alternate", seen)
	}
}

// TestWalkFilterIndexChildren: a Filter sees the children of a sitemap
// index with their lastmod, and what it drops is not fetched.
func TestWalkFilterIndexChildren(t *testing.T) {
	files := map[string]*testFile{
		"/robots.txt": {body: "Sitemap: /sitemap.xml\n"},
		"/sitemap.xml": {body: `<?xml version="1.0" encoding="UTF-8"?>
<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
<sitemap><loc>{{host}}/sitemap1.xml</loc><lastmod>2004-01-01T20:00:00+00:00</lastmod></sitemap>
<sitemap><loc>{{host}}/sitemap2.xml</loc><lastmod>2005-01-01</lastmod></sitemap>
</sitemapindex>`},
		"/sitemap1.xml": {body: urlsetOf("/one")},
		"/sitemap2.xml": {body: urlsetOf("/two")},
	}
	for _, tc := range []struct {
		name    string
		filter  func(Entry) (Entry, bool)
		want    []string
		skipped int
	}{
		{"no filter", nil, []string{"H/one", "H/two"}, 0},
		{"children after 2004", func(e Entry) (Entry, bool) { return e, !e.Index || e.LastMod.Year() > 2004 }, []string{"H/two"}, 1},
	} {
		s := newTestSite(t, files)
		got, st, err := walkSite(t, &Walker{Options: Options{Filter: tc.filter}}, s)
		if err != nil {
			t.Fatalf("%s: Walk: %v", tc.name, err)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: Walk pages = %q, want %q", tc.name, got, tc.want)
		}
		if st.Skipped.Filter != tc.skipped {
			t.Errorf("%s: Walk Skipped.Filter = %d, want %d", tc.name, st.Skipped.Filter, tc.skipped)
		}
		if n := s.hit("/sitemap1.xml"); (n == 0) != (tc.skipped == 1) {
			t.Errorf("%s: /sitemap1.xml fetched %d times", tc.name, n)
		}
	}
}

// TestWalkFilterRewriteStaysInScope: a Filter may rewrite a page or an
// index child to a relative URL (resolved against the sitemap), but not
// take the walk off the site; its changes to Index and Tag are ignored,
// and Rules apply to the rewritten URL.
func TestWalkFilterRewriteStaysInScope(t *testing.T) {
	s := newTestSite(t, map[string]*testFile{
		"/robots.txt":    {body: "Sitemap: /dir/index.xml\n"},
		"/dir/index.xml": {body: indexOf("/dir/old.xml")},
		"/dir/new.xml":   {body: urlsetOf("/a", "/b", "/c")},
	})
	filter := func(e Entry) (Entry, bool) {
		e.Index, e.Tag = !e.Index, "filter"
		switch {
		case strings.HasSuffix(e.Loc, "/dir/old.xml"):
			e.Loc = "new.xml" // relative to /dir/index.xml
		case strings.HasSuffix(e.Loc, "/a"):
			e.Loc = "http://elsewhere.invalid/a"
		case strings.HasSuffix(e.Loc, "/b"):
			e.Loc = "/shop/b"
		case strings.HasSuffix(e.Loc, "/c"):
			e.Loc = "http://[::1" // no URL
		}
		return e, true
	}
	var tags []string
	w := &Walker{Options: Options{Filter: filter, Rules: []Rule{{Pattern: "/shop/", Tag: "shop"}}}}
	unpaced(w)
	st, err := w.Walk(t.Context(), s.srv.URL, func(e Entry) error {
		tags = append(tags, strings.TrimPrefix(e.Loc, s.srv.URL)+" "+e.Tag)
		return nil
	})
	if err != nil {
		t.Fatalf("Walk: %v", err)
	}
	if want := []string{"/shop/b shop"}; !slices.Equal(tags, want) {
		t.Errorf("Walk pages = %q, want %q", tags, want)
	}
	if st.Dropped.Scope != 1 || st.Dropped.Invalid != 1 || s.hit("/dir/new.xml") != 1 {
		t.Errorf("Walk stats = %+v, /dir/new.xml fetched %d times; want 1 out of scope, 1 invalid, the rewritten child fetched",
			st, s.hit("/dir/new.xml"))
	}
}

// TestWalkFilterAlternates: with Options.Alternates, a page the Filter
// drops takes its alternates with it, and the alternates it keeps are
// the ones passed on.
func TestWalkFilterAlternates(t *testing.T) {
	s := newTestSite(t, map[string]*testFile{
		"/robots.txt": {body: "Sitemap: /sitemap.xml\n"},
		"/sitemap.xml": {body: `<urlset xmlns:xhtml="http://www.w3.org/1999/xhtml">
<url><loc>/en/1</loc><xhtml:link rel="alternate" hreflang="de" href="/de/1"/><xhtml:link rel="alternate" hreflang="fr" href="/fr/1"/></url>
<url><loc>/en/2</loc><xhtml:link rel="alternate" hreflang="de" href="/de/2"/></url>
</urlset>`},
	})
	filter := func(e Entry) (Entry, bool) {
		e.Alternates = slices.DeleteFunc(e.Alternates, func(a Alternate) bool { return a.Hreflang != "de" })
		return e, !strings.HasSuffix(e.Loc, "/en/2")
	}
	got, _, err := walkSite(t, &Walker{Options: Options{Filter: filter, Alternates: true}}, s)
	if err != nil {
		t.Fatalf("Walk: %v", err)
	}
	if want := []string{"H/de/1", "H/en/1"}; !slices.Equal(got, want) {
		t.Errorf("Walk pages = %q, want %q", got, want)
	}
}

// TestWalkSitemapsRobotsURL: Options.Sitemaps may name a robots.txt
// (Scrapy's sitemap_urls): its Sitemap lines are walked, an upper-case
// scheme normalised and a relative line resolved against it; beside it a
// sitemap given as such is walked too.
func TestWalkSitemapsRobotsURL(t *testing.T) {
	s := newTestSite(t, map[string]*testFile{
		"/robots.txt": {body: `# Sitemap files
Sitemap: {{host}}/sitemap.xml
Sitemap: {{host}}/sitemap-product-index.xml
Sitemap: HTTP://{{hostport}}/sitemap-uppercase.xml
Sitemap: /sitemap-relative-url.xml
`},
		"/sitemap.xml":               {body: urlsetOf("/a")},
		"/sitemap-product-index.xml": {body: indexOf("/products.xml")},
		"/products.xml":              {body: urlsetOf("/p")},
		"/sitemap-uppercase.xml":     {body: urlsetOf("/u")},
		"/sitemap-relative-url.xml":  {body: urlsetOf("/r")},
		"/extra.xml":                 {body: urlsetOf("/x")},
	})
	s.files["/robots.txt"].body = strings.ReplaceAll(s.files["/robots.txt"].body, "{{hostport}}", strings.TrimPrefix(s.srv.URL, "http://"))
	var reports []string
	w := &Walker{Options: Options{Sitemaps: []string{s.srv.URL + "/robots.txt", "/extra.xml"}, OnSitemap: func(r SitemapReport) {
		reports = append(reports, strings.TrimPrefix(r.URL, s.srv.URL))
	}}}
	got, st, err := walkSite(t, w, s)
	if err != nil {
		t.Fatalf("Walk: %v", err)
	}
	if want := []string{"H/a", "H/p", "H/r", "H/u", "H/x"}; !slices.Equal(got, want) {
		t.Errorf("Walk pages = %q, want %q", got, want)
	}
	slices.Sort(reports)
	if want := []string{"/extra.xml", "/products.xml", "/sitemap-product-index.xml", "/sitemap-relative-url.xml", "/sitemap-uppercase.xml", "/sitemap.xml"}; !slices.Equal(reports, want) {
		t.Errorf("OnSitemap saw %q, want %q", reports, want)
	}
	if st.Sitemaps != 6 || s.hit("/robots.txt") != 1 {
		t.Errorf("Walk stats = %+v, robots.txt fetched %d times; want 6 sitemaps, robots.txt once", st, s.hit("/robots.txt"))
	}
}

// TestWalkSitemapsRobotsURLEmpty: a given robots.txt without Sitemap
// lines walks nothing (no /sitemap.xml fallback); one that cannot be
// read fails the walk's robots.txt, reported like a sitemap.
func TestWalkSitemapsRobotsURLEmpty(t *testing.T) {
	s := newTestSite(t, map[string]*testFile{
		"/robots.txt":  {body: "User-agent: *\nDisallow:\n"},
		"/sitemap.xml": {body: urlsetOf("/a")},
	})
	got, st, err := walkSite(t, &Walker{Options: Options{Sitemaps: []string{"/robots.txt"}}}, s)
	if err != nil || len(got) != 0 || st.Sitemaps != 0 || s.hit("/sitemap.xml") != 0 {
		t.Errorf("Walk = %q, %+v, %v; /sitemap.xml fetched %d times; want nothing walked", got, st, err, s.hit("/sitemap.xml"))
	}

	down := newTestSite(t, map[string]*testFile{"/robots.txt": {status: 500}})
	_, st, err = walkSite(t, &Walker{Options: Options{Sitemaps: []string{"/robots.txt"}}}, down)
	var we *WalkError
	if !errors.As(err, &we) || st.Failed != 1 || !strings.HasSuffix(we.Errs[0].URL, "/robots.txt") {
		t.Errorf("Walk of an unreachable robots.txt = %+v, %v; want a WalkError for robots.txt", st, err)
	}
}

// TestWalkSizes: MaxSize bounds each file (CutSize, ErrTooLarge), and a
// file past WarnSize is counted, reported and logged, and read as usual.
func TestWalkSizes(t *testing.T) {
	big := urlsetOf(pagePaths(200)...) // about 8 KB
	s := newTestSite(t, map[string]*testFile{
		"/robots.txt":  {body: "Sitemap: /big.xml\nSitemap: /small.xml\nSitemap: /huge.xml.gz\n"},
		"/big.xml":     {body: big},
		"/small.xml":   {body: urlsetOf("/s")},
		"/huge.xml.gz": {body: gz(urlsetOf(pagePaths(1000)...))},
	})
	var buf bytes.Buffer
	var mu sync.Mutex
	var reports []SitemapReport
	w := &Walker{
		Logger: slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelWarn})),
		Options: Options{MaxSize: 20_000, WarnSize: 4_000, OnSitemap: func(r SitemapReport) {
			mu.Lock()
			reports = append(reports, r)
			mu.Unlock()
		}},
	}
	got, st, err := walkSite(t, w, s)
	if !errors.Is(err, ErrTooLarge) || st.Cut&CutSize == 0 {
		t.Errorf("Walk err = %v, Cut %v; want ErrTooLarge and CutSize for /huge.xml.gz", err, st.Cut)
	}
	if st.Large != 2 {
		t.Errorf("Walk Stats.Large = %d, want 2 (/big.xml and /huge.xml.gz)", st.Large)
	}
	if len(got) < 201 {
		t.Errorf("Walk passed %d pages on, want /big.xml's 200, /small.xml's and part of /huge.xml.gz", len(got))
	}
	for _, r := range reports {
		path := strings.TrimPrefix(r.URL, s.srv.URL)
		switch {
		case path == "/big.xml" && (!r.Large || r.Size != int64(len(strings.ReplaceAll(big, "{{host}}", s.srv.URL)))):
			t.Errorf("OnSitemap for /big.xml: Large %v, Size %d; want true, %d", r.Large, r.Size, len(big))
		case path == "/small.xml" && (r.Large || r.Size == 0):
			t.Errorf("OnSitemap for /small.xml: Large %v, Size %d; want false and its size", r.Large, r.Size)
		case path == "/huge.xml.gz" && (!r.Large || r.Size != 20_000):
			t.Errorf("OnSitemap for /huge.xml.gz: Large %v, Size %d; want true, 20000 (MaxSize)", r.Large, r.Size)
		}
	}
	log := strings.ReplaceAll(buf.String(), s.srv.URL, "H")
	if !strings.Contains(log, `level=WARN msg="sitemap large" url=H/big.xml depth=0 pages=200 size=`) ||
		!strings.Contains(log, "warn_size=4000") || strings.Contains(log, "small.xml") {
		t.Errorf("Walker.Logger wrote\n%s\nwant a \"sitemap large\" warning for /big.xml only (and the failure of /huge.xml.gz)", log)
	}

	// A negative WarnSize turns the warning off; the default is 32 MiB.
	s2 := newTestSite(t, map[string]*testFile{"/robots.txt": {body: "Sitemap: /big.xml\n"}, "/big.xml": {body: big}})
	for _, ws := range []int64{-1, 0} {
		_, st, err := walkSite(t, &Walker{Options: Options{WarnSize: ws}}, s2)
		if err != nil || st.Large != 0 {
			t.Errorf("Walk with WarnSize %d: Large %d, %v; want 0, nil", ws, st.Large, err)
		}
	}
}

// pagePaths returns n page paths: /p0, /p1, …
func pagePaths(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = "/p" + strconv.Itoa(i)
	}
	return out
}
