package sitemap

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
)

func TestSamePercent(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"http://s.test/~user", "http://s.test/~user"},
		{"http://s.test/%7Euser", "http://s.test/~user"},
		{"http://s.test/%7euser", "http://s.test/~user"},
		{"http://s.test/%41%62%2D%2e%5F%30", "http://s.test/Ab-._0"},
		{"http://s.test/a%2fb", "http://s.test/a%2Fb"},                       // "/" is reserved: kept encoded
		{"http://s.test/a%2Fb?q=%3d&r=%7e", "http://s.test/a%2Fb?q=%3D&r=~"}, // the query too
		{"http://s.test/%c3%a9", "http://s.test/%C3%A9"},
		{"http://s.test/a+b%20c", "http://s.test/a+b%20c"}, // "+" is not "%20"
		{"http://s.test/%2541", "http://s.test/%2541"},     // "%25" is "%": not decoded
		{"http://s.test/100%", "http://s.test/100%"},       // a stray "%" stays
		{"http://s.test/%zz%4", "http://s.test/%zz%4"},
	} {
		if got := samePercent(tc.in); got != tc.want {
			t.Errorf("samePercent(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestSamePercentNoAllocation(t *testing.T) {
	s := "http://s.test/a/b?c=d"
	if n := testing.AllocsPerRun(100, func() { _ = samePercent(s) }); n != 0 {
		t.Errorf("samePercent(%q) allocated %v times, want 0", s, n)
	}
}

// FuzzSamePercent checks samePercent on URLs whose escapes are all valid
// (as a parsed URL's String is): it is idempotent, and it changes no
// octet the URL stands for.
func FuzzSamePercent(f *testing.F) {
	for _, s := range []string{"/%7Euser", "/%7e%2f%2F", "/a%20b+c", "/%C3%a9?q=%41", "%25%34%31"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, err := url.PathUnescape(s)
		if err != nil {
			return
		}
		n := samePercent(s)
		if got, err := url.PathUnescape(n); err != nil || got != want {
			t.Fatalf("samePercent(%q) = %q, which unescapes to %q (%v), want %q", s, n, got, err, want)
		}
		if nn := samePercent(n); nn != n {
			t.Fatalf("samePercent(%q) = %q, but samePercent(%q) = %q", s, n, n, nn)
		}
	})
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
