package robotsmw

import (
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/gocolly/colly/v2"
	"golang.org/x/time/rate"

	"github.com/robotsmw/robotsmw/policy"
)

// TestCleanParams: with Guard.CleanParams, URLs that differ only in the
// parameters a Clean-param line names are fetched once, whichever comes
// first; without it, each is fetched.
func TestCleanParams(t *testing.T) {
	for _, on := range []bool{false, true} {
		var mu sync.Mutex
		var seen []string
		s := newSite(t, func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/robots.txt" {
				w.Write([]byte("User-agent: *\nDisallow: /private\nClean-param: ref&utm_source /shop/\n"))
				return
			}
			mu.Lock()
			seen = append(seen, r.URL.RequestURI())
			mu.Unlock()
			w.Write([]byte("ok"))
		})
		g := &Guard{Rate: rate.Inf, CleanParams: on}
		var reported []error
		g.ErrorHandler = func(r *colly.Request, err error) { reported = append(reported, err) }
		c := colly.NewCollector(g.Attach)
		var visitErrs []error
		for _, p := range []string{
			"/shop/a?ref=mail", "/shop/a?ref=ad&utm_source=x", "/shop/a", "/shop/a?id=2&ref=1",
			"/shop/b", "/shop/b?utm_source=y", "/other?ref=1", "/other?ref=2",
		} {
			if err := c.Visit(s.URL + p); err != nil {
				visitErrs = append(visitErrs, err)
			}
		}
		want := []string{"/shop/a?ref=mail", "/shop/a?ref=ad&utm_source=x", "/shop/a", "/shop/a?id=2&ref=1",
			"/shop/b", "/shop/b?utm_source=y", "/other?ref=1", "/other?ref=2"}
		dups := 0
		if on {
			want = []string{"/shop/a?ref=mail", "/shop/a?id=2&ref=1", "/shop/b", "/other?ref=1", "/other?ref=2"}
			dups = 3
		}
		if !slices.Equal(seen, want) {
			t.Errorf("CleanParams=%v: the server saw %q, want %q", on, seen, want)
		}
		if len(reported) != dups || len(visitErrs) != dups {
			t.Fatalf("CleanParams=%v: ErrorHandler got %v, Visit returned %v; want %d duplicates each", on, reported, visitErrs, dups)
		}
		for _, err := range append(reported, visitErrs...) {
			if !errors.Is(err, ErrDuplicate) || !IsFinal(err) {
				t.Errorf("CleanParams: duplicate reported as %v, want a final ErrDuplicate", err)
			}
		}
		if on {
			if want := "same page as " + s.URL + "/shop/a "; !strings.Contains(reported[0].Error(), want) {
				t.Errorf("duplicate reported as %q, want it to say %q", reported[0], want)
			}
		}
	}
}

// TestCanonSetKeepsClaim: a request checked again (a retry or a deferral)
// is not its own duplicate.
func TestCanonSetKeepsClaim(t *testing.T) {
	s := newSite(t, func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("Clean-param: ref\n"))
	})
	cache := &policy.Cache{}
	u, _ := url.Parse(s.URL + "/a?ref=1")
	if _, err := cache.Get(t.Context(), u); err != nil {
		t.Fatal(err)
	}
	var set canonSet
	for i := range 2 {
		if err := set.check(cache, "GET", u); err != nil {
			t.Fatalf("check #%d of the same request = %v, want nil", i+1, err)
		}
	}
	if err := set.check(cache, "HEAD", u); err != nil {
		t.Errorf("check of another method = %v, want nil", err)
	}
	v, _ := url.Parse(s.URL + "/a?ref=2")
	if err := set.check(cache, "GET", v); !errors.Is(err, ErrDuplicate) {
		t.Errorf("check of a variant = %v, want ErrDuplicate", err)
	}
}

// TestSeedCleanParams: on a synchronous collector, Seed counts a page
// visited in its canonical form as visited, not queued.
func TestSeedCleanParams(t *testing.T) {
	s := sitemapSite(t, "Clean-param: ref\nSitemap: /sm.xml\n", map[string]string{
		"/sm.xml": urlsetXML("/p/a?ref=1", "/p/a?ref=2", "/p/b"),
	}, nil)
	g := &Guard{Rate: rate.Inf, CleanParams: true}
	c := colly.NewCollector(g.Attach)
	st, err := g.Seed(c, s.URL)
	if err != nil {
		t.Fatalf("Seed: %v", err)
	}
	if got, want := pagesVisited(t, s), []string{"/p/a", "/p/b"}; !slices.Equal(got, want) {
		t.Errorf("Seed visited %q, want %q", got, want)
	}
	if st.Queued != 2 || st.Visited != 1 {
		t.Errorf("Seed stats: queued %d, visited %d; want 2 and 1", st.Queued, st.Visited)
	}
}
