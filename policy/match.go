package policy

import (
	"net/url"
	"strings"
	"unsafe"
)

// mustEscape reports whether octet c may not stand unescaped in a URI and is
// therefore percent-encoded before matching (RFC 9309 §2.2.2, RFC 3986 §2):
// controls, space, DEL, every non-ASCII byte and "<>\^`{|}.
func mustEscape(c byte) bool { return c != '%' && patternOctets[c]&notPlain != 0 }

// An octetTable describes every octet for summarize, normal and
// appendNormal: its octetBit, and notPlain when normalising does not leave
// it as it is: it is percent-encoded, or it is '%', which starts an escape.
type octetTable [256]uint64

// notPlain is the bit of an octetTable entry for an octet that normalising
// changes or reads further.
const notPlain = 1 << 63

// patternOctets describes the octets of rule patterns, targetOctets those
// of URLs. They differ in '*' and '$': RFC 9309 §2.2.3 has crawlers that
// match these characters verbatim in a URI compare them percent-encoded, so
// the pattern "/foo-%24" matches the URI "/foo-$", while in a pattern they
// are wildcards. The tables are read-only, filled once at package
// initialisation.
var patternOctets, targetOctets, pathOctets = octetTables()

// pathOctets has notPlain clear for exactly the octets that a decoded URL
// path may hold and that both url.URL.EscapedPath and appendNormal (with
// targetOctets) leave as they are; a path made of them is its own target.
func octetTables() (pattern, target, path octetTable) {
	for c := range pattern {
		pattern[c] = 1 << octetBit(byte(c))
		if c <= ' ' || c >= 0x7F || strings.IndexByte("\"<>\\^`{|}%", byte(c)) >= 0 {
			pattern[c] |= notPlain
		}
	}
	target = pattern
	target['*'] |= notPlain
	target['$'] |= notPlain
	path = target
	for _, c := range "!'()#?[]" { // escaped by EscapedPath
		path[c] |= notPlain
	}
	return pattern, target, path
}

// isUnreserved reports whether c is an RFC 3986 §2.3 unreserved character,
// whose percent-encoded form is equivalent to the character itself.
func isUnreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '-' || c == '.' || c == '_' || c == '~'
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

const upperHex = "0123456789ABCDEF"

// summarize returns the OR of the entries of t for the octets of s: their
// octetSet, with notPlain set when s is not in the form appendNormal
// produces. It reads eight octets between two tests, and the last eight
// (or four) again rather than one by one, as OR does not mind.
func summarize(s string, t *octetTable) uint64 {
	n := len(s)
	switch {
	case n >= 8:
		var a, b uint64
		for i := 0; i < n-8; i += 8 {
			a |= t[s[i]] | t[s[i+1]] | t[s[i+2]] | t[s[i+3]]
			b |= t[s[i+4]] | t[s[i+5]] | t[s[i+6]] | t[s[i+7]]
		}
		e := s[n-8:]
		return a | b | t[e[0]] | t[e[1]] | t[e[2]] | t[e[3]] | t[e[4]] | t[e[5]] | t[e[6]] | t[e[7]]
	case n >= 4:
		e := s[n-4:]
		return t[s[0]] | t[s[1]] | t[s[2]] | t[s[3]] | t[e[0]] | t[e[1]] | t[e[2]] | t[e[3]]
	case n > 0:
		return t[s[0]] | t[s[n/2]] | t[s[n-1]]
	}
	return 0
}

// normal reports whether s is already in the form appendNormal produces.
func normal(s string, t *octetTable) bool { return summarize(s, t)&notPlain == 0 }

// appendNormal appends s to dst in the one form both sides of a match are
// brought to (docs/robots-semantics.md#normalisation, RFC 9309 §2.2.2): octets that may not stand in a
// URI are percent-encoded, escape hex is upper-cased, and escapes of
// unreserved characters are decoded. Escapes of reserved characters stay
// escaped, so "/a%2Fb" and "/a/b" remain different. A '%' that does not
// start a valid escape is itself encoded as "%25".
//
// t says which octets are encoded: patternOctets keeps '*' and '$' for the
// matcher, targetOctets encodes them.
func appendNormal(dst []byte, s string, t *octetTable) []byte {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '%':
			hi, ok1 := byte(0), false
			lo, ok2 := byte(0), false
			if i+2 < len(s) {
				hi, ok1 = unhex(s[i+1])
				lo, ok2 = unhex(s[i+2])
			}
			if !ok1 || !ok2 {
				dst = append(dst, "%25"...)
				continue
			}
			if v := hi<<4 | lo; isUnreserved(v) {
				dst = append(dst, v)
			} else {
				dst = append(dst, '%', upperHex[hi], upperHex[lo])
			}
			i += 2
		case t[c]&notPlain != 0: // not '%'
			dst = append(dst, '%', upperHex[c>>4], upperHex[c&15])
		default:
			dst = append(dst, c)
		}
	}
	return dst
}

