package policy

import (
	"fmt"
	"net/url"
	"strings"
	"testing"
)

// lintBenchBody is a large, realistic file: several groups of rules,
// comments and Clean-param lines.
func lintBenchBody() []byte {
	var b strings.Builder
	for g := range 8 {
		fmt.Fprintf(&b, "# group %d\nUser-agent: bot%d\nUser-agent: *\n", g, g)
		for i := range 250 {
			fmt.Fprintf(&b, "Disallow: /section%d/page-%d/*.php$\nAllow: /section%d/open-%d/\n", g, i, g, i)
		}
		fmt.Fprintf(&b, "Clean-param: utm_source&utm_medium&ref /section%d/\n\n", g)
	}
	return []byte(b.String())
}

func BenchmarkLintGroups(b *testing.B) {
	body := lintBenchBody()
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		Lint(body)
	}
}

func BenchmarkCanonical(b *testing.B) {
	r := Parse(lintBenchBody())
	u, _ := url.Parse("https://example.com/section7/item?id=7&utm_source=mail&page=2&ref=x")
	b.ReportAllocs()
	for b.Loop() {
		r.Canonical(u)
	}
}
