package netguard

import (
	"cmp"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
)

// AllowSite returns the non-public addresses the host of site (an http or
// https URL) resolves to now, each with the site's port — the URL's, or
// 80 for http and 443 for https when it names none — for
// Dialer.AllowAddrPorts; nil when all are public. A crawl of a site on the
// local machine or an intranet then reaches that site, and no other
// non-public address or port: not the metadata service, not 127.0.0.1 on
// another host name's behalf, not the other services of the site's own
// address (Redis on 6379 beside a site on 8080), not the rest of the
// network.
//
// The port is the site's only: a site on http://10.0.0.5/ (port 80) that
// redirects to https://10.0.0.5/ (port 443) is refused there; name the
// https URL as the site.
//
// Link-local addresses (169.254.0.0/16, fe80::/10: where cloud metadata
// services answer) are never allowed this way, even for a host that
// resolves to one: reaching them takes an explicit Dialer.Allow prefix.
//
// The host is trusted as it resolves when AllowSite is called: a name that
// an attacker controls and points at 127.0.0.1 is allowed 127.0.0.1 on its
// port. Call it for the site a user asked to crawl, never for a URL the
// crawl found.
func AllowSite(ctx context.Context, site string) ([]netip.AddrPort, error) {
	host, port, err := siteHostPort(site)
	if err != nil {
		return nil, err
	}
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{a}
	} else {
		addrs, err = net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		if err != nil {
			return nil, fmt.Errorf("netguard: site %q: %w", site, err)
		}
	}
	var allow []netip.AddrPort
	for _, a := range addrs {
		a = a.Unmap().WithZone("")
		// Reason says "link-local (inside 64:ff9b::/96)" of a link-local
		// address inside a NAT64 or 6to4 one, as DNS64 writes an A record
		// of 169.254.169.254.
		if r := Reason(a); r != "" && !strings.HasPrefix(r, "link-local") {
			allow = append(allow, netip.AddrPortFrom(a, port))
		}
	}
	return allow, nil
}

// siteHostPort returns the host of site, an http or https URL, and its
// port: the URL's, or the scheme's default.
func siteHostPort(site string) (string, uint16, error) {
	u, err := url.Parse(site)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
		return "", 0, fmt.Errorf("netguard: site %q is not an http or https URL with a host", site)
	}
	port, err := strconv.ParseUint(cmp.Or(u.Port(), defaultPort(u.Scheme)), 10, 16)
	if err != nil || port == 0 {
		return "", 0, fmt.Errorf("netguard: site %q has port %q, want 1 to 65535", site, u.Port())
	}
	return strings.TrimSuffix(u.Hostname(), "."), uint16(port), nil
}

// SiteTransport returns Transport with a Dialer that allows the non-public
// addresses of site's host on site's port (see AllowSite), site being an
// http or https URL: the transport for a crawl of that site, which may run
// on the local machine or an intranet while its robots.txt, sitemaps,
// redirects and links cannot lead the crawl to any other non-public
// address or port. Proxies are the environment's (see Transport). A host
// that does not resolve gets the zero Dialer: its fetches fail anyway.
func SiteTransport(ctx context.Context, site string) (*http.Transport, error) {
	if _, _, err := siteHostPort(site); err != nil {
		return nil, err
	}
	allow, _ := AllowSite(ctx, site)
	return Transport(&Dialer{AllowAddrPorts: allow}), nil
}
