package policy

import (
	"bytes"
	"fmt"
	"net/url"
	"strings"
	"testing"
)

// An event is one call the tokenizer made on its handler.
type event struct {
	line  int
	kind  string // user-agent, allow, disallow, sitemap, other, invalid
	key   string // for other
	value string // the value, or the text for invalid
	typo  bool
	colon bool // missingColon
	long  bool // tooLong
}

func (e event) String() string {
	s := fmt.Sprintf("%d %s", e.line, e.kind)
	if e.key != "" {
		s += fmt.Sprintf(" key=%q", e.key)
	}
	s += fmt.Sprintf(" %q", e.value)
	if e.typo {
		s += " typo"
	}
	if e.colon {
		s += " missing-colon"
	}
	if e.long {
		s += " too-long"
	}
	return s
}

// A recorder is a handler that records every call.
type recorder struct{ events []event }

var _ handler = (*recorder)(nil)

func (r *recorder) add(ln lineInfo, kind string, key, value []byte) {
	r.events = append(r.events, event{
		line: ln.num, kind: kind, key: string(key), value: string(value),
		typo: ln.typo, colon: ln.missingColon, long: ln.tooLong,
	})
}

func (r *recorder) userAgent(ln lineInfo, value []byte) { r.add(ln, "user-agent", nil, value) }
func (r *recorder) rule(ln lineInfo, allow bool, value []byte) {
	kind := "disallow"
	if allow {
		kind = "allow"
	}
	r.add(ln, kind, nil, value)
}
func (r *recorder) sitemap(ln lineInfo, value []byte)    { r.add(ln, "sitemap", nil, value) }
func (r *recorder) other(ln lineInfo, key, value []byte) { r.add(ln, "other", key, value) }
func (r *recorder) invalid(ln lineInfo, text []byte)     { r.add(ln, "invalid", nil, text) }
func (r *recorder) count(kinds ...string) (n int) {
	for _, e := range r.events {
		for _, k := range kinds {
			if e.kind == k {
				n++
			}
		}
	}
	return n
}

// directives counts the recognised directives; unknown counts the others.
func (r *recorder) directives() int { return r.count("user-agent", "allow", "disallow", "sitemap") }
func (r *recorder) unknown() int    { return r.count("other", "invalid") }

func record(body string) *recorder {
	var r recorder
	parse([]byte(body), &r)
	return &r
}

func eventsString(es []event) string {
	var b strings.Builder
	for _, e := range es {
		b.WriteString("\n\t")
		b.WriteString(e.String())
	}
	return b.String()
}

func checkEvents(t *testing.T, name, body string, want []event) {
	t.Helper()
	got := record(body).events
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("%s: parse(%q) events:%s\nwant:%s", name, body, eventsString(got), eventsString(want))
	}
}

// Google's tokenizer (docs/robots-semantics.md#tokenizer, point 2) and
// robots_test.cc ID_LinesNumbersAreCountedCorrectly: LF, CR and CRLF each
// end a line.
func TestParseLineEndings(t *testing.T) {
	for name, body := range map[string]string{
		"unix":       "User-Agent: foo\nAllow: /some/path\nUser-Agent: bar\n\n\nDisallow: /\n",
		"dos":        "User-Agent: foo\r\nAllow: /some/path\r\nUser-Agent: bar\r\n\r\n\r\nDisallow: /\r\n",
		"mac":        "User-Agent: foo\rAllow: /some/path\rUser-Agent: bar\r\r\rDisallow: /\r",
		"no-final":   "User-Agent: foo\nAllow: /some/path\nUser-Agent: bar\n\n\nDisallow: /",
		"mixed":      "User-Agent: foo\nAllow: /some/path\r\nUser-Agent: bar\n\r\n\nDisallow: /",
		"mixed-mac":  "User-Agent: foo\rAllow: /some/path\r\nUser-Agent: bar\r\r\n\nDisallow: /",
		"crlf-final": "User-Agent: foo\r\nAllow: /some/path\rUser-Agent: bar\n\r\n\rDisallow: /",
	} {
		r := record(body)
		if r.directives() != 4 {
			t.Errorf("%s: parse(%q) gave %d directives, want 4:%s", name, body, r.directives(), eventsString(r.events))
		}
		lines := []int{}
		for _, e := range r.events {
			lines = append(lines, e.line)
		}
		if fmt.Sprint(lines) != "[1 2 3 6]" {
			t.Errorf("%s: parse(%q) lines = %v, want [1 2 3 6]", name, body, lines)
		}
	}
	// LF followed by CR is two line breaks.
	checkEvents(t, "LF CR", "a: 1\n\rb: 2", []event{
		{line: 1, kind: "other", key: "a", value: "1"},
		{line: 3, kind: "other", key: "b", value: "2"},
	})
	// CR CR is two line breaks; CR LF is one; CR CR LF is two.
	checkEvents(t, "CR CR LF", "a: 1\r\r\nb: 2\r\n\r\nc: 3", []event{
		{line: 1, kind: "other", key: "a", value: "1"},
		{line: 3, kind: "other", key: "b", value: "2"},
		{line: 5, kind: "other", key: "c", value: "3"},
	})
	// The text after the last line break is a line, even without a newline.
	checkEvents(t, "last line", "Disallow: /a\nDisallow: /b", []event{
		{line: 1, kind: "disallow", value: "/a"},
		{line: 2, kind: "disallow", value: "/b"},
	})
	checkEvents(t, "empty", "", nil)
	checkEvents(t, "only breaks", "\n\r\n\r", nil)
}

