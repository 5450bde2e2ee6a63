package policy

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// parseTestURL parses s or fails the test.
func parseTestURL(t testing.TB, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatalf("url.Parse(%q): %v", s, err)
	}
	return u
}

// An allowedCase is one Allowed call against one robots.txt body. sec names
// where the expectation comes from: "RFC 9309 2.2.2" is a section of
// https://www.rfc-editor.org/rfc/rfc9309; "Google: URL matching" and the
// like a section of Google's robots.txt documentation,
// https://developers.google.com/search/docs/crawling-indexing/robots/robots_txt
// ("File location and range of validity", "File format", "Syntax",
// "Grouping of lines and rules", "Order of precedence for user agents",
// "URL matching based on path values", "Order of precedence for rules");
// "google/robotstxt" Google's matcher, https://github.com/google/robotstxt;
// "Yandex analyser" the errors of Yandex's robots.txt analyser; and
// docs/robots-semantics.md this repository's choices where they differ.
type allowedCase struct {
	sec    string
	robots string
	agent  string
	url    string
	want   bool
}

func runAllowed(t *testing.T, cases []allowedCase) {
	t.Helper()
	for _, c := range cases {
		r := Parse([]byte(c.robots))
		if got := r.Allowed(c.agent, parseTestURL(t, c.url)); got != c.want {
			t.Errorf("%s: Allowed(%q, %q) = %v, want %v\nrobots.txt:\n%s", c.sec, c.agent, c.url, got, c.want, c.robots)
		}
	}
}

// Google, file location: the robots.txt at /robots.txt governs the paths of
// its own origin. Allowed looks at the path only (the caller picks the file
// by origin), and only /robots.txt is special: a robots.txt in a
// sub-directory is an ordinary URL, and the path is case-sensitive.
func TestAllowedScope(t *testing.T) {
	const body = "User-agent: *\nDisallow: /\n"
	runAllowed(t, []allowedCase{
		// Google, file location: the file is valid for
		// https://example.com/folder/file.
		{"Google: file location", body, "FooBot", "https://example.com/folder/file", false},
		// Allowed looks at the path and query only, never at the host: the
		// caller picks the robots.txt of the URL's origin.
		{"Google: file location", body, "FooBot", "https://other.example.com/folder/file", false},
		{"Google: file location", body, "FooBot", "/folder/file", false},
		// Google, file location: /folder/robots.txt is not a robots.txt, so
		// not exempt.
		{"Google: file location", body, "FooBot", "https://example.com/folder/robots.txt", false},
		// Google, file location: the robots.txt URL is case-sensitive.
		{"Google: file location", body, "FooBot", "https://example.com/ROBOTS.TXT", false},
		{"Google: file location", body, "FooBot", "https://example.com/robots.txt", true},
	})
}

// Google, format and syntax: file format.
func TestAllowedFileFormat(t *testing.T) {
	runAllowed(t, []allowedCase{
		// Google, format and syntax: records separated by CR, CR/LF or LF.
		{"Google: format and syntax", "User-agent: *\nDisallow: /a\n", "x", "/a", false},
		{"Google: format and syntax", "User-agent: *\r\nDisallow: /a\r\n", "x", "/a", false},
		{"Google: format and syntax", "User-agent: *\rDisallow: /a\r", "x", "/a", false},
		{"Google: format and syntax", "User-agent: *\rDisallow: /b\nDisallow: /a\r\n", "x", "/a", false},
		// Google, format and syntax: a leading Unicode BOM is ignored.
		{"Google: format and syntax", "\xEF\xBB\xBFUser-agent: *\nDisallow: /a\n", "x", "/a", false},
		// Google, format and syntax: invalid lines are ignored, valid lines used.
		{"Google: format and syntax", "User-agent: *\nthis is not a rule\nDisallow: /a\n", "x", "/a", false},
		{"Google: format and syntax", "<html><body>\nUser-agent: *\n<p>\nDisallow: /a\n</body></html>\n", "x", "/a", false},
		{"Google: format and syntax", "<html><body>\nUser-agent: *\n<p>\nDisallow: /a\n</body></html>\n", "x", "/b", true},
		// Google, format and syntax: whitespace around field and value is
		// ignored.
		{"Google: format and syntax", "  User-agent  :  *  \n\t Disallow\t:\t/a \t\n", "x", "/a", false},
		{"Google: format and syntax", "User-agent:*\nDisallow:/a\n", "x", "/a", false},
		// Google, format and syntax: everything after # is a comment.
		{"Google: format and syntax", "User-agent: * # all\nDisallow: /a#b\n", "x", "/a", false},
		{"Google: format and syntax", "User-agent: *\n# Disallow: /\nDisallow: /a\n", "x", "/b", true},
		{"Google: format and syntax", "User-agent: *\nDisallow: /a#b\n", "x", "/ab", false},
		// Google, format and syntax: field names are case-insensitive.
		{"Google: format and syntax", "USER-AGENT: *\nDISALLOW: /a\n", "x", "/a", false},
		{"Google: format and syntax", "uSeR-aGeNt: *\ndIsAlLoW: /a\nAlLoW: /a/b\n", "x", "/a/b", true},
		// Google, format and syntax: allow/disallow values are case-sensitive.
		{"Google: format and syntax", "User-agent: *\nDisallow: /a\n", "x", "/A", true},
		// Google, format and syntax: the user-agent value is case-insensitive.
		{"Google: format and syntax", "User-agent: FOOBOT\nDisallow: /a\n", "foobot", "/a", false},
		{"Google: format and syntax", "User-agent: foobot\nDisallow: /a\n", "FooBot", "/a", false},
	})
}

// Google, format and syntax: content past 500 KiB is ignored.
func TestAllowedSizeLimit(t *testing.T) {
	var b strings.Builder
	b.WriteString("User-agent: *\nDisallow: /early\n")
	for b.Len() < 600<<10 {
		b.WriteString("# padding padding padding padding padding padding padding\n")
	}
	b.WriteString("Disallow: /late\n")
	r := Parse([]byte(b.String()))
	for _, c := range []struct {
		path string
		want bool
	}{{"/early", false}, {"/late", true}} {
		if got := r.Allowed("x", parseTestURL(t, c.path)); got != c.want {
			t.Errorf("Google: format and syntax: Allowed(%q, %q) = %v, want %v (rule after 600 KiB)", "x", c.path, got, c.want)
		}
	}
}

// Google, syntax: fields.
func TestAllowedFields(t *testing.T) {
	runAllowed(t, []allowedCase{
		// Google, syntax: a rule without a path is ignored.
		{"Google: syntax", "User-agent: *\nDisallow:\n", "x", "/a", true},
		{"Google: syntax", "User-agent: *\nDisallow: \nDisallow: /b\n", "x", "/a", true},
		// Google, syntax: by default there are no restrictions.
		{"Google: syntax", "", "x", "/a", true},
		{"Google: syntax", "User-agent: *\n", "x", "/a", true},
		// Google, syntax: other fields are ignored by the matcher.
		{"Google: syntax", "User-agent: *\nCrawl-delay: 10\nHost: example.com\nClean-param: ref /a\nDisallow: /b\n", "x", "/a", true},
		{"Google: syntax", "User-agent: *\nCrawl-delay: 10\nHost: example.com\nClean-param: ref /a\nDisallow: /b\n", "x", "/b", false},
	})
}

