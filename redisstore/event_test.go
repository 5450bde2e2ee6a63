package redisstore

import (
	"fmt"
	"testing"
	"time"
)

func TestParseEvent(t *testing.T) {
	tests := []struct {
		in         string
		paused, iv time.Duration
		host       string
		ok         bool
	}{
		{"5000000 2000000 example.com", 5 * time.Second, 2 * time.Second, "example.com", true},
		{"0 0 xn--bcher-kva.example", 0, 0, "xn--bcher-kva.example", true},
		{"-1 5 h", 0, 0, "", false},
		{"0 10000000000000000 h", 0, 0, "", false}, // beyond a time.Duration
		{"5 5", 0, 0, "", false},
		{"5 5 ", 0, 0, "", false},
		{"x 5 h", 0, 0, "", false},
		{"", 0, 0, "", false},
	}
	for _, tt := range tests {
		p, iv, host, ok := parseEvent(tt.in)
		if p != tt.paused || iv != tt.iv || host != tt.host || ok != tt.ok {
			t.Errorf("parseEvent(%q) = %v, %v, %q, %v; want %v, %v, %q, %v", tt.in, p, iv, host, ok, tt.paused, tt.iv, tt.host, tt.ok)
		}
	}
}

// FuzzParseEvent: parseEvent never panics, and what it accepts is what
// the strike script publishes: formatting it again gives an event that
// parses to the same values.
func FuzzParseEvent(f *testing.F) {
	f.Add("5000000 2000000 example.com")
	f.Add("0 0 h")
	f.Add("9223372036854775807 -9223372036854775808 a b")
	f.Fuzz(func(t *testing.T, s string) {
		p, iv, host, ok := parseEvent(s)
		if !ok {
			return
		}
		if host == "" {
			t.Fatalf("parseEvent(%q) accepted an empty host", s)
		}
		again := fmt.Sprintf("%d %d %s", p.Microseconds(), iv.Microseconds(), host)
		p2, iv2, host2, ok2 := parseEvent(again)
		if !ok2 || p2 != p || iv2 != iv || host2 != host {
			t.Fatalf("parseEvent(%q) = %v %v %q, but its reformatting %q parses to %v %v %q %v", s, p, iv, host, again, p2, iv2, host2, ok2)
		}
	})
}