// Google's tokenizer (docs/robots-semantics.md#tokenizer, point 1) and
// robots_test.cc ID_UTF8ByteOrderMarkIsSkipped.
func TestParseBOM(t *testing.T) {
	for _, c := range []struct {
		name                string
		body                string
		directives, unknown int
	}{
		{"full", "\xEF\xBB\xBFUser-Agent: foo\nAllow: /AnyValue\n", 2, 0},
		{"partial 2", "\xEF\xBBUser-Agent: foo\nAllow: /AnyValue\n", 2, 0},
		{"partial 1", "\xEFUser-Agent: foo\nAllow: /AnyValue\n", 2, 0},
		{"broken", "\xEF\x11\xBFUser-Agent: foo\nAllow: /AnyValue\n", 1, 1},
		{"mid-file", "User-Agent: foo\n\xEF\xBB\xBFAllow: /AnyValue\n", 1, 1},
		{"second BOM", "\xEF\xBB\xBF\xEF\xBB\xBFUser-Agent: foo\nAllow: /AnyValue\n", 1, 1},
		{"BOM only", "\xEF\xBB\xBF", 0, 0},
		{"BOM then break", "\xEF\xBB\xBF\nUser-Agent: foo\n", 1, 0},
	} {
		r := record(c.body)
		if r.directives() != c.directives || r.unknown() != c.unknown {
			t.Errorf("%s: parse(%q) gave %d directives and %d unknown, want %d and %d:%s",
				c.name, c.body, r.directives(), r.unknown(), c.directives, c.unknown, eventsString(r.events))
		}
	}
	// The full BOM leaves the first key intact.
	checkEvents(t, "full BOM", "\xEF\xBB\xBFUser-Agent: foo", []event{{line: 1, kind: "user-agent", value: "foo"}})
	// Google-specific (robots.cc ParseRobotsTxt): only the leading bytes
	// that match the mark are skipped; the first byte that does not ends
	// it, and every byte from there on is kept, even one that equals the
	// mark's byte at its position.
	checkEvents(t, "broken BOM", "\xEF\x11\xBFUser-Agent: foo", []event{{line: 1, kind: "other", key: "\x11\xBFUser-Agent", value: "foo"}})
	checkEvents(t, "BB after a mismatch", "u\xBBser-agent: *\ndisallow: /", []event{
		{line: 1, kind: "other", key: "u\xBBser-agent", value: "*"},
		{line: 2, kind: "disallow", value: "/"},
	})
	checkEvents(t, "BF after a mismatch", "\xEFx\xBFUser-agent: *", []event{{line: 1, kind: "other", key: "x\xBFUser-agent", value: "*"}})
	checkEvents(t, "BF after BB mismatch", "\xBB\xBB\xBFUser-agent: *", []event{{line: 1, kind: "other", key: "\xBB\xBB\xBFUser-agent", value: "*"}})
}