// Google, grouping: groups and merging.
func TestAllowedGroups(t *testing.T) {
	// Google, grouping: a sitemap line does not end the group; one group for
	// a and b.
	const sitemapInside = "user-agent: a\nsitemap: https://example.com/sitemap.xml\n\nuser-agent: b\ndisallow: /\n"
	// Google, grouping: the last user-agent line with no rules is a group of
	// its own.
	const lastEmpty = "user-agent: a\ndisallow: /c\n\nuser-agent: *\ndisallow: /\n\nuser-agent: h\n"
	// Google, grouping: groups naming the same agent are merged.
	const merged = "user-agent: googlebot-news\ndisallow: /fish\n\nuser-agent: *\ndisallow: /carrots\n\nuser-agent: googlebot-news\ndisallow: /shrimp\n"
	// Google, grouping: unknown fields do not end a group either.
	const unknownInside = "user-agent: a\nunknown-field: value\ncrawl-delay: 3\nuser-agent: b\ndisallow: /x\n"
	runAllowed(t, []allowedCase{
		{"Google: grouping", sitemapInside, "a", "/anything", false},
		{"Google: grouping", sitemapInside, "b", "/anything", false},
		{"Google: grouping", sitemapInside, "c", "/anything", true},
		{"Google: grouping", unknownInside, "a", "/x", false},
		{"Google: grouping", unknownInside, "b", "/x", false},
		{"Google: grouping", lastEmpty, "h", "/c", true},
		{"Google: grouping", lastEmpty, "h", "/anything", true},
		{"Google: grouping", lastEmpty, "a", "/c", false},
		{"Google: grouping", lastEmpty, "a", "/d", true},
		{"Google: grouping", lastEmpty, "z", "/d", false},
		{"Google: grouping", merged, "googlebot-news", "/fish", false},
		{"Google: grouping", merged, "googlebot-news", "/shrimp", false},
		// Google, grouping: a specific group and the * group are never merged.
		{"Google: grouping", merged, "googlebot-news", "/carrots", true},
		{"Google: grouping", merged, "otherbot", "/carrots", false},
		{"Google: grouping", merged, "otherbot", "/fish", true},
		// Google, grouping: rules before any user-agent line are ignored.
		{"Google: grouping", "disallow: /a\nuser-agent: *\ndisallow: /b\n", "x", "/a", true},
		{"Google: grouping", "disallow: /a\nuser-agent: *\ndisallow: /b\n", "x", "/b", false},
		{"Google: grouping", "disallow: /\n", "x", "/a", true},
		// Google, grouping: the group's rules follow until the next user-agent
		// line that comes after a rule; blank lines do not end a group.
		{"Google: grouping", "user-agent: a\n\ndisallow: /a\n\n\nallow: /a/b\nuser-agent: b\ndisallow: /b\n", "a", "/a/c", false},
		{"Google: grouping", "user-agent: a\n\ndisallow: /a\n\n\nallow: /a/b\nuser-agent: b\ndisallow: /b\n", "a", "/a/b", true},
		{"Google: grouping", "user-agent: a\n\ndisallow: /a\n\n\nallow: /a/b\nuser-agent: b\ndisallow: /b\n", "a", "/b", true},
		{"Google: grouping", "user-agent: a\n\ndisallow: /a\n\n\nallow: /a/b\nuser-agent: b\ndisallow: /b\n", "b", "/a", true},
		// Google, grouping: two * groups are merged like any other.
		{"Google: grouping", "user-agent: *\ndisallow: /a\nuser-agent: x\ndisallow: /x\nuser-agent: *\ndisallow: /b\n", "y", "/a", false},
		{"Google: grouping", "user-agent: *\ndisallow: /a\nuser-agent: x\ndisallow: /x\nuser-agent: *\ndisallow: /b\n", "y", "/b", false},
	})

	// Google, grouping: the order of groups in the file does not matter.
	groups := []string{
		"user-agent: a\ndisallow: /a\n",
		"user-agent: *\ndisallow: /star\n",
		"user-agent: b\nallow: /b\ndisallow: /\n",
		"user-agent: a\nallow: /a/ok\n",
	}
	probes := []struct{ agent, path string }{
		{"a", "/a"}, {"a", "/a/ok"}, {"a", "/star"}, {"b", "/b"}, {"b", "/c"}, {"c", "/star"}, {"c", "/a"},
	}
	want := Parse([]byte(strings.Join(groups, "\n")))
	for perm := range permutations(len(groups)) {
		var body []string
		for _, i := range perm {
			body = append(body, groups[i])
		}
		got := Parse([]byte(strings.Join(body, "\n")))
		for _, p := range probes {
			u := parseTestURL(t, p.path)
			if g, w := got.Allowed(p.agent, u), want.Allowed(p.agent, u); g != w {
				t.Errorf("Google: grouping (group order %v): Allowed(%q, %q) = %v, want %v", perm, p.agent, p.path, g, w)
			}
		}
	}
}

// permutations yields every permutation of 0..n-1.
func permutations(n int) func(yield func([]int) bool) {
	return func(yield func([]int) bool) {
		p := make([]int, n)
		for i := range p {
			p[i] = i
		}
		var rec func(k int) bool
		rec = func(k int) bool {
			if k == n {
				return yield(slices.Clone(p))
			}
			for i := k; i < n; i++ {
				p[k], p[i] = p[i], p[k]
				if !rec(k + 1) {
					return false
				}
				p[k], p[i] = p[i], p[k]
			}
			return true
		}
		rec(0)
	}
}

// Google, user-agent precedence: choosing the group for a crawler.
func TestAllowedAgentChoice(t *testing.T) {
	const google = "user-agent: googlebot-news\ndisallow: /news-only\n\n" +
		"user-agent: *\ndisallow: /star-only\n\n" +
		"user-agent: googlebot\ndisallow: /googlebot-only\n"
	runAllowed(t, []allowedCase{
		// Google, user-agent precedence: Googlebot-News → googlebot-news group.
		{"Google: user-agent precedence", google, "Googlebot-News", "/news-only", false},
		{"Google: user-agent precedence", google, "Googlebot-News", "/googlebot-only", true},
		{"Google: user-agent precedence", google, "Googlebot-News", "/star-only", true},
		// Google, user-agent precedence: Googlebot → googlebot group.
		{"Google: user-agent precedence", google, "Googlebot", "/googlebot-only", false},
		{"Google: user-agent precedence", google, "Googlebot", "/news-only", true},
		{"Google: user-agent precedence", google, "Googlebot", "/star-only", true},
		// Google, user-agent precedence: Storebot-Google → the * group (no
		// group of its own).
		{"Google: user-agent precedence", google, "Storebot-Google", "/star-only", false},
		{"Google: user-agent precedence", google, "Storebot-Google", "/googlebot-only", true},
		{"Google: user-agent precedence", google, "Storebot-Google", "/news-only", true},
		// Google, user-agent precedence: another crawler → the * group.
		{"Google: user-agent precedence", google, "OtherBot", "/star-only", false},
		{"Google: user-agent precedence", google, "OtherBot", "/googlebot-only", true},
		// Google, user-agent precedence: matching is case-insensitive.
		{"Google: user-agent precedence", google, "GOOGLEBOT", "/googlebot-only", false},
		{"Google: user-agent precedence", google, "googlebot-NEWS", "/news-only", false},
		// Google, user-agent precedence: googlebot/1.2 and googlebot* in the
		// file ≡ googlebot.
		{"Google: user-agent precedence", "user-agent: googlebot/1.2\ndisallow: /a\nuser-agent: *\ndisallow: /b\n", "googlebot", "/a", false},
		{"Google: user-agent precedence", "user-agent: googlebot/1.2\ndisallow: /a\nuser-agent: *\ndisallow: /b\n", "googlebot", "/b", true},
		{"Google: user-agent precedence", "user-agent: googlebot*\ndisallow: /a\nuser-agent: *\ndisallow: /b\n", "googlebot", "/a", false},
		{"Google: user-agent precedence", "user-agent: googlebot*\ndisallow: /a\nuser-agent: *\ndisallow: /b\n", "googlebot", "/b", true},
		{"Google: user-agent precedence", "user-agent: Googlebot Images\ndisallow: /a\n", "googlebot", "/a", false},
		// docs/robots-semantics.md#product-tokens: "*" followed by
		// whitespace and anything is global.
		{"docs/robots-semantics.md#product-tokens", "user-agent: * everyone\ndisallow: /a\n", "x", "/a", false},
		{"docs/robots-semantics.md#product-tokens", "user-agent: *\tall\ndisallow: /a\n", "x", "/a", false},
		// Google, user-agent precedence: a related name does not count.
		{"Google: user-agent precedence", "user-agent: googlebot\ndisallow: /\n", "googlebot-news", "/a", true},
		{"Google: user-agent precedence", "user-agent: googlebot-news\ndisallow: /\n", "googlebot", "/a", true},
		{"Google: user-agent precedence", "user-agent: googlebo\ndisallow: /\n", "googlebot", "/a", true},
		// Google, user-agent precedence: no matching group and no * group:
		// everything allowed.
		{"Google: user-agent precedence", "user-agent: a\ndisallow: /\nuser-agent: b\ndisallow: /\n", "c", "/x", true},
		// RFC 9309 2.2.1: a group naming the agent hides *, even without
		// rules or without a rule that matches.
		{"Google: user-agent precedence", "user-agent: *\ndisallow: /\nuser-agent: a\n", "a", "/x", true},
		{"Google: user-agent precedence", "user-agent: *\ndisallow: /\nuser-agent: a\ndisallow:\n", "a", "/x", true},
		{"Google: user-agent precedence", "user-agent: *\ndisallow: /\nuser-agent: a\ndisallow: /y\n", "a", "/x", true},
		// A group naming both * and the agent is specific for the agent.
		{"Google: user-agent precedence", "user-agent: *\nuser-agent: a\ndisallow: /x\nuser-agent: *\ndisallow: /y\n", "a", "/y", true},
		{"Google: user-agent precedence", "user-agent: *\nuser-agent: a\ndisallow: /x\nuser-agent: *\ndisallow: /y\n", "a", "/x", false},
		{"Google: user-agent precedence", "user-agent: *\nuser-agent: a\ndisallow: /x\nuser-agent: *\ndisallow: /y\n", "b", "/x", false},
		{"Google: user-agent precedence", "user-agent: *\nuser-agent: a\ndisallow: /x\nuser-agent: *\ndisallow: /y\n", "b", "/y", false},
	})
}

