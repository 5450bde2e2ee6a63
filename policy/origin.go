package policy

import (
	"errors"
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	"golang.org/x/net/idna"
)

// ErrNoOrigin is returned, wrapped, for a URL that has no http or https
// origin: a relative URL, another scheme, an empty or malformed host or an
// invalid port.
var ErrNoOrigin = errors.New("policy: URL has no http or https origin")

// Origin returns the origin of an absolute http or https URL: the scope of
// one robots.txt file, written "scheme://host" or "scheme://host:port".
//
// RFC 9309 §2.3 and Google's "File location and range of validity": a robots.txt applies to one scheme, host
// and port. So the scheme and host are lower-cased, a trailing dot of the
// host is dropped, an internationalised host name is converted to its
// punycode (A-label) form, IPv6 literals are written in their canonical
// form, and the default port of the scheme (80 for http, 443 for https) is
// left out. "HTTPS://Www.Exämple.COM.:443/x" has the origin
// "https://www.xn--exmple-cua.com"; http and https of one host are
// different origins.
//
// The error wraps [ErrNoOrigin].
func Origin(u *url.URL) (string, error) {
	if u == nil {
		return "", ErrNoOrigin
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme != "http" && scheme != "https" {
		return "", originError(u, "scheme is not http or https")
	}
	host, err := originHost(u.Hostname(), strings.HasPrefix(u.Host, "["))
	if err != nil {
		return "", originError(u, err.Error())
	}
	port, err := originPort(scheme, u.Port())
	if err != nil {
		return "", originError(u, err.Error())
	}
	n := len(scheme) + len("://") + len(host)
	if port != "" {
		n += 1 + len(port)
	}
	var b strings.Builder
	b.Grow(n)
	b.WriteString(scheme)
	b.WriteString("://")
	b.WriteString(host)
	if port != "" {
		b.WriteByte(':')
		b.WriteString(port)
	}
	return b.String(), nil
}

// originError wraps ErrNoOrigin with the URL and the reason.
func originError(u *url.URL, reason string) error {
	return &originErr{url: u.Redacted(), reason: reason}
}

type originErr struct{ url, reason string }

func (e *originErr) Error() string {
	return "policy: no origin in " + strconv.Quote(e.url) + ": " + e.reason
}

func (e *originErr) Unwrap() error { return ErrNoOrigin }

// originHost returns the host part of an origin as written in a URL:
// lower-case ASCII, punycode for internationalised names, IPv6 literals in
// brackets. bracketed tells whether the URL wrote the host in brackets.
func originHost(host string, bracketed bool) (string, error) {
	if bracketed || strings.IndexByte(host, ':') >= 0 {
		// An IPv6 literal (url.URL.Hostname has removed the brackets).
		a, err := netip.ParseAddr(host)
		if err != nil || !a.Is6() {
			return "", errors.New("malformed IPv6 literal")
		}
		zone := a.Zone()
		s := a.WithZone("").String()
		if zone != "" {
			// RFC 6874: the zone's '%' is written "%25" in a URL.
			s += "%25" + url.PathEscape(zone)
		}
		return "[" + s + "]", nil
	}
	host = strings.TrimRight(host, ".") // "a.." too, so that an origin is its own origin
	if host == "" {
		return "", errors.New("empty host")
	}
	if isASCII(host) {
		// Host names are case-insensitive (RFC 3986 §3.2.2). Names that
		// IDNA's strict rules would reject, such as ones with '_', occur
		// in practice and are kept as they are.
		return strings.ToLower(host), nil
	}
	// Google: an IDN is the same host as its punycode form.
	a, err := idna.Lookup.ToASCII(host)
	if err != nil {
		return "", errors.New("invalid internationalised host name")
	}
	a = strings.TrimRight(a, ".") // a trailing U+3002 and the like
	if a == "" {
		return "", errors.New("empty host")
	}
	return a, nil
}

// originPort returns the port part of an origin: "" for none or the
// scheme's default port, else the decimal port without leading zeros.
func originPort(scheme, port string) (string, error) {
	if port == "" {
		return "", nil
	}
	n, err := strconv.ParseUint(port, 10, 16)
	if err != nil || n == 0 {
		return "", errors.New("invalid port")
	}
	if scheme == "http" && n == 80 || scheme == "https" && n == 443 {
		return "", nil // Google: standard ports equal the bare host.
	}
	return strconv.FormatUint(n, 10), nil
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