// TestSkipBOM holds skipBOM to Google's loop (robots.cc ParseRobotsTxt):
// a byte is skipped while it equals the mark's byte at bom_pos, and the
// first that does not ends the mark for good.
func TestSkipBOM(t *testing.T) {
	google := func(body []byte) []byte {
		const bom = "\xEF\xBB\xBF"
		var out []byte
		pos := 0
		for _, c := range body {
			if pos < len(bom) && c == bom[pos] {
				pos++
				continue
			}
			pos = len(bom)
			out = append(out, c)
		}
		return out
	}
	const alphabet = "\xEF\xBB\xBFu"
	for n := 0; n <= 4; n++ {
		body := make([]byte, n)
		for i := 0; i < 1<<(2*n); i++ {
			for j := range body {
				body[j] = alphabet[i>>(2*j)&3]
			}
			got, want := skipBOM(body), google(body)
			if !bytes.Equal(got, want) {
				t.Errorf("skipBOM(%q) = %q, want %q", body, got, want)
			}
			if len(got) > 0 && &got[len(got)-1] != &body[len(body)-1] {
				t.Errorf("skipBOM(%q) copied the body, want a re-slice", body)
			}
		}
	}
}

// Google's tokenizer (docs/robots-semantics.md#tokenizer, point 3): only the
// first 16,663 bytes of a line are kept; the rest of the line is dropped and
// does not become a new line.
func TestParseLineLength(t *testing.T) {
	if maxLineLen != 16663 {
		t.Errorf("maxLineLen = %d, want 16663", maxLineLen)
	}
	const prefix = "disallow: "
	fit := prefix + "/" + strings.Repeat("a", 16663-len(prefix)-1) // exactly 16663 bytes
	over := fit + "bbbb/qux"
	body := "user-agent: FooBot\n" + fit + "\n" + over + "\nallow: /after\n"
	checkEvents(t, "line length", body, []event{
		{line: 1, kind: "user-agent", value: "FooBot"},
		{line: 2, kind: "disallow", value: fit[len(prefix):]},
		{line: 3, kind: "disallow", value: fit[len(prefix):], long: true},
		{line: 4, kind: "allow", value: "/after"},
	})
	// The cut counts the comment too: a comment that pushes the line over
	// the limit does not hide the next line.
	long := "allow: /x # " + strings.Repeat("c", 20000)
	checkEvents(t, "long comment", long+"\r\ndisallow: /y", []event{
		{line: 1, kind: "allow", value: "/x", long: true},
		{line: 2, kind: "disallow", value: "/y"},
	})
	// Through the matcher: the cut rule matches by its kept prefix, and the
	// rule after the long line applies.
	r := Parse([]byte(body))
	for _, c := range []struct {
		path string
		want bool
	}{
		{"/" + strings.Repeat("a", 16663-len(prefix)-1) + "zzz", false},
		{"/after", true},
		{"/aaa", true},
	} {
		if got := r.Allowed("FooBot", parseTestURL(t, c.path)); got != c.want {
			t.Errorf("Allowed(%q, %.30q…) = %v, want %v", "FooBot", c.path, got, c.want)
		}
	}
}

// Google's tokenizer (docs/robots-semantics.md#tokenizer, point 4): a NUL
// byte ends its line's content.
func TestParseNUL(t *testing.T) {
	checkEvents(t, "NUL", "User-agent: foo\x00bar\nDisallow: /a\x00/b\n\x00Disallow: /c\nAllow: /d", []event{
		{line: 1, kind: "user-agent", value: "foo"},
		{line: 2, kind: "disallow", value: "/a"},
		{line: 4, kind: "allow", value: "/d"},
	})
}

// Google's tokenizer (docs/robots-semantics.md#tokenizer, points 5 and 6):
// comments and trimming.
func TestParseCommentsAndTrimming(t *testing.T) {
	checkEvents(t, "comments", "# a comment\nUser-agent: foo # trailing\nDisallow: /a#b\n   # indented\nAllow: # nothing\n#Disallow: /", []event{
		{line: 2, kind: "user-agent", value: "foo"},
		{line: 3, kind: "disallow", value: "/a"},
		{line: 5, kind: "allow", value: ""},
	})
	checkEvents(t, "trimming", " \t User-agent \t:\t foo bar \t\n\v\fDisallow:/a \f\v\n  \t  \nAllow :   ", []event{
		{line: 1, kind: "user-agent", value: "foo bar"},
		{line: 2, kind: "disallow", value: "/a"},
		{line: 4, kind: "allow", value: ""},
	})
}