// targetOf returns the part of u that rules are matched against, and the
// summary of its octets: the escaped path (or "/" when empty), then '?'
// and the raw query when u has one, both normalised by appendNormal, '*'
// and '$' encoded. The fragment is ignored and the query keeps its wire
// order (docs/robots-semantics.md#wildcards).
//
// A path that does not start with '/' gets one in front when u has a host
// (net/url writes a '/' between them). Opaque data ("example.com:8080/a",
// "mailto:x") and the path of a relative reference without a host
// ("example.com/a") are read as Google reads them, with their first
// component for the host (see pathOf).
//
// In the common case, a path that needs no escaping and no query, the
// target is u.Path itself; otherwise it is built in dst's spare capacity
// (or a larger allocation), so it must not be kept past dst's reuse.
func targetOf(dst []byte, u *url.URL) (string, octetSet) {
	if t, set, ok := plainTarget(u); ok {
		return t, set
	}
	return builtTarget(dst, u)
}

// builtTarget is targetOf for a URL that plainTarget turned down: the
// target is built in dst.
func builtTarget(dst []byte, u *url.URL) (string, octetSet) {
	// The path part is u.Opaque, or u.Path as it is, or u.RawPath while it
	// still encodes u.Path, all normalised; or else u.Path escaped as
	// url.URL.EscapedPath escapes it, which appendEscaped does without
	// allocating. sum is the summary of p under targetOctets, or notPlain
	// while that is not known. A path that does not start with '/' in a
	// URL without a host, and opaque data but for "/…", are cut to what
	// pathOf returns; url.Parse makes neither of an absolute http URL.
	p, sum, escape := u.Opaque, uint64(notPlain), false
	if p == "" {
		p = u.Path
		// A path plain under pathOctets is plain under targetOctets too.
		if sum = summarize(p, &pathOctets); u.RawPath != "" || sum&notPlain != 0 {
			sum = notPlain
			if u.RawPath != "" && encodes(u.RawPath, u.Path) {
				p = u.RawPath
			} else {
				escape = true
			}
		}
		if p != "" && p[0] != '/' && u.Host == "" {
			p, sum = pathOf(p), notPlain
		}
	} else if p[0] != '/' || len(p) > 1 && p[1] == '/' {
		p = pathOf(p)
	}
	var set octetSet
	if p == "" || p[0] != '/' {
		dst = append(dst, '/')
		set |= slashOctet
	}
	if escape {
		n := len(dst)
		dst = appendEscaped(dst, p)
		set |= octetsOf(unsafe.String(unsafe.SliceData(dst[n:]), len(dst)-n))
	} else {
		if sum&notPlain != 0 {
			sum = summarize(p, &targetOctets)
		}
		dst = appendPart(dst, p, sum, &set)
	}
	if u.RawQuery != "" || u.ForceQuery {
		dst = append(dst, '?')
		set |= queryOctet
		dst = appendPart(dst, u.RawQuery, summarize(u.RawQuery, &targetOctets), &set)
	}
	return unsafe.String(unsafe.SliceData(dst), len(dst)), set
}

// pathOf returns the path of an opaque URL's data or of a relative
// reference without a host: the part from the first '/' or ';' after the
// host, or "" (which targets read as "/") for none. "example.com/a" and
// "example.com:8080/a" (scheme "example.com", opaque "8080/a") have the
// path "/a"; "mailto:x" and "example.com" have none. Opaque data that
// starts with "//", net/url's form for a request path sent as written, is
// read past that authority: "//example.com/a" has the path "/a".
//
// Google-specific: robots.cc GetPathParamsQuery takes a URL without a
// "scheme://" for one whose first component is the host ("a/b" → "/b",
// "a" → "/", "example.com?a" → "/?a"), skips a leading "//" and the
// authority after it, and starts the path at the first '/', '?' or ';'
// (GetPathParamsQuery in Google's robots.cc). url.Parse has already split off the
// query and the fragment.
func pathOf(p string) string {
	if len(p) >= 2 && p[0] == '/' && p[1] == '/' {
		p = p[2:]
	}
	for i := 0; i < len(p); i++ {
		if p[i] == '/' || p[i] == ';' {
			return p[i:]
		}
	}
	return ""
}

