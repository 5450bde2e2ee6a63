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
	{netip.MustParsePrefix("192.88.99.0/24"), "6to4 relay anycast"},          // RFC 7526 (deprecated)
	// Azure's platform address (WireServer, DNS, health probes), reachable
	// from every Azure VM though it is in a public range: its metadata
	// service's other address, 169.254.169.254, is link-local.
	{netip.MustParsePrefix("168.63.129.16/32"), "cloud platform address (Azure)"}, // https://learn.microsoft.com/azure/virtual-network/what-is-ip-address-168-63-129-16
	{netip.MustParsePrefix("2001::/23"), "IETF protocol assignments"},             // RFC 2928: Teredo, benchmarking, ORCHID, …
	{netip.MustParsePrefix("2001:db8::/32"), "documentation"},                     // RFC 3849
	{netip.MustParsePrefix("3fff::/20"), "documentation"},                         // RFC 9637
	{netip.MustParsePrefix("5f00::/16"), "segment routing (SRv6)"},                // RFC 9602
	{netip.MustParsePrefix("fec0::/10"), "private"},                               // site-local, RFC 3879
	{netip.MustParsePrefix("100::/64"), "discard-only"},                           // RFC 6666
}

// embedded lists IPv6 ranges that carry an IPv4 address in their low or
// second 32 bits and reach it through a translator or tunnel: the IPv4
// address is judged instead.
var embedded = [...]struct {
	prefix netip.Prefix
	offset int // byte offset of the IPv4 address
}{
	{netip.MustParsePrefix("64:ff9b::/96"), 12},      // NAT64, RFC 6052
	{netip.MustParsePrefix("::/96"), 12},             // IPv4-compatible, deprecated by RFC 4291
	{netip.MustParsePrefix("::ffff:0:0:0/96"), 12},   // IPv4-translated (SIIT), RFC 2765
	{netip.MustParsePrefix("2002::/16"), 2},          // 6to4, RFC 3056
	{netip.MustParsePrefix("64:ff9b:1::/48"), nat64}, // local-use NAT64, RFC 8215: see localNAT64
}

// nat64 marks a prefix whose IPv4 address may sit where any of RFC 6052's
// layouts puts it (localNAT64).
const nat64 = -1

// localNAT64 returns the reason not to reach a, an address in the
// local-use NAT64 prefix 64:ff9b:1::/48, or "". A network may use a /48,
// /56, /64 or /96 of it (RFC 6052 §2.2), and each puts the IPv4 address
// elsewhere (skipping bits 64–71): the address is refused when any of
// these readings is not public, so that an attacker who knows the
// network's prefix length cannot hide an address from the others. A
// reading inside 0.0.0.0/8, which no translator reaches, is no reading
// (a /96 network's addresses read that way at /48 and /56, a /48
// network's at /96), unless every reading is.
func localNAT64(b [16]byte) string {
	read := false
	for _, at := range [...][4]int{{6, 7, 9, 10}, {7, 9, 10, 11}, {9, 10, 11, 12}, {12, 13, 14, 15}} {
		if b[at[0]] == 0 {
			continue // 0.0.0.0/8: not this layout
		}
		read = true
		if r := Reason(netip.AddrFrom4([4]byte{b[at[0]], b[at[1]], b[at[2]], b[at[3]]})); r != "" {
			return r + " (inside 64:ff9b:1::/48)"
		}
	}
	if !read {
		return Reason(netip.AddrFrom4([4]byte(b[12:]))) + " (inside 64:ff9b:1::/48)"
	}
	return ""
}

// Reason says why a is not a public address — "loopback", "private",
// "link-local", "multicast", "unspecified", "shared address space
// (CGNAT)", "documentation", … — or returns "" when it is public. An
// IPv4-mapped IPv6 address (::ffff:127.0.0.1) is judged as its IPv4
// address, and so is the IPv4 address inside a NAT64, 6to4,
// IPv4-translated or IPv4-compatible IPv6 address. An invalid address is
// "invalid".
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
				if e.offset == nat64 {
					return localNAT64(b)
				}
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
