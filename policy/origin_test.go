package policy

import (
	"errors"
	"net/url"
	"testing"
)

// TestOrigin: RFC 9309 §2.3, Google's "File location and range of
// validity": scheme + host + port, host normalised, default
// ports folded.
func TestOrigin(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"https://example.com/folder/file", "https://example.com"},
		{"HTTP://Example.COM/a?b#c", "http://example.com"},
		{"http://example.com:80/", "http://example.com"},
		{"https://example.com:443/", "https://example.com"},
		{"http://example.com:0080/", "http://example.com"},
		{"http://example.com:/", "http://example.com"},
		{"http://example.com:443/", "http://example.com:443"},
		{"https://example.com:80/", "https://example.com:80"},
		{"https://example.com:8181/", "https://example.com:8181"},
		{"http://example.com./", "http://example.com"},
		{"http://example.com../", "http://example.com"},
		{"http://user:pass@example.com/", "http://example.com"},
		{"http://www.example.com/", "http://www.example.com"},
		{"http://my_host.example.com/", "http://my_host.example.com"},
		// Google, file location: an IDN equals its punycode.
		{"https://www.exämple.com/", "https://www.xn--exmple-cua.com"},
		{"https://WWW.EXÄMPLE.COM./", "https://www.xn--exmple-cua.com"},
		{"https://www.xn--exmple-cua.com/", "https://www.xn--exmple-cua.com"},
		{"https://bücher.example:8443/", "https://xn--bcher-kva.example:8443"},
		// IP literals.
		{"http://127.0.0.1:80/", "http://127.0.0.1"},
		{"http://192.0.2.1:8080/", "http://192.0.2.1:8080"},
		{"http://[::1]/", "http://[::1]"},
		{"http://[::1]:8080/", "http://[::1]:8080"},
		{"https://[2001:DB8:0:0::1]:443/", "https://[2001:db8::1]"},
		{"http://[fe80::1%25en0]:8080/", "http://[fe80::1%25en0]:8080"},
	}
	for _, tt := range tests {
		u, err := url.Parse(tt.in)
		if err != nil {
			t.Fatalf("url.Parse(%q) = %v", tt.in, err)
		}
		got, err := Origin(u)
		if err != nil || got != tt.want {
			t.Errorf("Origin(%q) = %q, %v; want %q, nil", tt.in, got, err, tt.want)
			continue
		}
		// The origin is itself a URL with the same origin.
		back, err := url.Parse(got + "/robots.txt")
		if err != nil {
			t.Errorf("url.Parse(%q) = %v", got+"/robots.txt", err)
			continue
		}
		if again, err := Origin(back); again != got || err != nil {
			t.Errorf("Origin(%q) = %q, %v; want %q, nil", back, again, err, got)
		}
	}
}

func TestOriginErrors(t *testing.T) {
	tests := []*url.URL{
		nil,
		{Path: "/relative"},
		{Scheme: "ftp", Host: "example.com"},
		{Scheme: "mailto", Opaque: "bot@example.com"},
		{Scheme: "http"},
		{Scheme: "http", Host: "."},
		{Scheme: "http", Host: "example.com:99999"},
		{Scheme: "http", Host: "example.com:0"},
		{Scheme: "http", Host: "example.com:http"},
		{Scheme: "http", Host: "[::1"},
		{Scheme: "http", Host: "[1.2.3.4]"},
		{Scheme: "https", Host: "a\u200db.example"}, // ZWJ out of context
	}
	for _, u := range tests {
		if got, err := Origin(u); !errors.Is(err, ErrNoOrigin) {
			t.Errorf("Origin(%v) = %q, %v; want ErrNoOrigin", u, got, err)
		}
	}
}