// appendEscaped appends the decoded URL path s to dst as appendNormal, with
// targetOctets, would append url.URL.EscapedPath's escaping of it: octets
// EscapedPath leaves as they are stay, but '$', which targets encode; every
// other octet is percent-encoded (EscapedPath never encodes an unreserved
// octet, whose escape appendNormal would decode). These are exactly the
// octets pathOctets does not leave plain.
func appendEscaped(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; pathOctets[c]&notPlain == 0 {
			dst = append(dst, c)
		} else {
			dst = append(dst, '%', upperHex[c>>4], upperHex[c&15])
		}
	}
	return dst
}

// appendPart appends s, normalised by appendNormal with targetOctets, to
// dst, and adds the octets it appends to *set. sum is summarize(s,
// &targetOctets).
func appendPart(dst []byte, s string, sum uint64, set *octetSet) []byte {
	if sum&notPlain == 0 {
		*set |= octetSet(sum)
		return append(dst, s...)
	}
	n := len(dst)
	dst = appendNormal(dst, s, &targetOctets)
	*set |= octetsOf(unsafe.String(unsafe.SliceData(dst[n:]), len(dst)-n))
	return dst
}

// plainTarget returns the target of u and the summary of its octets when
// the target is u.Path itself: a path that starts with '/' and needs no
// escaping, and no query.
func plainTarget(u *url.URL) (string, octetSet, bool) {
	p := u.Path
	if u.Opaque != "" || u.RawPath != "" || u.RawQuery != "" || u.ForceQuery || p == "" || p[0] != '/' {
		return "", 0, false
	}
	sum := summarize(p, &pathOctets)
	return p, octetSet(sum), sum&notPlain == 0
}

// encodes reports whether raw percent-decodes to exactly path.
func encodes(raw, path string) bool {
	j := 0
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if c == '%' {
			if i+2 >= len(raw) {
				return false
			}
			hi, ok1 := unhex(raw[i+1])
			lo, ok2 := unhex(raw[i+2])
			if !ok1 || !ok2 {
				return false
			}
			c = hi<<4 | lo
			i += 2
		}
		if j >= len(path) || path[j] != c {
			return false
		}
		j++
	}
	return j == len(path)
}

// match reports whether the normalised pattern matches the normalised target.
//
// RFC 9309 §2.2.3: the pattern is anchored at the start of the target; '*'
// matches any run of octets, and '$' as the pattern's last octet anchors its
// end (elsewhere it is a literal '$'). Matching is case-sensitive.
//
// Between two '*' the pattern is a literal segment. Taking the leftmost
// occurrence of each segment is optimal, so the cost is one left-to-right
// pass over the target per rule: O(len(target)+len(pattern)), however many
// '*' the pattern holds (Google's matcher is O(len(target)×len(pattern))).
func match(pattern, target string) bool {
	end := len(pattern) > 0 && pattern[len(pattern)-1] == '$'
	if end {
		pattern = pattern[:len(pattern)-1]
	}
	star := strings.IndexByte(pattern, '*')
	if star < 0 {
		if end {
			return target == pattern
		}
		return strings.HasPrefix(target, pattern)
	}
	if !strings.HasPrefix(target, pattern[:star]) {
		return false
	}
	target, pattern = target[star:], pattern[star+1:]
	for {
		star = strings.IndexByte(pattern, '*')
		if star < 0 {
			break
		}
		seg := pattern[:star]
		pattern = pattern[star+1:]
		if seg == "" {
			continue
		}
		i := strings.Index(target, seg)
		if i < 0 {
			return false
		}
		target = target[i+len(seg):]
	}
	// The last segment: anywhere in what is left, or at its very end for '$'.
	if end {
		return strings.HasSuffix(target, pattern)
	}
	return strings.Contains(target, pattern)
}
