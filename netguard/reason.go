package netguard

import "net/netip"

// special lists address ranges that are not public unicast destinations,
// with the word an AddressError uses for each (IANA special-purpose address
// registries, RFC 6890 and its updates). Loopback, private, link-local,
// multicast and unspecified addresses are told by netip's own predicates in
// Reason; these are the ranges netip has no predicate for.
var special = [...]struct {
	prefix netip.Prefix
	reason string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), "this network"},                     // RFC 791
	{netip.MustParsePrefix("100.64.0.0/10"), "shared address space (CGNAT)"}, // RFC 6598
	{netip.MustParsePrefix("192.0.0.0/24"), "IETF protocol assignments"},     // RFC 6890
	{netip.MustParsePrefix("192.0.2.0/24"), "documentation"},                 // RFC 5737
	{netip.MustParsePrefix("198.18.0.0/15"), "benchmarking"},                 // RFC 2544
	{netip.MustParsePrefix("198.51.100.0/24"), "documentation"},              // RFC 5737
	{netip.MustParsePrefix("203.0.113.0/24"), "documentation"},               // RFC 5737
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved"},                       // RFC 1112, incl. broadcast
	{netip.MustParsePrefix("2001:db8::/32"), "documentation"},                // RFC 3849
	{netip.MustParsePrefix("fec0::/10"), "private"},                          // site-local, RFC 3879
	{netip.MustParsePrefix("100::/64"), "discard-only"},                      // RFC 6666
}

// embedded lists IPv6 ranges that carry an IPv4 address in their low or
// second 32 bits and reach it through a translator or tunnel: the IPv4
// address is judged instead.
var embedded = [...]struct {
	prefix netip.Prefix
	offset int // byte offset of the IPv4 address
}{
	{netip.MustParsePrefix("64:ff9b::/96"), 12},   // NAT64, RFC 6052
	{netip.MustParsePrefix("64:ff9b:1::/48"), 12}, // local-use NAT64, RFC 8215
	{netip.MustParsePrefix("::/96"), 12},          // IPv4-compatible, deprecated by RFC 4291
	{netip.MustParsePrefix("2002::/16"), 2},       // 6to4, RFC 3056
}

// Reason says why a is not a public address — "loopback", "private",
// "link-local", "multicast", "unspecified", "shared address space
// (CGNAT)", "documentation", … — or returns "" when it is public. An
// IPv4-mapped IPv6 address (::ffff:127.0.0.1) is judged as its IPv4
// address, and so is the IPv4 address inside a NAT64, 6to4 or
// IPv4-compatible IPv6 address. An invalid address is "invalid".
func Reason(a netip.Addr) string {
	if !a.IsValid() {
		return "invalid"
	}
	a = a.Unmap().WithZone("")
	switch {
	case a.IsUnspecified():
		return "unspecified"
	case a.IsLoopback():
		return "loopback"
	case a.IsPrivate():
		return "private"
	case a.IsLinkLocalUnicast():
		return "link-local"
	case a.IsMulticast():
		return "multicast"
	}
	for _, s := range special {
		if s.prefix.Contains(a) {
			return s.reason
		}
	}
	if a.Is6() {
		b := a.As16()
		for _, e := range embedded {
			if e.prefix.Contains(a) {
				v4 := netip.AddrFrom4([4]byte(b[e.offset : e.offset+4]))
				if r := Reason(v4); r != "" {
					return r + " (inside " + e.prefix.String() + ")"
				}
				return ""
			}
		}
	}
	return ""
}
