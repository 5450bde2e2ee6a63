package sitemap

import "strings"

// matchPattern reports whether target (a URL's path and query) matches
// pattern, written as a robots.txt path pattern (RFC 9309 §2.2.3): a
// prefix, where '*' stands for any run of characters and a final '$'
// anchors the end. No regular expressions: the match is a greedy scan
// with one backtrack point, at most len(pattern)·len(target) steps.
func matchPattern(pattern, target string) bool {
	anchored := strings.HasSuffix(pattern, "$")
	if anchored {
		pattern = pattern[:len(pattern)-1]
	}
	p, t := 0, 0
	star, mark := -1, 0
	for t < len(target) {
		switch {
		case p < len(pattern) && pattern[p] == '*':
			star, mark = p, t
			p++
		case p < len(pattern) && pattern[p] == target[t]:
			p++
			t++
		case p == len(pattern) && !anchored:
			return true // a prefix matched
		case star >= 0:
			p = star + 1
			mark++
			t = mark
		default:
			return false
		}
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}

// matchAny reports whether target matches one of patterns.
func matchAny(patterns []string, target string) bool {
	for _, p := range patterns {
		if matchPattern(p, target) {
			return true
		}
	}
	return false
}
