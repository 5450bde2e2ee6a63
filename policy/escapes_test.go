package policy

import (
	"net/url"
	"testing"
)

func TestNormalizeEscapes(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"http://s.test/~user", "http://s.test/~user"},
		{"http://s.test/%7Euser", "http://s.test/~user"},
		{"http://s.test/%7euser", "http://s.test/~user"},
		{"http://s.test/%41%62%2D%2e%5F%30", "http://s.test/Ab-._0"},
		{"http://s.test/a%2fb", "http://s.test/a%2Fb"}, // "/" is reserved: kept encoded
		{"http://s.test/a%2Fb?q=%3d&r=%7e", "http://s.test/a%2Fb?q=%3D&r=~"},
		{"http://s.test/%c3%a9", "http://s.test/%C3%A9"},
		{"http://s.test/é", "http://s.test/%C3%A9"},
		{"http://s.test/a+b%20c d", "http://s.test/a+b%20c%20d"}, // "+" is not "%20"
		{"http://s.test/%2541", "http://s.test/%2541"},           // "%25" is "%": not decoded
		{"http://s.test/100%", "http://s.test/100%25"},
		{"http://s.test/%zz", "http://s.test/%25zz"},
		{"http://s.test/a*b$", "http://s.test/a*b$"},
		{"http://s.test/a%2Ab%24", "http://s.test/a%2Ab%24"},
	} {
		if got := NormalizeEscapes(tc.in); got != tc.want {
			t.Errorf("NormalizeEscapes(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestNormalizeEscapesNoAllocation(t *testing.T) {
	s := "http://s.test/a/b?c=d"
	if n := testing.AllocsPerRun(100, func() { _ = NormalizeEscapes(s) }); n != 0 {
		t.Errorf("NormalizeEscapes(%q) allocated %v times, want 0", s, n)
	}
}

// FuzzNormalizeEscapes checks that NormalizeEscapes is idempotent, and that
// it changes no octet a string with valid escapes stands for.
func FuzzNormalizeEscapes(f *testing.F) {
	for _, s := range []string{"/%7Euser", "/%7e%2f%2F", "/a%20b+c", "/%C3%a9?q=%41", "%25%34%31", "%%414", "/é 1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n := NormalizeEscapes(s)
		if nn := NormalizeEscapes(n); nn != n {
			t.Fatalf("NormalizeEscapes(%q) = %q, but NormalizeEscapes(%q) = %q", s, n, n, nn)
		}
		want, err := url.PathUnescape(s)
		if err != nil {
			return
		}
		if got, err := url.PathUnescape(n); err != nil || got != want {
			t.Fatalf("NormalizeEscapes(%q) = %q, which unescapes to %q (%v), want %q", s, n, got, err, want)
		}
	})
}
