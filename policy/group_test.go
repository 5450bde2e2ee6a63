package policy

import (
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"
)

// TestGroupLookupManyAgents checks the agent table through several growths:
// every token finds its own group, in any case, and unknown tokens fall back
// to '*' (RFC 9309 §2.2.1).
func TestGroupLookupManyAgents(t *testing.T) {
	letters := func(i int) string { // a distinct [a-z] token per i
		var sb strings.Builder
		for ; ; i /= 26 {
			sb.WriteByte(byte('a' + i%26))
			if i < 26 {
				return "bot" + sb.String()
			}
		}
	}
	for _, n := range []int{1, 2, 3, 5, 7, 9, 17, 33, 100, 1000} {
		var body strings.Builder
		body.WriteString("User-agent: *\nDisallow: /\n")
		for i := 0; i < n; i++ {
			fmt.Fprintf(&body, "User-agent: %s\nDisallow: /%d\n", letters(i), i)
		}
		r := Parse([]byte(body.String()))
		for i := 0; i < n; i++ {
			agent := strings.ToUpper(letters(i))
			own, _ := url.Parse(fmt.Sprintf("/%d", i))
			other, _ := url.Parse(fmt.Sprintf("/%d", i+1))
			if r.Allowed(agent, own) || !r.Allowed(agent, other) {
				t.Errorf("n=%d: Allowed(%q, …) does not use the agent's own group", n, agent)
			}
		}
		if u, _ := url.Parse("/x"); r.Allowed("unknownbot", u) {
			t.Errorf("n=%d: Allowed(%q, %q) = true, want the '*' group's false", n, "unknownbot", "/x")
		}
	}
}

// TestCrawlDelayAppliesAbove: Crawl-delay is outside RFC 9309; a line
// applies to the user-agent lines above it in its record, which is what both
// common real shapes mean (github.com's "User-agent: baidu / Crawl-delay: 1"
// before the '*' record, and a '*' delay just before a group of its own).
// Rules, by contrast, belong to the whole record (Google, "Grouping of lines
// and rules").
func TestCrawlDelayAppliesAbove(t *testing.T) {
	r := Parse([]byte("User-agent: baidu\ncrawl-delay: 1\n\nUser-agent: *\nDisallow: /x\n\nUser-agent: later\nCrawl-delay: 5\nCrawl-delay: 2\nUser-agent: late2\nDisallow: /y\nUser-agent: next\nDisallow: /z\n"))
	for _, tt := range []struct {
		agent string
		d     time.Duration
		ok    bool
	}{
		{"baidu", time.Second, true},
		{"Googlebot", 0, false}, // '*' comes after baidu's Crawl-delay
		{"later", 5 * time.Second, true},
		{"late2", 0, false},
		{"next", 0, false},
	} {
		if d, ok := r.CrawlDelay(tt.agent); d != tt.d || ok != tt.ok {
			t.Errorf("CrawlDelay(%q) = %v, %v, want %v, %v", tt.agent, d, ok, tt.d, tt.ok)
		}
	}
	if u, _ := url.Parse("/x"); r.Allowed("baidu", u) {
		t.Errorf("Allowed(%q, %q) = true, want false: baidu and '*' form one record", "baidu", "/x")
	}
}

// TestGroupLookupTokenLengths checks that a token of every length finds its
// group in the other case: the agent hash reads short and long tokens
// differently (RFC 9309 §2.2.1: product tokens compare case-insensitively).
func TestGroupLookupTokenLengths(t *testing.T) {
	const word = "AbCdEfGhIjKlMnOpQrStUv"
	u, _ := url.Parse("/x")
	for n := 1; n <= len(word); n++ {
		token := word[:n]
		r := Parse([]byte("User-agent: *\nAllow: /\n\nUser-agent: " + token + "\nDisallow: /x\n"))
		for _, agent := range []string{token, strings.ToLower(token), strings.ToUpper(token)} {
			if r.Allowed(agent, u) {
				t.Errorf("Allowed(%q, %q) = true with group %q, want false", agent, "/x", token)
			}
		}
	}
}
