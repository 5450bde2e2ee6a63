package sitemap

import (
	"bytes"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
	"unicode/utf8"

	"github.com/robotsmw/robotsmw/policy"
)

// FuzzReader checks the Reader's invariants on any input (style guide
// point 39): no panic; never more entries than MaxEntries; every Loc is
// non-empty, trimmed, valid UTF-8 and at most 2,048 characters; Next ends
// with io.EOF, ErrTooLarge, ErrNotSitemap or a *SyntaxError, and with no
// entries before ErrNotSitemap; and the input read one byte at a time gives
// the same entries and the same error as read whole.
func FuzzReader(f *testing.F) {
	if dir, ok := findCorpus(); ok {
		files, _ := filepath.Glob(filepath.Join(dir, "*"))
		for _, file := range files {
			if data, err := os.ReadFile(file); err == nil && len(data) < 16<<10 {
				f.Add(data)
			}
		}
	}
	for _, s := range []string{
		"",
		head + urls("http://a.example/1", "http://a.example/?a=1&b=2&amp;c") + tail,
		index + "<sitemap>http://x/1</sitemap><sitemap><loc>http://x/2</loc><loc>http://x/3</loc></sitemap>",
		"\uFEFFhttp://x/1\r\nhttp://x/2",
		`<rss><channel><item><link>http://x/<![CDATA[1]]></link></item></channel></rss>`,
		`<feed><entry><link rel="edit" href="http://x/e"/><link href="http://x/1"/></entry></feed>`,
		gz(head + urls("http://x/1") + tail),
		gz(gz("http://x/1\n")),
	} {
		f.Add([]byte(s))
	}
	const max = 5
	f.Fuzz(func(t *testing.T, data []byte) {
		setup := func(r *Reader) { r.MaxEntries = max; r.MaxSize = 1 << 20 }
		es, err := readAll(bytes.NewReader(data), setup)
		if len(es) > max {
			t.Fatalf("Next() gave %d entries, more than MaxEntries = %d", len(es), max)
		}
		switch k := errKind(err); {
		case strings.HasPrefix(k, "other"):
			t.Fatalf("Next() ended with %v, want io.EOF, ErrTooLarge, ErrNotSitemap or *SyntaxError", err)
		case k == "not sitemap" && len(es) > 0:
			t.Fatalf("Next() gave %d entries before %v", len(es), err)
		}
		for i, e := range es {
			if e.Loc == "" || strings.TrimSpace(e.Loc) != e.Loc || !utf8.ValidString(e.Loc) || utf8.RuneCountInString(e.Loc) > maxLoc {
				t.Fatalf("Next() entry %d has Loc %q", i, e.Loc)
			}
		}
		es1, err1 := readAll(iotest.OneByteReader(bytes.NewReader(data)), setup)
		if !reflect.DeepEqual(es1, es) || fmt.Sprint(err1) != fmt.Sprint(err) {
			t.Fatalf("one byte per read: Next() gave %d entries, then %v; whole: %d, then %v", len(es1), err1, len(es), err)
		}
	})
}

// FuzzMatchPattern checks the Include/Exclude matcher against the plain
// string functions for patterns without wildcards, and that '*' matches
// any run: a pattern with its literal bytes turned into '*' matches
// whatever the literal pattern matches.
func FuzzMatchPattern(f *testing.F) {
	f.Add("/blog/", "/blog/x")
	f.Add("/*.pdf$", "/a.pdf")
	f.Add("/a*b*c$", "/axbxc")
	f.Fuzz(func(t *testing.T, pattern, target string) {
		if len(pattern) > 64 || len(target) > 256 {
			return
		}
		got := matchPattern(pattern, target)
		if !strings.ContainsAny(pattern, "*$") {
			if want := strings.HasPrefix(target, pattern); got != want {
				t.Fatalf("matchPattern(%q, %q) = %v, want %v (prefix)", pattern, target, got, want)
			}
			if want := target == pattern; matchPattern(pattern+"$", target) != want {
				t.Fatalf("matchPattern(%q, %q) = %v, want %v (anchored)", pattern+"$", target, !want, want)
			}
		}
		if got && !matchPattern(strings.ReplaceAll(pattern, "/", "*"), target) {
			t.Fatalf("matchPattern(%q, %q) = true but not with '/' as '*'", pattern, target)
		}
		if !matchPattern("*", target) {
			t.Fatalf("matchPattern(\"*\", %q) = false", target)
		}
	})
}

// FuzzCanonical checks the Walker's one normalisation of URLs
// (docs/sitemaps.md#scope): it is idempotent, and a normalised URL's host is
// the host part of its policy.Origin, so that two spellings of one origin
// compare equal.
func FuzzCanonical(f *testing.F) {
	for _, s := range []string{"http://s.test/p", "HTTP://S.TEST.:80/p#x", "https://s.test:443/",
		"http://bücher.example/", "http://[::1]:80/a", "http://[fe80::1%25eth0]/", "http://a:b@h.test/", "mailto:x@y", "//h/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c := canonical(s)
		if cc := canonical(c); cc != c {
			t.Fatalf("canonical(%q) = %q, but canonical(%q) = %q", s, c, c, cc)
		}
		u, err := url.Parse(s)
		if err != nil || !normalize(u) {
			return
		}
		o, err := policy.Origin(u)
		if err != nil {
			t.Fatalf("normalize(%q) = %q, which has no origin: %v", s, u, err)
		}
		// Compared unescaped: an IPv6 zone is escaped in an origin
		// ("%25", and "!" as "%21") but not in URL.Host.
		want := (&url.URL{Scheme: u.Scheme, Host: u.Host}).String()
		if unescaped(o) != unescaped(want) {
			t.Fatalf("normalize(%q) = %q, whose origin %q is not its scheme and host", s, u, o)
		}
	})
}

// unescaped returns s with its %-escapes decoded, or s itself if they are
// not valid (an origin keeps a lone "%" of a host as it is).
func unescaped(s string) string {
	if u, err := url.PathUnescape(s); err == nil {
		return u
	}
	return s
}
