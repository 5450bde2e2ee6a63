package policy

import (
	"net/url"
	"strings"
	"testing"
)

func TestResolveDots(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"http://h/a/b", "/a/b"},
		{"http://h/", "/"},
		{"http://h", ""},
		{"http://h/public/../private/x", "/private/x"},
		{"http://h/public/%2e%2e/private/x", "/private/x"},
		{"http://h/public/%2E./private/x?q=1", "/private/x"},
		{"http://h/public/.%2e/private/x", "/private/x"},
		{"http://h/./private/x", "/private/x"},
		{"http://h/%2e/private/x", "/private/x"},
		{"http://h/a/..", "/"},
		{"http://h/a/.", "/a/"},
		{"http://h/../../a", "/a"},
		{"http://h/a//../b", "/a/b"},
		{"http://h/a/b/../../../c/./d/", "/c/d/"},
		{"http://h/.well-known/x", "/.well-known/x"},
		{"http://h/a/.../b", "/a/.../b"},
		{"http://h/a/..b/c", "/a/..b/c"},
		{"http://h/a/%2e%2e%2e/b", "/a/%2e%2e%2e/b"},
		{"http://h/a/b%2F..%2Fc", "/a/b%2F..%2Fc"}, // one segment: an encoded slash separates nothing
		{"http://h/x%20y/../%7Ez", "/%7Ez"},        // escaped as sent
	} {
		u, err := url.Parse(c.in)
		if err != nil {
			t.Fatal(err)
		}
		r := ResolveDots(u)
		if got := r.EscapedPath(); got != c.want {
			t.Errorf("ResolveDots(%q) has path %q, want %q", c.in, got, c.want)
		}
		if r.RawQuery != u.RawQuery || r.Host != u.Host || r.Scheme != u.Scheme {
			t.Errorf("ResolveDots(%q) = %q: changed more than the path", c.in, r)
		}
		if u.String() != c.in {
			t.Errorf("ResolveDots(%q) changed its argument to %q", c.in, u)
		}
		if r.EscapedPath() == u.EscapedPath() && r != u {
			t.Errorf("ResolveDots(%q) made a copy with nothing to remove", c.in)
		}
	}
}

// A URL built by hand: an opaque request-target (net/http sends it as it
// is, the matcher reads its path part) and a path without its slash are
// resolved as the matcher reads them.
func TestResolveDotsByHand(t *testing.T) {
	for _, c := range []struct {
		u    url.URL
		want string
	}{
		{url.URL{Scheme: "http", Host: "h", Opaque: "/public/../private/x"}, "/private/x"},
		{url.URL{Scheme: "http", Host: "h", Opaque: "//h/public/%2e%2e/private/y"}, "/private/y"},
		{url.URL{Scheme: "http", Host: "h", Opaque: "/plain"}, ""},
		{url.URL{Scheme: "http", Host: "h", Path: "public/../private/x"}, "/private/x"},
		{url.URL{Scheme: "http", Host: "h", Path: "./x"}, "/x"},
		{url.URL{Scheme: "http", Host: "h", Path: "a/b"}, ""},
	} {
		r := ResolveDots(&c.u)
		if c.want == "" {
			if r != &c.u {
				t.Errorf("ResolveDots(%#v) = %#v, want it as it is", c.u, *r)
			}
			continue
		}
		if r.Opaque != "" || r.EscapedPath() != c.want {
			t.Errorf("ResolveDots(%#v) has opaque %q, path %q; want path %q", c.u, r.Opaque, r.EscapedPath(), c.want)
		}
	}
	r := Parse([]byte("User-agent: *\nDisallow: /private\n"))
	if r.Allowed("bot", ResolveDots(&url.URL{Scheme: "http", Host: "h", Opaque: "/public/../private/x"})) {
		t.Error("Allowed(ResolveDots(opaque /public/../private/x)) = true, want false")
	}
}

func TestResolveDotsMatching(t *testing.T) {
	r := Parse([]byte("User-agent: *\nDisallow: /private\n"))
	for _, raw := range []string{"http://h/public/../private/x", "http://h/public/%2e%2e/private/x", "http://h/./private/x"} {
		u, _ := url.Parse(raw)
		if !r.Allowed("bot", u) {
			t.Errorf("Allowed(%q): a path is matched as written, want true", raw)
		}
		if r.Allowed("bot", ResolveDots(u)) {
			t.Errorf("Allowed(ResolveDots(%q)) = true, want false: the server serves /private/x", raw)
		}
	}
}

// FuzzResolveDots checks ResolveDots against net/url's own resolution of
// dot segments (which knows only unescaped ones), and that its result has
// none left, is stable and keeps everything but the path.
func FuzzResolveDots(f *testing.F) {
	for _, s := range []string{"/a/../b", "/a/./b/", "/%2e%2E/x", "//../a", "/a/b/..", "/.", "/..%2f", "/a?x=/../"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		u, err := url.Parse("http://h" + p)
		if err != nil || u.Host != "h" || u.Opaque != "" {
			return
		}
		r := ResolveDots(u)
		if again := ResolveDots(r); again.EscapedPath() != r.EscapedPath() {
			t.Fatalf("ResolveDots(%q) = %q, and again %q", p, r.EscapedPath(), again.EscapedPath())
		}
		if r.RawQuery != u.RawQuery || r.Fragment != u.Fragment || r.Host != u.Host {
			t.Fatalf("ResolveDots(%q) = %q: changed more than the path", p, r)
		}
		ep := r.EscapedPath()
		if ep != "" {
			for _, s := range strings.Split(ep[1:], "/") {
				if dotSegment(s) != 0 {
					t.Fatalf("ResolveDots(%q) = %q: a dot segment %q is left", p, ep, s)
				}
			}
		}
		// net/url drops empty segments next to dot segments ("/..//" is
		// "/" to it, "//" to RFC 3986 §5.2.4): compared without them.
		if !strings.Contains(u.EscapedPath(), "%") && strings.HasPrefix(u.EscapedPath(), "/") && !strings.Contains(u.Path, "//") {
			base := &url.URL{Scheme: "http", Host: "h", Path: "/"}
			want := base.ResolveReference(&url.URL{Path: u.Path}).Path
			if r.Path != want {
				t.Fatalf("ResolveDots(%q) has path %q, net/url resolves it to %q", p, r.Path, want)
			}
		}
	})
}
