package netguard

import (
	"net/netip"
	"testing"
)

func TestReason(t *testing.T) {
	for _, tc := range []struct {
		addr, want string
	}{
		{"8.8.8.8", ""},
		{"93.184.215.14", ""},
		{"2606:4700::1111", ""},
		{"127.0.0.1", "loopback"},
		{"127.8.9.10", "loopback"},
		{"::1", "loopback"},
		{"::ffff:127.0.0.1", "loopback"},
		{"10.0.0.1", "private"},
		{"172.16.5.4", "private"},
		{"192.168.1.1", "private"},
		{"fd00::1", "private"},
		{"::ffff:10.1.2.3", "private"},
		{"fec0::1", "private"},
		{"169.254.169.254", "link-local"},
		{"fe80::1", "link-local"},
		{"fe80::1%eth0", "link-local"},
		{"224.0.0.1", "multicast"},
		{"ff02::1", "multicast"},
		{"0.0.0.0", "unspecified"},
		{"::", "unspecified"},
		{"0.1.2.3", "this network"},
		{"100.64.0.1", "shared address space (CGNAT)"},
		{"100.127.255.254", "shared address space (CGNAT)"},
		{"100.128.0.1", ""},
		{"255.255.255.255", "reserved"},
		{"192.0.2.7", "documentation"},
		{"2001:db8::1", "documentation"},
		{"64:ff9b::7f00:1", "loopback (inside 64:ff9b::/96)"},
		{"64:ff9b::808:808", ""},
		{"2002:a9fe:a9fe::1", "link-local (inside 2002::/16)"},
		{"::127.0.0.1", "loopback (inside ::/96)"},                               // IPv4-compatible
		{"::ffff:0:7f00:1", "loopback (inside ::ffff:0:0:0/96)"},                 // IPv4-translated
		{"::ffff:0:a9fe:a9fe", "link-local (inside ::ffff:0:0:0/96)"},            // IPv4-translated
		{"::ffff:0:808:808", ""},                                                 // IPv4-translated
		{"64:ff9b:1::808:808", ""},                                               // local-use NAT64, /96
		{"64:ff9b:1::a9fe:a9fe", "link-local (inside 64:ff9b:1::/48)"},           // /96
		{"64:ff9b:1:a9fe:a9:fe00:808:808", "link-local (inside 64:ff9b:1::/48)"}, // /48 layout, a public /96 reading
		{"64:ff9b:1:a9:fe:a9fe::", "link-local (inside 64:ff9b:1::/48)"},         // /56
		{"64:ff9b:1:0:7f:0:100::", "loopback (inside 64:ff9b:1::/48)"},           // /64
		{"64:ff9b:1:808:8:800::", ""},                                            // /48 layout of 8.8.8.8
		{"192.88.99.1", "6to4 relay anycast"},
		{"168.63.129.16", "cloud platform address (Azure)"},
		{"168.63.129.17", ""},
		{"2001::1", "IETF protocol assignments"},    // Teredo
		{"2001:2::1", "IETF protocol assignments"},  // benchmarking
		{"2001:20::1", "IETF protocol assignments"}, // ORCHIDv2
		{"2001:200::1", ""},
		{"3fff::1", "documentation"},
		{"5f00::1", "segment routing (SRv6)"},
		{"64:ff9b:1::", "unspecified (inside 64:ff9b:1::/48)"},
		{"64:ff9b:1::1", "this network (inside 64:ff9b:1::/48)"},
	} {
		a := netip.MustParseAddr(tc.addr)
		got := Reason(a)
		if got != tc.want {
			t.Errorf("Reason(%s) = %q, want %q", tc.addr, got, tc.want)
		}
	}
	if got := Reason(netip.Addr{}); got != "invalid" {
		t.Errorf("Reason(zero Addr) = %q, want %q", got, "invalid")
	}
}