// Google's tokenizer (docs/robots-semantics.md#tokenizer, points 6 and 7):
// the separator.
func TestParseSeparator(t *testing.T) {
	checkEvents(t, "missing colon", "user-agent FooBot\ndisallow /x\nallow\t/y\nUser-Agent bar # no\n", []event{
		{line: 1, kind: "user-agent", value: "FooBot", colon: true},
		{line: 2, kind: "disallow", value: "/x", colon: true},
		{line: 3, kind: "allow", value: "/y", colon: true},
		{line: 4, kind: "user-agent", value: "bar", colon: true},
	})
	checkEvents(t, "three tokens", "user-agent foo bar\ndisallow /x /y\n", []event{
		{line: 1, kind: "invalid", value: "user-agent foo bar"},
		{line: 2, kind: "invalid", value: "disallow /x /y"},
	})
	// A colon later in the line wins over intended whitespace: key
	// "Disallow /a" (a Disallow by prefix), value "b".
	checkEvents(t, "late colon", "Disallow /a:b\nfoo bar:baz", []event{
		{line: 1, kind: "disallow", value: "b"},
		{line: 2, kind: "other", key: "foo bar", value: "baz"},
	})
	checkEvents(t, "first colon", "Sitemap: https://example.com/a:b\nDisallow: /a:b", []event{
		{line: 1, kind: "sitemap", value: "https://example.com/a:b"},
		{line: 2, kind: "disallow", value: "/a:b"},
	})
	checkEvents(t, "no directive", "absolutely-random\n: /empty-key\n  :  \nError #and comment\n", []event{
		{line: 1, kind: "invalid", value: "absolutely-random"},
		{line: 2, kind: "invalid", value: ": /empty-key"},
		{line: 3, kind: "invalid", value: ":"},
		{line: 4, kind: "invalid", value: "Error"},
	})
	checkEvents(t, "empty value", "Disallow:\nunicorns: /extinct\nnoarchive:", []event{
		{line: 1, kind: "disallow", value: ""},
		{line: 2, kind: "other", key: "unicorns", value: "/extinct"},
		{line: 3, kind: "other", key: "noarchive", value: ""},
	})
}

// Google's tokenizer (docs/robots-semantics.md#tokenizer, point 8): keys by
// case-insensitive prefix, with the accepted typos.
func TestParseKeys(t *testing.T) {
	for _, c := range []struct {
		key  string
		kind string
		typo bool
	}{
		{"User-agent", "user-agent", false},
		{"USER-AGENT", "user-agent", false},
		{"user-agentfoo", "user-agent", false},
		{"User-agents", "user-agent", false},
		{"useragent", "user-agent", true},
		{"user agent", "user-agent", true},
		{"UserAgent", "user-agent", true},
		{"User_agent", "other", false},
		{"user", "other", false},
		{"Allow", "allow", false},
		{"ALLOWED", "allow", false},
		{"alow", "other", false},
		{"allo", "other", false},
		{"Disallow", "disallow", false},
		{"Disallowed", "disallow", false},
		{"dissallow", "disallow", true},
		{"dissalow", "disallow", true},
		{"disalow", "disallow", true},
		{"diasllow", "disallow", true},
		{"disallaw", "disallow", true},
		{"DISALLAW", "disallow", true},
		{"dissallowed", "disallow", true},
		{"disallo", "other", false},
		{"Sitemap", "sitemap", false},
		{"Sitemaps", "sitemap", false},
		{"site-map", "sitemap", true},
		{"Site-Maps", "sitemap", true},
		{"site map", "other", false},
		{"Crawl-delay", "other", false},
		{"Clean-param", "other", false},
		{"Host", "other", false},
	} {
		got := record(c.key + ": v").events
		if len(got) != 1 || got[0].kind != c.kind || got[0].typo != c.typo || got[0].value != "v" {
			t.Errorf("parse(%q) = %s, want one %s (typo %v) with value \"v\"", c.key+": v", eventsString(got), c.kind, c.typo)
		}
		if c.kind == "other" && len(got) == 1 && got[0].key != c.key {
			t.Errorf("parse(%q) key = %q, want %q", c.key+": v", got[0].key, c.key)
		}
	}
}

