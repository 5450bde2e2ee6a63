package policy

import (
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
		{"http://s.test/100%", "http://s.test/100%"},             // no URI: as it is
		{"http://s.test/%7e?q=%zz", "http://s.test/%7e?q=%zz"},
		{"http://s.test/%7e%2", "http://s.test/%7e%2"},
		{"http://s.test/a*b$", "http://s.test/a*b$"},
		{"http://s.test/a%2Ab%24", "http://s.test/a%2Ab%24"},
	} {
		if got := NormalizeEscapes(tc.in); got != tc.want {
			t.Errorf("NormalizeEscapes(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestNormalizeEscapesNoAllocation(t *testing.T) {
	for _, s := range []string{"http://s.test/a/b?c=d", "http://s.test/a%2Fb/%D0%9F%D1%80?q=%3D", "http://s.test/100%"} {
		if n := testing.AllocsPerRun(100, func() { _ = NormalizeEscapes(s) }); n != 0 {
			t.Errorf("NormalizeEscapes(%q) allocated %v times, want 0", s, n)
		}
	}
}

// FuzzNormalizeEscapes checks that NormalizeEscapes is idempotent, and
// that it changes how a string with valid escapes is written, never what
// it says: the octets it stands for, and which of them are escaped but for
// unreserved characters (decoded) and octets that may not stand in a URI
// (encoded). "%2F" must stay apart from "/".
func FuzzNormalizeEscapes(f *testing.F) {
	for _, s := range []string{"/%7Euser", "/%7e%2f%2F", "/a%20b+c", "/%C3%a9?q=%41", "%25%34%31", "%%414", "/é 1", "/a*%2A$%24"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n := NormalizeEscapes(s)
		if nn := NormalizeEscapes(n); nn != n {
			t.Fatalf("NormalizeEscapes(%q) = %q, but NormalizeEscapes(%q) = %q", s, n, n, nn)
		}
		if !validEscapes(s) {
			if n != s {
				t.Fatalf("NormalizeEscapes(%q) = %q, want it as it is (an invalid escape)", s, n)
			}
			return
		}
		if got, want := escapeTokens(n), escapeTokens(s); got != want {
			t.Fatalf("NormalizeEscapes(%q) = %q: octets %q, want %q", s, n, got, want)
		}
	})
}

// escapeTokens returns what s, with valid escapes, stands for: its octets,
// each escaped one written "%" and its upper-case hex, but for unreserved
// characters (written as themselves) and octets that may not stand in a
// URI (written escaped), in the one form NormalizeEscapes keeps.
func escapeTokens(s string) string {
	const hex = "0123456789ABCDEF"
	var b []byte
	for i := 0; i < len(s); i++ {
		c, escaped := s[i], false
		if c == '%' {
			hi, _ := unhex(s[i+1])
			lo, _ := unhex(s[i+2])
			c, escaped = hi<<4|lo, true
			i += 2
		}
		switch {
		case isUnreserved(c):
			b = append(b, c)
		case escaped || mustEscape(c):
			b = append(b, '%', hex[c>>4], hex[c&15])
		default:
			b = append(b, c)
		}
	}
	return string(b)
}
