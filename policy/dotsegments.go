package policy

import (
	"net/url"
	"strings"
)

// ResolveDots returns u with the dot segments of its path ("." and "..",
// also percent-encoded as "%2e") removed as RFC 3986 §5.2.4 removes them,
// or u itself when its path has none. A server resolves them before it
// routes a request, so "/public/../private/x" is "/private/x" to it; the
// matcher reads a path as it is written, as Google's does (RFC 9309
// §2.2.2), so a crawler checks the URL it sends as the server will read
// it. URLs that colly or url.URL.ResolveReference made have no dot
// segments already; ones given to a net/http client as they were written
// may. It allocates only when there is something to remove.
func ResolveDots(u *url.URL) *url.URL {
	ep := u.Opaque
	if ep != "" {
		// net/http sends it as the request-target; the matcher reads its
		// path part (pathOf), which is what dot segments are removed from.
		if ep = pathOf(ep); !strings.Contains(ep, "/.") && !strings.Contains(ep, "/%2") {
			return u
		}
	} else {
		if !strings.Contains(u.Path, "/.") && !strings.HasPrefix(u.Path, ".") {
			return u // u.Path is decoded: "%2e" is "." there
		}
		ep = u.EscapedPath()
	}
	if ep == "" {
		return u
	}
	if ep[0] != '/' {
		ep = "/" + ep // a path without its slash is read with one
	}
	segs := strings.Split(ep[1:], "/")
	out := segs[:0]
	for i, s := range segs {
		last := i == len(segs)-1
		switch dotSegment(s) {
		case 1:
			if last {
				out = append(out, "") // "/a/." is "/a/"
			}
		case 2:
			if len(out) > 0 {
				out = out[:len(out)-1]
			}
			if last {
				out = append(out, "")
			}
		default:
			out = append(out, s)
		}
	}
	resolved := "/" + strings.Join(out, "/")
	if resolved == ep && u.Opaque == "" && strings.HasPrefix(u.Path, "/") {
		return u
	}
	path, err := url.PathUnescape(resolved)
	if err != nil {
		return u // the path holds a malformed escape: read as it is
	}
	r := *u
	r.Opaque, r.Path, r.RawPath = "", path, resolved
	return &r
}

// dotSegment returns 1 for a "." segment, 2 for "..", either possibly
// percent-encoded, and 0 for any other segment of an escaped path.
func dotSegment(s string) int {
	n := 0
	for len(s) > 0 {
		switch {
		case s[0] == '.':
			s = s[1:]
		case len(s) >= 3 && s[0] == '%' && s[1] == '2' && (s[2] == 'e' || s[2] == 'E'):
			s = s[3:]
		default:
			return 0
		}
		if n++; n > 2 {
			return 0
		}
	}
	return n
}
