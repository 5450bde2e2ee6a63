package sitemap

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
)

// TestWalkGivenSitemaps starts from given sitemap URLs, not robots.txt's.
func TestWalkGivenSitemaps(t *testing.T) {
	s := newTestSite(t, map[string]*testFile{
		"/robots.txt":  {body: "User-agent: *\nDisallow: /private\nSitemap: /listed.xml\n"},
		"/listed.xml":  {body: urlsetOf("/from-robots")},
		"/news.xml":    {body: indexOf("/news-1.xml")},
		"/news-1.xml":  {body: urlsetOf("/n1", "/private/n2")},
		"/sitemap.xml": {body: urlsetOf("/fallback")},
	})
	w := &Walker{Options: Options{Sitemaps: []string{"/news.xml", "ftp://x/"}}}
	got, st, err := walkSite(t, w, s)
	if want := []string{"H/n1"}; !slices.Equal(got, want) {
		t.Errorf("Walk(Sitemaps: /news.xml) pages = %q, want %q", got, want)
	}
	if s.hit("/listed.xml") != 0 || s.hit("/sitemap.xml") != 0 {
		t.Errorf("Walk(Sitemaps) fetched robots.txt's sitemap (%d) or the fallback (%d), want neither", s.hit("/listed.xml"), s.hit("/sitemap.xml"))
	}
	if st.Dropped.Robots != 1 || st.Sitemaps != 2 || st.Skipped.Invalid != 1 || st.Failed != 1 {
		t.Errorf("Walk(Sitemaps) stats = %+v, want 1 page dropped by robots.txt, 2 sitemaps read, 1 invalid and failed", st)
	}
	var we *WalkError
	if !errors.As(err, &we) {
		t.Errorf("Walk(Sitemaps with ftp://x/) error = %v, want a *WalkError", err)
	}
}

// TestWalkFollow keeps only the index children Follow matches.
func TestWalkFollow(t *testing.T) {
	s := newTestSite(t, map[string]*testFile{
		"/robots.txt":           {body: "Sitemap: /index.xml\n"},
		"/index.xml":            {body: indexOf("/sitemap-products.xml", "/sitemap-blog.xml")},
		"/sitemap-products.xml": {body: urlsetOf("/p/1")},
		"/sitemap-blog.xml":     {body: urlsetOf("/b/1")},
	})
	w := &Walker{Options: Options{Follow: []string{"/sitemap-products"}}}
	got, st, err := walkSite(t, w, s)
	if err != nil {
		t.Fatalf("Walk: %v", err)
	}
	if want := []string{"H/p/1"}; !slices.Equal(got, want) {
		t.Errorf("Walk(Follow) pages = %q, want %q", got, want)
	}
	if s.hit("/sitemap-blog.xml") != 0 || st.Skipped.Filter != 1 {
		t.Errorf("Walk(Follow) fetched the blog sitemap %d times, Skipped.Filter = %d; want 0 and 1", s.hit("/sitemap-blog.xml"), st.Skipped.Filter)
	}
}

// TestWalkRules tags pages by the first matching rule and drops the rest.
func TestWalkRules(t *testing.T) {
	s := newTestSite(t, map[string]*testFile{
		"/robots.txt": {body: "Sitemap: /sm.xml\n"},
		"/sm.xml":     {body: urlsetOf("/product/1", "/product/2?color=red", "/category/shoes", "/about")},
	})
	w := &Walker{Options: Options{Rules: []Rule{
		{Pattern: "/product/*?", Tag: "variant"},
		{Pattern: "/product/", Tag: "product"},
		{Pattern: "/category/", Tag: "category"},
	}}}
	tags := map[string]string{}
	var mu sync.Mutex
	st, err := w.Walk(context.Background(), s.srv.URL, func(e Entry) error {
		mu.Lock()
		defer mu.Unlock()
		tags[strings.TrimPrefix(e.Loc, s.srv.URL)] = e.Tag
		return nil
	})
	if err != nil {
		t.Fatalf("Walk: %v", err)
	}
	want := map[string]string{"/product/1": "product", "/product/2?color=red": "variant", "/category/shoes": "category"}
	if len(tags) != len(want) {
		t.Errorf("Walk(Rules) tags = %v, want %v", tags, want)
	}
	for k, v := range want {
		if tags[k] != v {
			t.Errorf("Walk(Rules) tag of %s = %q, want %q", k, tags[k], v)
		}
	}
	if st.Dropped.Filter != 1 {
		t.Errorf("Walk(Rules) Dropped.Filter = %d, want 1 (/about)", st.Dropped.Filter)
	}
}

