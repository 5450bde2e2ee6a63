package policy

import "strings"

// ProductToken returns the product token of a User-Agent header value: the
// leading run of letters, '_' and '-' after any leading white space.
// "ExampleBot/1.0 (+https://example.org/bot)" yields "ExampleBot".
//
// RFC 9309 §2.2.1: crawlers match User-agent lines against their product
// token, never against the full header. [Robots.Allowed] compares the agent
// it is given whole, so callers holding a header value call ProductToken
// first.
func ProductToken(userAgent string) string {
	return tokenPrefix(strings.TrimLeft(userAgent, " \t"))
}

// tokenPrefix returns the longest prefix of s made of [A-Za-z_-].
//
// ROBOTS.md §12: a User-agent value in the file is cut to this prefix, so
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