// Google's tokenizer (docs/robots-semantics.md#tokenizer, point 9): handlers
// get values as written; the builder normalises rule values
// (docs/robots-semantics.md#normalisation) and keeps user-agent and sitemap
// values raw.
func TestParseValuesRaw(t *testing.T) {
	checkEvents(t, "raw values", "User-agent: FoöBot/1.0\nAllow: /ツ/%aa/%62 x\nSitemap: https://ja.example.org/テスト.xml\nX-Thing: %aa ツ", []event{
		{line: 1, kind: "user-agent", value: "FoöBot/1.0"},
		{line: 2, kind: "allow", value: "/ツ/%aa/%62 x"},
		{line: 3, kind: "sitemap", value: "https://ja.example.org/テスト.xml"},
		{line: 4, kind: "other", key: "X-Thing", value: "%aa ツ"},
	})
}

// RFC 9309 §2.2.2, docs/robots-semantics.md#normalisation: the one form both
// sides are brought to.
func TestAppendNormal(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"/a/b/c", "/a/b/c"},
		{"http://www.example.com", "http://www.example.com"},
		{"á", "%C3%A1"},
		{"/ツ", "/%E3%83%84"},
		{"/テ", "/%E3%83%86"},
		{"%aa", "%AA"},
		{"/%e3%83%86", "/%E3%83%86"},
		{"/%7Euser", "/~user"},
		{"/%7euser", "/~user"},
		{"/%62%61%7A", "/baz"},
		{"/%41%5A%30%39%2D%2E%5F", "/AZ09-._"},
		{"/a%2Fb", "/a%2Fb"},
		{"/a%2fb", "/a%2Fb"},
		{"/a%3Fb%23c%25d", "/a%3Fb%23c%25d"},
		{"/a%2A%24", "/a%2A%24"},
		{"/a b", "/a%20b"},
		{"/a\tb\x00\x7f", "/a%09b%00%7F"},
		{`/"<>\^` + "`{|}", "/%22%3C%3E%5C%5E%60%7B%7C%7D"},
		{"/*$", "/*$"},
		{"/?a=b&c=d;e", "/?a=b&c=d;e"},
		{"/!'()+,=:@[]", "/!'()+,=:@[]"},
		{"%", "%25"},
		{"/%", "/%25"},
		{"/%a", "/%25a"},
		{"/%zz", "/%25zz"},
		{"/%g1", "/%25g1"},
		{"/%%41", "/%25A"},
		{"/100%", "/100%25"},
	} {
		if got := string(appendNormal(nil, c.in, &patternOctets)); got != c.want {
			t.Errorf("appendNormal(nil, %q) = %q, want %q", c.in, got, c.want)
		}
		// Normalising twice changes nothing.
		once := string(appendNormal(nil, c.in, &patternOctets))
		if twice := string(appendNormal(nil, once, &patternOctets)); twice != once {
			t.Errorf("appendNormal(nil, %q) = %q, not idempotent on %q", once, twice, c.in)
		}
	}
}