// TestWalkAlternates passes hreflang alternates on as pages.
func TestWalkAlternates(t *testing.T) {
	const sm = `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:xhtml="http://www.w3.org/1999/xhtml">
<url><loc>{{host}}/en/a</loc><lastmod>2026-01-02</lastmod>
 <xhtml:link rel="alternate" hreflang="en" href="{{host}}/en/a"/>
 <xhtml:link rel="alternate" hreflang="de" href="{{host}}/de/a"/>
 <xhtml:link rel="alternate" hreflang="fr" href="/fr/a"/>
 <xhtml:link rel="alternate" hreflang="x" href="https://elsewhere.invalid/a"/>
 <xhtml:link rel="alternate" hreflang="no" href="/private/a"/>
</url>
<url><loc>{{host}}/de/a</loc></url>
</urlset>`
	files := map[string]*testFile{
		"/robots.txt": {body: "User-agent: *\nDisallow: /private\nSitemap: /sm.xml\n"},
		"/sm.xml":     {body: sm},
	}
	s := newTestSite(t, files)
	got, _, err := walkSite(t, &Walker{}, s)
	if err != nil {
		t.Fatalf("Walk: %v", err)
	}
	if want := []string{"H/de/a", "H/en/a"}; !slices.Equal(got, want) {
		t.Errorf("Walk without Alternates = %q, want %q", got, want)
	}
	var mu sync.Mutex
	of := map[string]string{}
	w := &Walker{Options: Options{Alternates: true}}
	st, err := w.Walk(context.Background(), s.srv.URL, func(e Entry) error {
		mu.Lock()
		defer mu.Unlock()
		of[strings.TrimPrefix(e.Loc, s.srv.URL)] = strings.TrimPrefix(e.AlternateOf, s.srv.URL)
		return nil
	})
	if err != nil {
		t.Fatalf("Walk(Alternates): %v", err)
	}
	want := map[string]string{"/en/a": "", "/de/a": "/en/a", "/fr/a": "/en/a"}
	if len(of) != len(want) {
		t.Errorf("Walk(Alternates) pages = %v, want %v", of, want)
	}
	for k, v := range want {
		if got, ok := of[k]; !ok || got != v {
			t.Errorf("Walk(Alternates) %s AlternateOf = %q (present %v), want %q", k, got, ok, v)
		}
	}
	if st.Dropped.Scope != 1 || st.Dropped.Robots != 1 || st.Dropped.Duplicate != 1 {
		t.Errorf("Walk(Alternates) Dropped = %+v, want 1 out of scope, 1 by robots.txt, 1 duplicate", st.Dropped)
	}
	// An alternate is judged on its own: the page a filter drops still
	// brings its alternates that pass.
	w = &Walker{Options: Options{Alternates: true, Include: []string{"/fr/"}}}
	var fr []Entry
	if _, err := w.Walk(context.Background(), s.srv.URL, func(e Entry) error { fr = append(fr, e); return nil }); err != nil {
		t.Fatalf("Walk(Alternates, Include /fr/): %v", err)
	}
	if len(fr) != 1 || fr[0].Loc != s.srv.URL+"/fr/a" || fr[0].AlternateOf != s.srv.URL+"/en/a" {
		t.Errorf("Walk(Alternates, Include /fr/) = %+v, want /fr/a, an alternate of /en/a", fr)
	}
}
