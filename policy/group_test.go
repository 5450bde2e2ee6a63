package policy

import (
	"fmt"
	"net/url"
	"strings"
	"testing"
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
