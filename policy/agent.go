package policy

import "strings"

// ProductToken returns the product token robots.txt is matched for, given
// a crawler's User-Agent header value.
//
// For a plain header it is the leading run of letters, '_' and '-' after
// any leading white space: "ExampleBot/1.0 (+https://example.org/bot)"
// yields "ExampleBot".
//
// A header in the browser-compatible form that Googlebot, Bingbot and most
// real bots send starts with "Mozilla/" (or "Opera/"), which names no
// crawler. Its product token is the first product written as
// name/version, in a comment ("Mozilla/5.0 (compatible; MyBot/1.0;
// +https://example.org/bot)" yields "MyBot") or after one ("Mozilla/5.0
// AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120 Safari/537.36
// MyBot/2"), that is not a browser's, engine's or platform's (AppleWebKit,
// Chrome, Safari, Gecko, Trident, ...). A browser's User-Agent with no
// such product yields "": it matches no named group, only User-agent: *.
// The design decision: silently matching "Mozilla" groups would be wrong,
// and guessing a name from a browser string would be too.
//
// RFC 9309 §2.2.1: crawlers match User-agent lines against their product
// token, never against the full header. [Robots.Allowed] compares the agent
// it is given whole, so callers holding a header value call ProductToken
// first.
func ProductToken(userAgent string) string {
	ua := strings.TrimLeft(userAgent, " \t")
	tok := tokenPrefix(ua)
	if !browserBase(tok) || !strings.HasPrefix(ua[len(tok):], "/") {
		return tok
	}
	return botProduct(ua[len(tok):])
}

// browserBase reports whether tok is the leading product of a
// browser-compatible User-Agent.
func browserBase(tok string) bool {
	return strings.EqualFold(tok, "Mozilla") || strings.EqualFold(tok, "Opera")
}

// botProduct returns the first name/version product of s, a User-Agent
// after its leading product, that names no browser, engine or platform; ""
// if there is none. Products are separated by white space, ';', ',' and
// parentheses; items such as "+https://..." or "Windows NT 10.0" are not
// products.
func botProduct(s string) string {
	for len(s) > 0 {
		i := strings.IndexAny(s, " \t;,()")
		item := s
		if i >= 0 {
			item, s = s[:i], s[i+1:]
		} else {
			s = ""
		}
		name := tokenPrefix(item)
		if name == "" || len(name) == len(item) || item[len(name)] != '/' || browserProduct(name) {
			continue
		}
		return name
	}
	return ""
}

// browserProducts are the product names of browsers, engines and
// platforms found in browser-compatible User-Agents, lower case.
var browserProducts = [...]string{
	"mozilla", "opera", "applewebkit", "khtml", "gecko", "chrome", "chromium",
	"safari", "version", "mobile", "firefox", "edg", "edge", "edga", "edgios",
	"opr", "trident", "msie", "crios", "fxios", "samsungbrowser", "yabrowser",
	"ucbrowser", "presto", "headlesschrome", "electron", "android", "linux",
	"windows", "macintosh", "iphone", "ipad", "cpu", "like", "compatible",
	"wv", "u", "rv", "x", "build",
}

// browserProduct reports whether name is one of browserProducts.
func browserProduct(name string) bool {
	for _, b := range browserProducts {
		if strings.EqualFold(name, b) {
			return true
		}
	}
	return false
}

// tokenPrefix returns the longest prefix of s made of [A-Za-z_-].
//
// docs/robots-semantics.md#product-tokens: a User-agent value in the file is cut to this prefix, so
// "googlebot/1.2" names "googlebot" and "Foo Bar" names "Foo".
func tokenPrefix[S string | []byte](s S) S {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '_' || c == '-') {
			return s[:i]
		}
	}
	return s
}

// isGlobalAgent reports whether a User-agent value names every crawler:
// "*", optionally followed by white space and anything (Google-specific).
func isGlobalAgent(value []byte) bool {
	return len(value) > 0 && value[0] == '*' && (len(value) == 1 || isSpace(value[1]))
}

// appendLower appends the ASCII lower case of s to dst.
func appendLower(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		dst = append(dst, lower(s[i]))
	}
	return dst
}