// Google's GetPathParamsQuery (robots.cc), as docs/robots-semantics.md#wildcards
// changes it: the target
// is the escaped path (or "/") plus the query, without the fragment.
func TestAppendTarget(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", "/"},
		{"http://www.example.com", "/"},
		{"http://www.example.com/", "/"},
		{"http://www.example.com/a", "/a"},
		{"http://www.example.com/a/", "/a/"},
		{"http://www.example.com/a/b?c=http://d.e/", "/a/b?c=http://d.e/"},
		{"http://www.example.com/a/b?c=d&e=f#fragment", "/a/b?c=d&e=f"},
		{"http://www.example.com?a", "/?a"},
		{"http://www.example.com/a;b#c", "/a;b"},
		{"/a", "/a"},
		{"/a?", "/a?"},
		{"/テ?q=テ", "/%E3%83%86?q=%E3%83%86"},
		{"/%7e?q=%7e", "/~?q=~"},
		{"/a%2fb", "/a%2Fb"},
		{"/a b?c d", "/a%20b?c%20d"},
		// RFC 9309 §2.2.3: "*" and "$" in a URI compare as their escapes.
		{"/a*b$?c*d$", "/a%2Ab%24?c%2Ad%24"},
		{"/a%2ab%24", "/a%2Ab%24"},
		{"/robots.txt", "/robots.txt"},
		// robots_test.cc in https://github.com/google/robotstxt
		// (GetPathParamsQuery): without a scheme, the first component is the
		// host.
		{"example.com", "/"},
		{"example.com/", "/"},
		{"example.com/a", "/a"},
		{"example.com/a/", "/a/"},
		{"example.com/a/b?c=d&e=f#fragment", "/a/b?c=d&e=f"},
		{"a", "/"},
		{"a/", "/"},
		{"a/b", "/b"},
		{"example.com?a", "/?a"},
		{"example.com/a;b#c", "/a;b"},
		{"//a/b/c", "/b/c"},
		// The same reading of an opaque URL, and of a relative one whose
		// path starts with ';' after the host, as GetPathParamsQuery has it.
		{"example.com:8080/a?q", "/a?q"},
		{"example.com:8080", "/"},
		{"mailto:bot@example.com", "/"},
		{"a;b/c", "/;b/c"},
		{"a/テ b?テ", "/%E3%83%86%20b?%E3%83%86"},
		{"a/%7e$", "/~%24"},
	} {
		if got, set := targetOf(nil, parseTestURL(t, c.in)); got != c.want || set != octetsOf(got) {
			t.Errorf("targetOf(nil, %q) = %q, %#x, want %q, %#x", c.in, got, set, c.want, octetsOf(c.want))
		}
	}
}

// TestTargetOfEscapedPath checks targetOf on URLs whose Path is set without
// a RawPath, octet by octet: the target is what normalising
// url.URL.EscapedPath gives, built without allocating.
func TestTargetOfEscapedPath(t *testing.T) {
	var buf [512]byte
	for c := 0; c < 256; c++ {
		o := string(byte(c))
		for _, path := range []string{o, "a" + o + "b", o + "%41$"} {
			for _, p := range []string{path, "/" + path, "h/" + path} {
				u := &url.URL{Path: p}
				want := string(appendNormal(nil, u.EscapedPath(), &targetOctets))
				if want == "" || want[0] != '/' {
					// As Google's GetPathParamsQuery: a relative path
					// starts with the host, and its path at the first
					// '/' or ';'.
					if i := strings.IndexAny(want, "/;"); i >= 0 {
						want = want[i:]
					} else {
						want = ""
					}
					if want == "" || want[0] != '/' {
						want = "/" + want
					}
				}
				var got string
				var set octetSet
				if n := testing.AllocsPerRun(1, func() { got, set = targetOf(buf[:0], u) }); n != 0 {
					t.Errorf("targetOf(buf, &url.URL{Path: %q}) allocates %v times, want 0", p, n)
				}
				if got != want || set != octetsOf(got) {
					t.Errorf("targetOf(buf, &url.URL{Path: %q}) = %q, %#x, want %q, %#x", p, got, set, want, octetsOf(want))
				}
			}
		}
	}
}

// parse reads only the first MaxSize bytes (docs/robots-semantics.md#limits).
func TestParseMaxSize(t *testing.T) {
	if MaxSize != 500*1024 {
		t.Errorf("MaxSize = %d, want %d", MaxSize, 500*1024)
	}
	head := "User-agent: *\n"
	rule := "Disallow: /straddles-the-cut\n"
	pad := strings.Repeat("#", MaxSize-len(head)-len("Disallow: /str")-1) + "\n"
	body := head + pad + rule + "Disallow: /late\n"
	got := record(body).events
	want := []event{
		{line: 1, kind: "user-agent", value: "*"},
		{line: 3, kind: "disallow", value: "/str"},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("parse(<%d bytes>) events:%s\nwant:%s", len(body), eventsString(got), eventsString(want))
	}
}
