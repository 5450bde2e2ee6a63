package policy

import (
	"net/url"
	"strings"
	"testing"
)

func TestCanonical(t *testing.T) {
	body := "User-agent: *\n" +
		"Disallow: /private\n" +
		"Clean-param: ref /some_dir/get_book.pl\n" +
		"Clean-param: sid&sort /forum/*.php\n" +
		"Clean-param: &utm_source&utm_medium\n" + // every path; leading '&' skipped
		"Clean-param: Case /c\n" +
		"Clean-param: panorama%5Bspan%5D /maps/\n" +
		"Clean-param: x " + "/" + strings.Repeat("a", 500) + "\n" // over 500 characters: ignored
	r := Parse([]byte(body))
	for _, tc := range []struct{ in, want string }{
		// Yandex's example: the three converge into one.
		{"https://www.example.com/some_dir/get_book.pl?ref=site_1&book_id=123", "https://www.example.com/some_dir/get_book.pl?book_id=123"},
		{"https://www.example.com/some_dir/get_book.pl?book_id=123&ref=site_3", "https://www.example.com/some_dir/get_book.pl?book_id=123"},
		// Path prefix: an implied '*' at the end.
		{"https://x.test/some_dir/get_book.pl2?ref=a", "https://x.test/some_dir/get_book.pl2"},
		{"https://x.test/other/get_book.pl?ref=a", "https://x.test/other/get_book.pl?ref=a"},
		// '*' inside the prefix.
		{"https://x.test/forum/showthread.php?s=1&sid=9&sort=up&t=3", "https://x.test/forum/showthread.php?s=1&t=3"},
		{"https://x.test/forum/a/b.php?sid=9", "https://x.test/forum/a/b.php"},
		{"https://x.test/forum/a/b.html?sid=9", "https://x.test/forum/a/b.html?sid=9"},
		// Lines without a path apply everywhere, the fragment stays.
		{"https://x.test/?utm_source=a&id=1&utm_medium=b#top", "https://x.test/?id=1#top"},
		{"https://x.test?utm_source=a", "https://x.test"},
		// Names are case-sensitive and compared whole.
		{"https://x.test/c?case=1&Case=2&Cases=3", "https://x.test/c?case=1&Cases=3"},
		{"https://x.test/a?utm_source_x=1", "https://x.test/a?utm_source_x=1"},
		// Escapes decoded on both sides.
		{"https://x.test/maps/?panorama[span]=1&z=2", "https://x.test/maps/?z=2"},
		{"https://x.test/maps/?panorama%5Bspan%5D=1&z=2", "https://x.test/maps/?z=2"},
		{"https://x.test/maps/?panorama%5Bspan%5=1", "https://x.test/maps/?panorama%5Bspan%5=1"},
		// A name without a value, and a repeated one.
		{"https://x.test/a?utm_source&utm_source=2&k", "https://x.test/a?k"},
		{"https://x.test/a", "https://x.test/a"},
		// The over-long line does nothing.
		{"https://x.test/" + strings.Repeat("a", 500) + "?x=1", "https://x.test/" + strings.Repeat("a", 500) + "?x=1"},
	} {
		u, err := url.Parse(tc.in)
		if err != nil {
			t.Fatal(err)
		}
		before := u.String()
		got := r.Canonical(u)
		if got.String() != tc.want {
			t.Errorf("Canonical(%q) = %q, want %q", tc.in, got, tc.want)
		}
		if u.String() != before {
			t.Errorf("Canonical(%q) modified its argument to %q", tc.in, u)
		}
		if tc.in == tc.want && got != u {
			t.Errorf("Canonical(%q) copied a URL it did not change", tc.in)
		}
	}
	var nilRobots *Robots
	u, _ := url.Parse("https://x.test/?ref=1")
	if got := nilRobots.Canonical(u); got != u {
		t.Errorf("(*Robots)(nil).Canonical(%q) = %q, want it unchanged", u, got)
	}
}

func TestMatchPrefix(t *testing.T) {
	for _, tc := range []struct {
		pattern, s string
		want       bool
	}{
		{"/a", "/a", true}, {"/a", "/ab", true}, {"/a", "/", false},
		{"/*.php", "/x/y.php", true}, {"/*.php", "/x/y.phtml", false},
		{"*", "", true}, {"", "/x", true}, {"/a*b*c", "/aXbYc/d", true}, {"/a*b*c", "/aXbY", false},
	} {
		if got := matchPrefix(tc.pattern, tc.s); got != tc.want {
			t.Errorf("matchPrefix(%q, %q) = %v, want %v", tc.pattern, tc.s, got, tc.want)
		}
	}
}

func FuzzCanonical(f *testing.F) {
	f.Add("Clean-param: a&b /x*y\n", "https://h.test/xzy?a=1&c=2&b")
	f.Fuzz(func(t *testing.T, body, raw string) {
		u, err := url.Parse(raw)
		if err != nil {
			return
		}
		r := Parse([]byte(body))
		c := r.Canonical(u)
		// Invariants: only the query changes, it never grows, and the
		// canonical form is its own canonical form.
		if c.Scheme != u.Scheme || c.Host != u.Host || c.Path != u.Path || c.Fragment != u.Fragment {
			t.Fatalf("Canonical(%q) = %q changed more than the query", u, c)
		}
		if len(c.RawQuery) > len(u.RawQuery) {
			t.Fatalf("Canonical(%q) = %q has a longer query", u, c)
		}
		if again := r.Canonical(c); again.String() != c.String() {
			t.Fatalf("Canonical(Canonical(%q)) = %q, want %q", u, again, c)
		}
	})
}