// docs/robots-semantics.md#product-tokens: the agent passed to a match is a
// product token compared whole and case-insensitively; the caller turns a
// header into a token.
func TestAllowedProductTokenWhole(t *testing.T) {
	const body = "User-agent: ExampleBot\nDisallow: /\n"
	runAllowed(t, []allowedCase{
		{"docs/robots-semantics.md#product-tokens", body, "ExampleBot", "/a", false},
		{"docs/robots-semantics.md#product-tokens", body, "examplebot", "/a", false},
		{"docs/robots-semantics.md#product-tokens", body, "EXAMPLEBOT", "/a", false},
		// The full header does not name the group.
		{"docs/robots-semantics.md#product-tokens", body, "ExampleBot/1.0", "/a", true},
		{"docs/robots-semantics.md#product-tokens", body, "ExampleBot/1.0 (+https://example.org/bot)", "/a", true},
		{"docs/robots-semantics.md#product-tokens", body, "Example", "/a", true},
		{"docs/robots-semantics.md#product-tokens", body, "ExampleBotX", "/a", true},
		// ... until ProductToken has been applied.
		{"docs/robots-semantics.md#product-tokens", body, ProductToken("ExampleBot/1.0 (+https://example.org/bot)"), "/a", false},
	})
}

// docs/robots-semantics.md#product-tokens: ProductToken.
func TestProductToken(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"ExampleBot/1.0 (+https://example.org/bot)", "ExampleBot"},
		{"ExampleBot", "ExampleBot"},
		{"Googlebot-News", "Googlebot-News"},
		{"Storebot-Google/1.0", "Storebot-Google"},
		{"foo_bar-baz/2", "foo_bar-baz"},
		{"Foo Bar", "Foo"},
		{"  \tFooBot/1", "FooBot"},
		{"Bot2", "Bot"},
		// Browser-compatible bot User-Agents: the bot's product, not Mozilla.
		{"Mozilla/5.0 (compatible; ExampleBot/0.1; +https://www.example.com/bot.html)", "ExampleBot"},
		{"Mozilla/5.0 (compatible; MyBot/1.0; +https://example.org/bot)", "MyBot"},
		{"Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)", "Googlebot"},
		{"Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)", "bingbot"},
		{"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Googlebot/2.1; +http://www.google.com/bot.html) Chrome/120.0.0.0 Safari/537.36", "Googlebot"},
		{"Mozilla/5.0 (Linux; Android 6.0.1; Nexus 5X Build/MMB29P) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Mobile Safari/537.36 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)", "Googlebot"},
		{"Mozilla/5.0 (compatible; YandexBot/3.0; +http://yandex.com/bots)", "YandexBot"},
		{"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36 MyBot/2", "MyBot"},
		// A browser's User-Agent names no crawler: only User-agent: * applies.
		{"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36", ""},
		{"Mozilla/5.0 (X11; Linux x86_64; rv:109.0) Gecko/20100101 Firefox/115.0", ""},
		{"Mozilla/5.0 (compatible; MSIE 9.0; Windows NT 6.1; Trident/5.0)", ""},
		{"Mozilla/5.0", ""},
		{"Mozilla", "Mozilla"},
		{"Opera/9.80 (Windows NT 6.0) Presto/2.12.388 Version/12.14", ""},
		{"", ""},
		{"*", ""},
		{"ツBot", ""},
		{"FoöBot", "Fo"},
		{"/1.0", ""},
	} {
		if got := ProductToken(c.in); got != c.want {
			t.Errorf("ProductToken(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// matchExamples are the examples of Google's "URL matching based on path
// values": rule → matches / does not match.
var matchExamples = []struct {
	rule     string
	match    []string
	notMatch []string
}{
	{"/", []string{"/", "/a", "/fish/salmon.html", "/?q=1"}, nil},
	{"/*", []string{"/", "/a", "/fish/salmon.html", "/?q=1"}, nil},
	{"/$", []string{"/"}, []string{"/a", "/index.html", "/?q=1"}},
	{"/fish",
		[]string{"/fish", "/fish.html", "/fish/salmon.html", "/fishheads", "/fishheads/yummy.html", "/fish.php?id=anything"},
		[]string{"/Fish.asp", "/catfish", "/?id=fish", "/desert/fish"}},
	{"/fish*",
		[]string{"/fish", "/fish.html", "/fish/salmon.html", "/fishheads", "/fishheads/yummy.html", "/fish.php?id=anything"},
		[]string{"/Fish.asp", "/catfish", "/?id=fish", "/desert/fish"}},
	{"/fish/",
		[]string{"/fish/", "/fish/?id=anything", "/fish/salmon.htm"},
		[]string{"/fish", "/fish.html", "/animals/fish/", "/Fish/Salmon.asp"}},
	{"/*.php",
		[]string{"/index.php", "/filename.php", "/folder/filename.php", "/folder/filename.php?parameters", "/folder/any.php.file.html", "/filename.php/"},
		[]string{"/", "/windows.PHP"}},
	{"/*.php$",
		[]string{"/filename.php", "/folder/filename.php"},
		[]string{"/filename.php?parameters", "/filename.php/", "/filename.php5", "/windows.PHP"}},
	{"/fish*.php",
		[]string{"/fish.php", "/fishheads/catfish.php?parameters"},
		[]string{"/Fish.PHP"}},
	{"/public",
		[]string{"/public", "/public_db", "/public/list.html", "/public?q=hello"},
		[]string{"/Public", "/x/public"}},
}

// Google, URL matching: every match example, through Allowed (as a Disallow
// and as an Allow under "Disallow: /") and through match itself.
func TestAllowedMatchExamples(t *testing.T) {
	for _, ex := range matchExamples {
		disallow := "User-agent: *\nDisallow: " + ex.rule + "\n"
		allow := "User-agent: *\nDisallow: /\nAllow: " + ex.rule + "\n"
		var cases []allowedCase
		for _, p := range ex.match {
			cases = append(cases,
				allowedCase{"Google: URL matching " + ex.rule, disallow, "FooBot", p, false},
				allowedCase{"Google: URL matching " + ex.rule, allow, "FooBot", p, true})
		}
		for _, p := range ex.notMatch {
			cases = append(cases,
				allowedCase{"Google: URL matching " + ex.rule, disallow, "FooBot", p, true})
			if ex.rule != "/$" {
				cases = append(cases, allowedCase{"Google: URL matching " + ex.rule, allow, "FooBot", p, false})
			}
		}
		runAllowed(t, cases)
	}
}

func TestMatchExamples(t *testing.T) {
	for _, ex := range matchExamples {
		for _, p := range ex.match {
			if !match(ex.rule, p) {
				t.Errorf("Google: URL matching: match(%q, %q) = false, want true", ex.rule, p)
			}
		}
		for _, p := range ex.notMatch {
			if match(ex.rule, p) {
				t.Errorf("Google: URL matching: match(%q, %q) = true, want false", ex.rule, p)
			}
		}
	}
}

// RFC 9309 §2.2.3: '*' matches any run, '$' anchors only at the end of a
// pattern; matching is case-sensitive and anchored at the start.
func TestMatch(t *testing.T) {
	for _, c := range []struct {
		pattern, target string
		want            bool
	}{
		{"", "/", true},
		{"", "", true},
		{"/", "", false},
		{"*", "", true},
		{"*", "/anything", true},
		{"$", "", true},
		{"$", "/", false},
		{"*$", "/x", true},
		{"/a$", "/a", true},
		{"/a$", "/ab", false},
		{"/a$", "/a$", false},
		{"/a$b", "/a$b", true},
		{"/a$b", "/ab", false},
		{"/a$$", "/a$", true},
		{"/a$$", "/a", false},
		{"/a*b", "/ab", true},
		{"/a*b", "/axxb", true},
		{"/a*b", "/axxbyy", true},
		{"/a*b$", "/axxbyy", false},
		{"/a*b$", "/axbxb", true},
		{"/a**b", "/ab", true},
		{"/*/*/pulse", "/user/repo/pulse", true},
		{"/*/*/pulse", "/user/pulse", false},
		{"/*aba", "/ababa", true},
		{"/*ab*ba$", "/aba", false},
		{"/*ab*ba$", "/abba", true},
		{"/*ab*ab", "/abab", true},
		{"/*ab*ab", "/aab", false},
		{"fish", "/fish", false},
		{"*fish", "/fish", true},
		{"/x*", "/x", true},
		{"/x*$", "/x", true},
		{"/X", "/x", false},
	} {
		if got := match(c.pattern, c.target); got != c.want {
			t.Errorf("match(%q, %q) = %v, want %v", c.pattern, c.target, got, c.want)
		}
	}
}

// Google, rule precedence: which rule wins.
func TestAllowedPriority(t *testing.T) {
	rules := func(lines ...string) string {
		return "User-agent: FooBot\n" + strings.Join(lines, "\n") + "\n"
	}
	runAllowed(t, []allowedCase{
		{"Google: rule precedence", rules("allow: /p", "disallow: /"), "FooBot", "/page", true},
		{"Google: rule precedence", rules("allow: /folder", "disallow: /folder"), "FooBot", "/folder/page", true},
		{"Google: rule precedence", rules("disallow: /folder", "allow: /folder"), "FooBot", "/folder/page", true},
		{"Google: rule precedence", rules("allow: /page", "disallow: /*.htm"), "FooBot", "/page.htm", false},
		{"Google: rule precedence", rules("allow: /page", "disallow: /*.ph"), "FooBot", "/page.php5", true},
		{"Google: rule precedence", rules("allow: /$", "disallow: /"), "FooBot", "/", true},
		{"Google: rule precedence", rules("allow: /$", "disallow: /"), "FooBot", "/page.htm", false},
		// Google, rule precedence: real files: Disallow: / + Allow: /$ (home
		// page only).
		{"Google: rule precedence", rules("Disallow: /", "Allow: /$"), "FooBot", "/", true},
		{"Google: rule precedence", rules("Disallow: /", "Allow: /$"), "FooBot", "/index.html", false},
		// Google, rule precedence: Disallow: / + Allow: /index.html + Allow:
		// /public.
		{"Google: rule precedence", rules("Disallow: /", "Allow: /index.html", "Allow: /public"), "FooBot", "/index.html", true},
		{"Google: rule precedence", rules("Disallow: /", "Allow: /index.html", "Allow: /public"), "FooBot", "/public_db", true},
		{"Google: rule precedence", rules("Disallow: /", "Allow: /index.html", "Allow: /public"), "FooBot", "/public/list.html", true},
		{"Google: rule precedence", rules("Disallow: /", "Allow: /index.html", "Allow: /public"), "FooBot", "/public?q=hello", true},
		{"Google: rule precedence", rules("Disallow: /", "Allow: /index.html", "Allow: /public"), "FooBot", "/private", false},
		// Order in the file does not matter.
		{"Google: rule precedence", rules("disallow: /", "allow: /p"), "FooBot", "/page", true},
		{"Google: rule precedence", rules("disallow: /x/page", "allow: /x/"), "FooBot", "/x/page", false},
		{"Google: rule precedence", rules("allow: /x/", "disallow: /x/page"), "FooBot", "/x/page", false},
	})
}

// docs/robots-semantics.md#normalisation: both sides are normalised the same way.
func TestAllowedNormalisation(t *testing.T) {
	dis := func(rule string) string { return "User-agent: *\nDisallow: " + rule + "\n" }
	runAllowed(t, []allowedCase{
		// docs/robots-semantics.md#normalisation: /テ ≡ /%E3%83%86, both ways
		// round.
		{"docs/robots-semantics.md#normalisation", dis("/テ"), "x", "/%E3%83%86", false},
		{"docs/robots-semantics.md#normalisation", dis("/テ"), "x", "/テ", false},
		{"docs/robots-semantics.md#normalisation", dis("/テ"), "x", "/%e3%83%86", false},
		{"docs/robots-semantics.md#normalisation", dis("/%E3%83%86"), "x", "/テ", false},
		{"docs/robots-semantics.md#normalisation", dis("/%e3%83%86"), "x", "/テ", false},
		{"docs/robots-semantics.md#normalisation", dis("/テ"), "x", "/%E3%83%87", true},
		// docs/robots-semantics.md#normalisation: /%7Euser ≡ /~user.
		{"docs/robots-semantics.md#normalisation", dis("/%7Euser"), "x", "/~user", false},
		{"docs/robots-semantics.md#normalisation", dis("/~user"), "x", "/%7Euser", false},
		{"docs/robots-semantics.md#normalisation", dis("/~user"), "x", "/%7euser", false},
		{"docs/robots-semantics.md#normalisation", dis("/%62%61%7A"), "x", "/baz", false},
		{"docs/robots-semantics.md#normalisation", dis("/baz"), "x", "/%62%61%7A", false},
		// docs/robots-semantics.md#normalisation: /%aa ≡ /%AA.
		{"docs/robots-semantics.md#normalisation", dis("/%aa"), "x", "/%AA", false},
		{"docs/robots-semantics.md#normalisation", dis("/%AA"), "x", "/%aa", false},
		{"docs/robots-semantics.md#normalisation", dis("/%aa"), "x", "/%aa", false},
		// docs/robots-semantics.md#normalisation: the rule /a b matches /a%20b.
		{"docs/robots-semantics.md#normalisation", dis("/a b"), "x", "/a%20b", false},
		{"docs/robots-semantics.md#normalisation", dis("/a%20b"), "x", "/a%20b", false},
		{"docs/robots-semantics.md#normalisation", dis("/a b"), "x", "/a", true},
		{"docs/robots-semantics.md#normalisation", dis(`/a"b`), "x", "/a%22b", false},
		{"docs/robots-semantics.md#normalisation", dis("/a|b"), "x", "/a%7Cb", false},
		{"docs/robots-semantics.md#normalisation", dis("/a%7cb"), "x", "/a|b", false},
		// docs/robots-semantics.md#normalisation: /a%2Fb ≠ /a/b, either way
		// round.
		{"docs/robots-semantics.md#normalisation", dis("/a%2Fb"), "x", "/a/b", true},
		{"docs/robots-semantics.md#normalisation", dis("/a/b"), "x", "/a%2Fb", true},
		{"docs/robots-semantics.md#normalisation", dis("/a%2Fb"), "x", "/a%2fb", false},
		{"docs/robots-semantics.md#normalisation", dis("/a%2Fb"), "x", "/a%2Fb", false},
		{"docs/robots-semantics.md#normalisation", dis("/a?b"), "x", "/a%3Fb", true},
		// docs/robots-semantics.md#wildcards: $ and * are ordinary
		// characters in the URL.
		{"docs/robots-semantics.md#wildcards", dis("/a$"), "x", "/a$", true},
		{"docs/robots-semantics.md#wildcards", dis("/a$"), "x", "/a", false},
		{"docs/robots-semantics.md#wildcards", dis("/a$b"), "x", "/a$b", false},
		{"docs/robots-semantics.md#wildcards", dis("/a$b"), "x", "/ab", true},
		{"docs/robots-semantics.md#wildcards", dis("/a*"), "x", "/a*", false},
		{"docs/robots-semantics.md#wildcards", dis("/price$"), "x", "/price$", true},
		{"docs/robots-semantics.md#wildcards", "User-agent: *\nDisallow: /\nAllow: /a$\n", "x", "/a$", false},
		// docs/robots-semantics.md#wildcards: the query is matched exactly
		// in wire order.
		{"docs/robots-semantics.md#wildcards", dis("/p?b=1&a=2"), "x", "/p?b=1&a=2", false},
		{"docs/robots-semantics.md#wildcards", dis("/p?b=1&a=2"), "x", "/p?a=2&b=1", true},
		{"docs/robots-semantics.md#wildcards", dis("/p?a=2"), "x", "/p?b=1&a=2", true},
		{"docs/robots-semantics.md#wildcards", dis("/p?b=1&a"), "x", "/p?b=1&a=2", false},
		{"docs/robots-semantics.md#wildcards", dis("/*?a=2"), "x", "/p?a=2", false},
		{"docs/robots-semantics.md#wildcards", dis("/p?q=a+b"), "x", "/p?q=a+b", false},
		{"docs/robots-semantics.md#wildcards", dis("/p?q=a+b"), "x", "/p?q=a%20b", true},
		{"docs/robots-semantics.md#wildcards", dis("/p?q=%7E"), "x", "/p?q=~", false},
		{"docs/robots-semantics.md#wildcards", dis("/p?"), "x", "/p?", false},
		{"docs/robots-semantics.md#wildcards", dis("/p?"), "x", "/p", true},
		{"docs/robots-semantics.md#wildcards", dis("/p?u=http://a/b"), "x", "/p?u=http://a/b", false},
		{"docs/robots-semantics.md#wildcards", dis("/p?u=http://a/b"), "x", "/p?u=http%3A%2F%2Fa%2Fb", true},
		// docs/robots-semantics.md#wildcards: the fragment is ignored.
		{"docs/robots-semantics.md#wildcards", dis("/p$"), "x", "/p#frag", false},
		{"docs/robots-semantics.md#wildcards", dis("/p"), "x", "/p#frag", false},
		{"docs/robots-semantics.md#wildcards", dis("/p$"), "x", "/p?#frag", true},
		{"docs/robots-semantics.md#wildcards", dis("/p?x$"), "x", "/p?x#frag", false},
		// docs/robots-semantics.md#wildcards: an empty path is /.
		{"docs/robots-semantics.md#wildcards", dis("/$"), "x", "https://example.com", false},
		{"docs/robots-semantics.md#wildcards", dis("/$"), "x", "https://example.com#top", false},
		{"docs/robots-semantics.md#wildcards", dis("/$"), "x", "", false},
		{"docs/robots-semantics.md", dis("/?"), "x", "https://example.com?q", false},
	})
}

// TestAllowedNormalisationURLStruct covers URLs built as structs rather
// than parsed: Path only, RawPath set, Opaque.
func TestAllowedNormalisationURLStruct(t *testing.T) {
	r := Parse([]byte("User-agent: *\nDisallow: /テ\nDisallow: /a%2Fb\nDisallow: /~u\nDisallow: /s p\n"))
	for _, c := range []struct {
		u    *url.URL
		want bool
	}{
		{&url.URL{Path: "/テ"}, false},
		{&url.URL{Path: "/~u"}, false},
		{&url.URL{Path: "/s p"}, false},
		{&url.URL{Path: "/a/b"}, true},
		{&url.URL{Path: "/a/b", RawPath: "/a%2Fb"}, false},
		{&url.URL{Path: "/a/b", RawPath: "/not-matching"}, true},
		{&url.URL{Scheme: "https", Host: "example.com"}, true},
		{&url.URL{}, true},
	} {
		if got := r.Allowed("x", c.u); got != c.want {
			t.Errorf("docs/robots-semantics.md#normalisation: Allowed(%q, %q) = %v, want %v", "x", c.u.String(), got, c.want)
		}
	}
}

// TestAllowedRelativeURL covers URLs without a host whose path does not
// start with '/': url.Parse reads "example.com/private" as a relative path
// and "example.com:8080/private" as scheme "example.com" with opaque data.
// Google's GetPathParamsQuery (robots.cc in google/robotstxt) takes the
// first component for the host, so the path starts at the first '/' (or
// ';') after it, and is "/" when there is none. Neither may fail open.
func TestAllowedRelativeURL(t *testing.T) {
	const body = "User-agent: *\nDisallow: /private\nDisallow: /$\n"
	for _, c := range []struct {
		url  string
		want bool
	}{
		{"example.com/private", false},
		{"example.com/private?q=1", false},
		{"example.com/private#top", false},
		{"www.example.com/private/x", false},
		{"example.com/public", true},
		{"example.com", false},  // "/"
		{"example.com/", false}, // "/"
		{"example.com?q", true}, // "/?q"
		{"private", false},      // "/": "private" is the host
		{"a/b/private", true},   // "/b/private"
		{"a/private/b", false},  // "/private/b"
		{"//example.com/private", false},
		{"example.com:8080/private", false},
		{"localhost:8080/private?q", false},
		{"example.com:8080", false},           // "/"
		{"mailto:bot@example.com", false},     // "/"
		{"example.com;p/private", true},       // "/;p/private"
		{"example.com/robots.txt", true},      // RFC 9309 §2.2.2
		{"example.com:80/robots.txt?x", true}, // RFC 9309 §2.2.2
		{"https://example.com/private", false},
		{"https://example.com/public", true},
		{"/private", false},
	} {
		r := Parse([]byte(body))
		u := parseTestURL(t, c.url)
		if got := r.Allowed("FooBot", u); got != c.want {
			t.Errorf("Allowed(%q, %q) = %v, want %v", "FooBot", c.url, got, c.want)
		}
		if d := r.Explain("FooBot", u); d.Allowed != c.want {
			t.Errorf("Explain(%q, %q) = %s, want allowed %v", "FooBot", c.url, d, c.want)
		}
		if n := testing.AllocsPerRun(10, func() { r.Allowed("FooBot", u) }); n != 0 {
			t.Errorf("Allowed(%q, %q) allocates %v times, want 0", "FooBot", c.url, n)
		}
	}
}

// TestAllowedOpaqueURLStruct covers URLs built as structs with Opaque set
// or a relative Path: an opaque "//host/path", net/url's form for sending a
// path as written, is read past its authority.
func TestAllowedOpaqueURLStruct(t *testing.T) {
	r := Parse([]byte("User-agent: *\nDisallow: /private\n"))
	for _, c := range []struct {
		u    *url.URL
		want bool
	}{
		{&url.URL{Scheme: "https", Host: "example.com", Opaque: "//example.com/private"}, false},
		{&url.URL{Scheme: "https", Host: "example.com", Opaque: "//example.com/public"}, true},
		{&url.URL{Scheme: "https", Host: "example.com", Opaque: "//example.com"}, true},
		{&url.URL{Scheme: "https", Host: "example.com", Opaque: "/private"}, false},
		{&url.URL{Scheme: "https", Opaque: "/private", RawQuery: "q"}, false},
		{&url.URL{Scheme: "example.com", Opaque: "8080/private"}, false},
		{&url.URL{Path: "example.com/private"}, false},
		{&url.URL{Path: "example.com/private", RawQuery: "q"}, false},
		{&url.URL{Path: "example.com/pri vate"}, true},
		{&url.URL{Path: "private"}, true}, // "/"
		// net/url puts a '/' between a host and a relative path.
		{&url.URL{Scheme: "https", Host: "example.com", Path: "private"}, false},
	} {
		if got := r.Allowed("x", c.u); got != c.want {
			t.Errorf("Allowed(%q, %q) = %v, want %v", "x", c.u.String(), got, c.want)
		}
		if d := r.Explain("x", c.u); d.Allowed != c.want {
			t.Errorf("Explain(%q, %q) = %s, want allowed %v", "x", c.u.String(), d, c.want)
		}
	}
}

// RFC 9309 2.2.2: /robots.txt is always allowed.
func TestAllowedRobotsTxtExempt(t *testing.T) {
	for _, body := range []string{
		"User-agent: *\nDisallow: /\n",
		"User-agent: *\nDisallow: /robots.txt\n",
		"User-agent: *\nDisallow: /robots.txt$\n",
		"User-agent: *\nDisallow: /*.txt\n",
		"User-agent: FooBot\nDisallow: /\n",
	} {
		r := Parse([]byte(body))
		for _, agent := range []string{"FooBot", "foobot", "other", ""} {
			for _, s := range []string{"/robots.txt", "https://example.com/robots.txt", "/robots.txt?x=1", "/robots.txt#f", "/%72obots.txt"} {
				if !r.Allowed(agent, parseTestURL(t, s)) {
					t.Errorf("RFC 9309 2.2.2: Allowed(%q, %q) = false, want true\nrobots.txt:\n%s", agent, s, body)
				}
			}
		}
	}
	// Only the exact path is exempt.
	r := Parse([]byte("User-agent: *\nDisallow: /\n"))
	for _, s := range []string{"/robots.txt/x", "/robots.txtx", "/robots", "/a/robots.txt"} {
		if r.Allowed("x", parseTestURL(t, s)) {
			t.Errorf("RFC 9309 2.2.2: Allowed(%q, %q) = true, want false", "x", s)
		}
	}
	if !disallowAll().Allowed("x", parseTestURL(t, "/robots.txt")) {
		t.Errorf("disallowAll().Allowed(%q, %q) = false, want true", "x", "/robots.txt")
	}
}

// docs/robots-semantics.md#rule-paths: a rule path that starts with neither
// / nor * never matches.
func TestAllowedRuleWithoutSlash(t *testing.T) {
	runAllowed(t, []allowedCase{
		{"docs/robots-semantics.md#rule-paths", "User-agent: *\nDisallow: fish/\n", "x", "/fish/", true},
		{"docs/robots-semantics.md#rule-paths", "User-agent: *\nDisallow: fish/\n", "x", "/fish/a", true},
		{"docs/robots-semantics.md#rule-paths", "User-agent: *\nDisallow: fish\n", "x", "fish", true},
		{"docs/robots-semantics.md#rule-paths", "User-agent: *\nDisallow: ?q\n", "x", "/?q", true},
		{"docs/robots-semantics.md#rule-paths", "User-agent: *\nDisallow: %2Fa\n", "x", "/a", true},
		{"docs/robots-semantics.md#rule-paths", "User-agent: *\nDisallow: /\nAllow: fish\n", "x", "/fish", false},
		{"docs/robots-semantics.md#rule-paths", "User-agent: *\nDisallow: *fish\n", "x", "/fish", false},
		{"docs/robots-semantics.md#rule-paths", "User-agent: *\nDisallow: *\n", "x", "/anything", false},
	})
}

// Google-specific: "Allow: /a/index.html" also allows "/a/".
func TestAllowedIndexHTML(t *testing.T) {
	const body = "User-agent: *\nAllow: /a/index.html\nAllow: /b/index.htm?x\nAllow: /c/index.php\nDisallow: /\n"
	runAllowed(t, []allowedCase{
		{"google/robotstxt", body, "x", "/a/", true},
		{"google/robotstxt", body, "x", "/a/index.html", true},
		{"google/robotstxt", body, "x", "/a/index.htm", false},
		{"google/robotstxt", body, "x", "/a/x", false},
		{"google/robotstxt", body, "x", "/a/?q", false},
		{"google/robotstxt", body, "x", "/b/", true},
		{"google/robotstxt", body, "x", "/c/", false},
		{"google/robotstxt", "User-agent: *\nDisallow: /a/index.html\n", "x", "/a/", true},
	})
}

// Google-specific: the rule "<dir>/$" that "Allow: <dir>/index.htm…"
// implies has the priority of that pattern as written (robots.cc
// HandleAllow passes the new pattern to itself, whose priority is its
// length): a '$' in <dir> counts one octet, not the three of the "%24"
// it is matched as.
func TestAllowedIndexHTMLPriority(t *testing.T) {
	rules := func(lines ...string) string {
		return "User-agent: *\n" + strings.Join(lines, "\n") + "\n"
	}
	runAllowed(t, []allowedCase{
		// "/$/$" (4) loses to "/$/*$" (5).
		{"google/robotstxt", rules("Allow: /$/index.html", "Disallow: /$/*$"), "x", "/$/", false},
		{"google/robotstxt", rules("Disallow: /$/*$", "Allow: /$/index.html"), "x", "/%24/", false},
		{"google/robotstxt", rules("Allow: /$/index.html", "Disallow: /$/*$"), "x", "/$/index.html", true},
		{"google/robotstxt", rules("Allow: /$$/index.htm", "Disallow: /$$/*$"), "x", "/$$/", false},
		// "/$/$" (4) ties "/*/$" (4) and "/$/$": allow wins.
		{"google/robotstxt", rules("Allow: /$/index.html", "Disallow: /*/$"), "x", "/$/", true},
		{"google/robotstxt", rules("Allow: /$/index.html", "Disallow: /$/$"), "x", "/$/", true},
		// "/$/$" (4) beats "/$/" (3).
		{"google/robotstxt", rules("Allow: /$/index.html", "Disallow: /$/"), "x", "/$/", true},
		// An octet escaped by normalising counts three, as for every rule:
		// "/%E3%83%84/$" (12) ties "*%E3%83%84/$" (12) and loses to
		// "*%E3%83%84/*$" (13).
		{"google/robotstxt", rules("Allow: /ツ/index.html", "Disallow: *ツ/$"), "x", "/ツ/", true},
		{"google/robotstxt", rules("Allow: /ツ/index.html", "Disallow: *ツ/*$"), "x", "/ツ/", false},
	})
}

func TestNilAndZeroRobots(t *testing.T) {
	u := parseTestURL(t, "https://example.com/private")
	for name, r := range map[string]*Robots{"nil": nil, "zero": {}, "Parse(nil)": Parse(nil), "Parse(empty)": Parse([]byte{})} {
		if !r.Allowed("FooBot", u) {
			t.Errorf("%s: Allowed(%q, %q) = false, want true", name, "FooBot", u)
		}
		d := r.Explain("FooBot", u)
		if !d.Allowed || d.Group != GroupNone || d.Rule != nil || d.Exempt || d.Agent != "" {
			t.Errorf("%s: Explain(%q, %q) = %+v, want allowed with no group", name, "FooBot", u, d)
		}
		if d, ok := r.CrawlDelay("FooBot"); ok || d != 0 {
			t.Errorf("%s: CrawlDelay(%q) = %v, %v, want 0, false", name, "FooBot", d, ok)
		}
		if s := r.Sitemaps(); len(s) != 0 {
			t.Errorf("%s: Sitemaps() = %q, want none", name, s)
		}
		if c := r.CleanParams(); len(c) != 0 {
			t.Errorf("%s: CleanParams() = %v, want none", name, c)
		}
	}
}

func TestDisallowAll(t *testing.T) {
	r := disallowAll()
	for _, s := range []string{"/", "/a", "/robots.txt/x", "https://example.com"} {
		if r.Allowed("FooBot", parseTestURL(t, s)) {
			t.Errorf("disallowAll().Allowed(%q, %q) = true, want false", "FooBot", s)
		}
	}
}

func TestCrawlDelay(t *testing.T) {
	for _, c := range []struct {
		sec    string
		robots string
		agent  string
		want   time.Duration
		wantOK bool
	}{
		{"Yandex analyser", "User-agent: *\nCrawl-delay: 10\n", "x", 10 * time.Second, true},
		// Decimals.
		{"Yandex analyser", "User-agent: *\nCrawl-delay: 0.5\n", "x", 500 * time.Millisecond, true},
		{"Yandex analyser", "User-agent: *\nCrawl-delay: 2.25 # comment\n", "x", 2250 * time.Millisecond, true},
		{"Yandex analyser", "User-agent: *\ncrawl-delay:0\n", "x", 0, true},
		{"Yandex analyser", "User-agent: *\nCRAWL-DELAY: 3\n", "x", 3 * time.Second, true},
		// Invalid values are ignored.
		{"Yandex analyser", "User-agent: *\nCrawl-delay: abc\n", "x", 0, false},
		{"Yandex analyser", "User-agent: *\nCrawl-delay: -1\n", "x", 0, false},
		{"Yandex analyser", "User-agent: *\nCrawl-delay:\n", "x", 0, false},
		{"Yandex analyser", "User-agent: *\nCrawl-delay: 1,5\n", "x", 0, false},
		{"Yandex analyser", "User-agent: *\nCrawl-delay: NaN\n", "x", 0, false},
		{"Yandex analyser", "User-agent: *\nCrawl-delay: Inf\n", "x", 0, false},
		{"Yandex analyser", "User-agent: *\nCrawl-delay: abc\nCrawl-delay: 4\n", "x", 4 * time.Second, true},
		// From the chosen group.
		{"Google: user-agent precedence", "User-agent: *\nCrawl-delay: 10\n\nUser-agent: FooBot\nCrawl-delay: 1\n", "foobot", time.Second, true},
		{"Google: user-agent precedence", "User-agent: *\nCrawl-delay: 10\n\nUser-agent: FooBot\nCrawl-delay: 1\n", "BarBot", 10 * time.Second, true},
		{"Google: user-agent precedence", "User-agent: *\nCrawl-delay: 10\n\nUser-agent: FooBot\nDisallow: /x\n", "FooBot", 0, false},
		{"Google: user-agent precedence", "User-agent: FooBot\nCrawl-delay: 1\n", "BarBot", 0, false},
		{"Google: user-agent precedence", "User-agent: FooBot\nDisallow: /x\nCrawl-delay: 7\n", "FooBot", 7 * time.Second, true},
		// Before any user-agent line: belongs to no group.
		{"Google: grouping", "Crawl-delay: 5\nUser-agent: *\nDisallow: /x\n", "x", 0, false},
		// Merged groups: the largest value wins.
		{"Google: grouping", "User-agent: a\nCrawl-delay: 2\nDisallow: /x\nUser-agent: b\nDisallow: /\nUser-agent: a\nCrawl-delay: 5\n", "a", 5 * time.Second, true},
		{"Google: grouping", "User-agent: a\nCrawl-delay: 5\nDisallow: /x\nUser-agent: a\nCrawl-delay: 2\n", "a", 5 * time.Second, true},
		{"Google: grouping", "User-agent: a\nCrawl-delay: 2\nDisallow: /x\nUser-agent: b\nDisallow: /\nUser-agent: a\nCrawl-delay: 5\n", "b", 0, false},
		// A record naming two agents gives both the delay.
		{"Google: grouping", "User-agent: a\nUser-agent: b\nCrawl-delay: 3\n", "b", 3 * time.Second, true},
		{"Google: grouping", "User-agent: a\nUser-agent: b\nCrawl-delay: 3\n", "a", 3 * time.Second, true},
		// Huge values are clamped, not overflowed.
		{"Yandex analyser", "User-agent: *\nCrawl-delay: 1e300\n", "x", time.Duration(1<<63 - 1), true},
	} {
		r := Parse([]byte(c.robots))
		got, ok := r.CrawlDelay(c.agent)
		if got != c.want || ok != c.wantOK {
			t.Errorf("%s: CrawlDelay(%q) = %v, %v, want %v, %v\nrobots.txt:\n%s", c.sec, c.agent, got, ok, c.want, c.wantOK, c.robots)
		}
	}
}

// RFC 9309 2.2.4: sitemap lines.
func TestSitemaps(t *testing.T) {
	const body = "Sitemap: https://example.com/first.xml\n" +
		"User-agent: a\n" +
		"sitemap: https://ja.example.org/テスト-サイトマップ.xml\n" +
		"User-agent: b\n" +
		"Disallow: /\n" +
		"SITEMAP:http://other.example.net/s.xml.gz # comment\n" +
		"Sitemap:\n" +
		"Sitemaps: https://example.com/typo-prefix.xml\n" +
		"site-map: https://example.com/typo.xml\n" +
		"Sitemap: relative/not-checked.xml\n"
	r := Parse([]byte(body))
	want := []string{
		"https://example.com/first.xml",
		"https://ja.example.org/テスト-サイトマップ.xml",
		"http://other.example.net/s.xml.gz",
		"https://example.com/typo-prefix.xml",
		"https://example.com/typo.xml",
		"relative/not-checked.xml",
	}
	if got := r.Sitemaps(); !slices.Equal(got, want) {
		t.Errorf("RFC 9309 2.2.4: Sitemaps() = %q, want %q", got, want)
	}
	// Google, grouping: the sitemap line did not close a's group.
	if r.Allowed("a", parseTestURL(t, "/x")) {
		t.Errorf("Google: grouping: Allowed(%q, %q) = true, want false", "a", "/x")
	}
}

func TestCleanParams(t *testing.T) {
	const body = "User-agent: Yandex\n" +
		"Disallow: /private\n" +
		"Clean-param: ref /some_dir/get_book.pl\n" + // line 3
		"Clean-param: sid&sort /forum/*.php\n" + // line 4
		"Clean-param: utm_source&utm_medium&utm_campaign\n" + // line 5
		"Clean-param:\n" + // line 6: no parameters, left out
		"Clean-param: a&&b /x\n" + // line 7: the empty name is skipped
		"clean-param: s /a /b\n" + // line 8: three fields, left out
		"CLEAN-PARAM: abc # comment\n" // line 9
	r := Parse([]byte(body))
	want := []CleanParam{
		{Params: []string{"ref"}, Path: "/some_dir/get_book.pl", Line: 3},
		{Params: []string{"sid", "sort"}, Path: "/forum/*.php", Line: 4},
		{Params: []string{"utm_source", "utm_medium", "utm_campaign"}, Line: 5},
		{Params: []string{"a", "b"}, Path: "/x", Line: 7},
		{Params: []string{"abc"}, Line: 9},
	}
	got := r.CleanParams()
	if !slices.EqualFunc(got, want, func(a, b CleanParam) bool {
		return slices.Equal(a.Params, b.Params) && a.Path == b.Path && a.Line == b.Line
	}) {
		t.Errorf("Yandex analyser: CleanParams() = %+v, want %+v", got, want)
	}
	// Clean-param does not change matching.
	if r.Allowed("Yandex", parseTestURL(t, "/some_dir/get_book.pl?ref=x")) != true {
		t.Errorf("Google: syntax: Allowed(%q, %q) = false, want true", "Yandex", "/some_dir/get_book.pl?ref=x")
	}
}

func TestExplain(t *testing.T) {
	const body = "User-agent: *\n" + // 1
		"Disallow: /private\n" + // 2
		"\n" + // 3
		"User-agent: FooBot\n" + // 4
		"Allow: /private/ok\n" + // 5
		"Disallow: /\n" + // 6
		"Allow: /テ\n" + // 7
		"Allow: /dir/index.html\n" + // 8
		"# comment\n" + // 9
		"User-agent: BarBot\n" + // 10
		"Disallow: /nothing-here\n" // 11
	r := Parse([]byte(body))
	for _, c := range []struct {
		agent, url string
		want       Decision
	}{
		{"FooBot", "/private/ok/x", Decision{Allowed: true, Group: GroupSpecific, Agent: "FooBot", Rule: &Rule{Allow: true, Pattern: "/private/ok", Line: 5}}},
		{"foobot", "/x", Decision{Allowed: false, Group: GroupSpecific, Agent: "FooBot", Rule: &Rule{Allow: false, Pattern: "/", Line: 6}}},
		// The pattern is reported as written, not normalised.
		{"FooBot", "/%E3%83%86/a", Decision{Allowed: true, Group: GroupSpecific, Agent: "FooBot", Rule: &Rule{Allow: true, Pattern: "/テ", Line: 7}}},
		// Google-specific index.html rule: the line that implied it.
		{"FooBot", "/dir/", Decision{Allowed: true, Group: GroupSpecific, Agent: "FooBot", Rule: &Rule{Allow: true, Pattern: "/dir/index.html", Line: 8}}},
		{"other", "/private/a", Decision{Allowed: false, Group: GroupGlobal, Agent: "*", Rule: &Rule{Allow: false, Pattern: "/private", Line: 2}}},
		// As Google's GetPathParamsQuery (robots.cc): without a scheme, the first
		// component is the host.
		{"other", "example.com/private/a", Decision{Allowed: false, Group: GroupGlobal, Agent: "*", Rule: &Rule{Allow: false, Pattern: "/private", Line: 2}}},
		// No rule matched.
		{"other", "/public", Decision{Allowed: true, Group: GroupGlobal, Agent: "*"}},
		{"BARBOT", "/private", Decision{Allowed: true, Group: GroupSpecific, Agent: "BarBot"}},
		// /robots.txt is exempt.
		{"FooBot", "/robots.txt", Decision{Allowed: true, Group: GroupSpecific, Agent: "FooBot", Exempt: true}},
		{"other", "https://example.com/robots.txt", Decision{Allowed: true, Group: GroupGlobal, Agent: "*", Exempt: true}},
	} {
		u := parseTestURL(t, c.url)
		got := r.Explain(c.agent, u)
		if !decisionEqual(got, c.want) {
			t.Errorf("Explain(%q, %q) = %s, want %s", c.agent, c.url, fmtDecision(got), fmtDecision(c.want))
		}
		if a := r.Allowed(c.agent, u); a != got.Allowed {
			t.Errorf("Allowed(%q, %q) = %v, but Explain says %v", c.agent, c.url, a, got.Allowed)
		}
	}

	// No group at all.
	r = Parse([]byte("User-agent: FooBot\nDisallow: /\n"))
	got := r.Explain("BarBot", parseTestURL(t, "/x"))
	if want := (Decision{Allowed: true, Group: GroupNone}); !decisionEqual(got, want) {
		t.Errorf("Explain(%q, %q) = %s, want %s", "BarBot", "/x", fmtDecision(got), fmtDecision(want))
	}
	got = r.Explain("BarBot", parseTestURL(t, "/robots.txt"))
	if want := (Decision{Allowed: true, Group: GroupNone, Exempt: true}); !decisionEqual(got, want) {
		t.Errorf("Explain(%q, %q) = %s, want %s", "BarBot", "/robots.txt", fmtDecision(got), fmtDecision(want))
	}
}

func decisionEqual(a, b Decision) bool {
	if a.Allowed != b.Allowed || a.Group != b.Group || a.Agent != b.Agent || a.Exempt != b.Exempt {
		return false
	}
	if a.Rule == nil || b.Rule == nil {
		return a.Rule == nil && b.Rule == nil
	}
	return *a.Rule == *b.Rule
}

func fmtDecision(d Decision) string {
	rule := "<nil>"
	if d.Rule != nil {
		rule = fmt.Sprintf("%+v", *d.Rule)
	}
	return fmt.Sprintf("{Allowed:%v Group:%v Agent:%q Rule:%s Exempt:%v}", d.Allowed, d.Group, d.Agent, rule, d.Exempt)
}

func TestDecisionString(t *testing.T) {
	for _, c := range []struct {
		d    Decision
		want string
	}{
		{Decision{Allowed: true, Exempt: true}, "allowed: /robots.txt is always allowed"},
		{Decision{Allowed: true}, "allowed: no group applies"},
		{Decision{Allowed: true, Group: GroupGlobal, Agent: "*"}, `allowed: no rule matched in group "*"`},
		{Decision{Allowed: false, Group: GroupSpecific, Agent: "FooBot", Rule: &Rule{Pattern: "/x", Line: 3}}, `disallowed by line 3: disallow: /x (group "FooBot")`},
		{Decision{Allowed: true, Group: GroupGlobal, Agent: "*", Rule: &Rule{Allow: true, Pattern: `/a b/é"\`, Line: 2}}, `allowed by line 2: allow: /a b/é"\ (group "*")`},
		// What a terminal would act on is escaped: a site cannot colour,
		// retitle or reorder the output of a crawler that prints why.
		{Decision{Group: GroupGlobal, Agent: "*", Rule: &Rule{Pattern: "/x\x1b[31mEVIL\x1b]0;PWNED\x07\u202e\xff\\\"", Line: 4}},
			`disallowed by line 4: disallow: /x\x1b[31mEVIL\x1b]0;PWNED\a\u202e\xff\\" (group "*")`},
		{Decision{Group: GroupGlobal, Agent: "*", Rule: &Rule{Pattern: "/" + strings.Repeat("é", 300), Line: 5}},
			`disallowed by line 5: disallow: /` + strings.Repeat("é", 127) + `… (group "*")`},
		// Bytes that are not UTF-8 are cut where they are, not walked back over.
		{Decision{Group: GroupGlobal, Agent: "*", Rule: &Rule{Pattern: "/s/" + strings.Repeat("\x80", 300), Line: 6}},
			`disallowed by line 6: disallow: /s/` + strings.Repeat(`\x80`, 250) + `… (group "*")`},
	} {
		if got := c.d.String(); got != c.want {
			t.Errorf("Decision.String() = %q, want %q", got, c.want)
		}
	}
	for k, want := range map[GroupKind]string{GroupNone: "none", GroupSpecific: "specific", GroupGlobal: "global"} {
		if got := k.String(); got != want {
			t.Errorf("GroupKind(%d).String() = %q, want %q", k, got, want)
		}
	}
}

// worstCaseRobots returns a robots.txt of 300 Disallow rules, each with 41
// '*' (a worst case for matchers such as Google's robots.cc, whose cost per
// rule grows with the pattern's length times the path's), and a 2 KB path
// none of them matches.
func worstCaseRobots() (body, path string) {
	var b strings.Builder
	b.WriteString("User-agent: *\n")
	for i := range 300 {
		b.WriteString("Disallow: /")
		b.WriteString(strings.Repeat("*a", 40))
		b.WriteString("*z")
		b.WriteString(strconv.Itoa(i))
		b.WriteString("\n")
	}
	return b.String(), "/" + strings.Repeat("a", 2047)
}

// TestWorstCase checks that the pathological file decides correctly; its
// cost is measured by BenchmarkWorstCase.
func TestWorstCase(t *testing.T) {
	body, path := worstCaseRobots()
	r := Parse([]byte(body))
	if !r.Allowed("x", parseTestURL(t, path)) {
		t.Errorf("Allowed(%q, %.20q…) = false, want true", "x", path)
	}
	hit := path[:2040] + "z7"
	d := r.Explain("x", parseTestURL(t, hit))
	if d.Allowed || d.Rule == nil || d.Rule.Line != 7+2 {
		t.Errorf("Explain(%q, %.20q…) = %s, want disallowed by line 9", "x", hit, fmtDecision(d))
	}
	// Fewer 'a's than the pattern needs: no match.
	short := "/" + strings.Repeat("a", 39) + "z7"
	if !r.Allowed("x", parseTestURL(t, short)) {
		t.Errorf("Allowed(%q, %q) = false, want true", "x", short)
	}
}

// A Robots is safe for concurrent use (its doc comment), including the very
// first calls, which may compile a group's rules.
func TestConcurrentFirstUse(t *testing.T) {
	body, _ := goldenSections(t, "testdata/corpus-theguardian.com.txtar")
	agents := []string{"Googlebot", "bingbot", "Mediapartners-Google", "other"}
	paths := []string{"/", "/search", "/world/2020/print", "/a/b.emailjson", "/discussion/x", "/robots.txt"}
	ref := Parse(body)
	want := map[string]bool{}
	for _, a := range agents {
		for _, p := range paths {
			want[a+" "+p] = ref.Allowed(a, parseTestURL(t, p))
		}
	}
	for range 20 {
		r := Parse(body)
		start := make(chan struct{})
		const workers = 8
		errs := make(chan string, 2*workers*len(agents)*len(paths))
		done := make(chan struct{})
		for w := range workers {
			go func() {
				defer func() { done <- struct{}{} }()
				<-start
				for i := range agents {
					a := agents[(i+w)%len(agents)]
					for _, p := range paths {
						u := &url.URL{Path: p}
						got := r.Allowed(a, u)
						if d := r.Explain(a, u); d.Allowed != got {
							errs <- fmt.Sprintf("Allowed(%q, %q) = %v, but Explain says %s", a, p, got, d)
						}
						if got != want[a+" "+p] {
							errs <- fmt.Sprintf("Allowed(%q, %q) = %v, want %v", a, p, got, want[a+" "+p])
						}
						r.CrawlDelay(a)
					}
				}
			}()
		}
		close(start)
		for range workers {
			<-done
		}
		close(errs)
		for e := range errs {
			t.Error(e)
		}
	}
}

// The group of a browser-compatible bot User-Agent is its bot's; a
// browser's User-Agent gets only the '*' group.
func TestAllowedBrowserCompatibleAgent(t *testing.T) {
	r := Parse([]byte("User-agent: MyBot\nDisallow: /mybot-only\n\nUser-agent: Mozilla\nDisallow: /mozilla\n\nUser-agent: *\nDisallow: /all\n"))
	for _, c := range []struct {
		ua, path string
		want     bool
	}{
		{"Mozilla/5.0 (compatible; MyBot/1.0; +https://example.org/bot)", "/mybot-only", false},
		{"Mozilla/5.0 (compatible; MyBot/1.0; +https://example.org/bot)", "/all", true},
		{"Mozilla/5.0 (compatible; MyBot/1.0; +https://example.org/bot)", "/mozilla", true},
		{"Mozilla/5.0 (X11; Linux x86_64; rv:109.0) Gecko/20100101 Firefox/115.0", "/all", false},
		{"Mozilla/5.0 (X11; Linux x86_64; rv:109.0) Gecko/20100101 Firefox/115.0", "/mozilla", true},
	} {
		u, _ := url.Parse("https://example.com" + c.path)
		if got := r.Allowed(ProductToken(c.ua), u); got != c.want {
			t.Errorf("Allowed(ProductToken(%q), %s) = %v, want %v", c.ua, c.path, got, c.want)
		}
	}
}
