package netguard

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
)

// AllowHost returns the addresses host (a name or an IP literal, without a
// port) resolves to now that are not public, each as a single-address
// prefix for Dialer.Allow; nil when all are public. A crawl of a site on
// the local machine or an intranet then reaches that site, and no other
// non-public address: not the metadata service, not 127.0.0.1 on another
// host name's behalf, not the rest of the network.
//
// Link-local addresses (169.254.0.0/16, fe80::/10: where cloud metadata
// services answer) are never allowed this way, even for a host that
// resolves to one: reaching them takes an explicit Dialer.Allow prefix.
//
// The host is trusted as it resolves when AllowHost is called: a name that
// an attacker controls and points at 127.0.0.1 is allowed 127.0.0.1. Call it
// for the site a user asked to crawl, never for a URL the crawl found.
func AllowHost(ctx context.Context, host string) ([]netip.Prefix, error) {
	host = strings.TrimSuffix(strings.Trim(host, "[]"), ".")
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{a.WithZone("")}
	} else {
		addrs, err = net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		if err != nil {
			return nil, fmt.Errorf("netguard: %w", err)
		}
	}
	var allow []netip.Prefix
	for _, a := range addrs {
		a = a.Unmap().WithZone("")
		if r := Reason(a); r != "" && r != "link-local" {
			allow = append(allow, netip.PrefixFrom(a, a.BitLen()))
		}
	}
	return allow, nil
}

// SiteTransport returns Transport with a Dialer that allows the non-public
// addresses of site's host (see AllowHost), site being an http or https
// URL: the transport for a crawl of that site, which may run on the local
// machine or an intranet while its robots.txt, sitemaps, redirects and
// links cannot lead the crawl to any other non-public address. A host that
// does not resolve gets the zero Dialer: its fetches fail anyway.
func SiteTransport(ctx context.Context, site string) (*http.Transport, error) {
	u, err := url.Parse(site)
	if err != nil || u.Hostname() == "" {
		return nil, fmt.Errorf("netguard: site %q is not a URL with a host", site)
	}
	allow, _ := AllowHost(ctx, u.Hostname())
	return Transport(&Dialer{Allow: allow}), nil
}
