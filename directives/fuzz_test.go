package directives

import (
	"net/http"
	"strings"
	"testing"
)

func FuzzParse(f *testing.F) {
	f.Add("googlebot: noindex, nofollow", "max-snippet:10, unavailable_after: 25 Jun 2010 15:00:00 PST")
	f.Add("unavailable_after: Friday, 25-Jun-10 15:00:00 GMT", "none")
	f.Fuzz(func(t *testing.T, field, content string) {
		h := http.Header{"X-Robots-Tag": {field}}
		d := Parse("googlebot", h, nil)
		if d.MaxSnippet < -1 || d.MaxVideoPreview < -1 {
			t.Fatalf("Parse(%q) limits %d, %d below -1", field, d.MaxSnippet, d.MaxVideoPreview)
		}
		m := noDirectives
		m.list(content)
		if strings.EqualFold(strings.TrimSpace(content), "none") && !(m.NoIndex && m.NoFollow) {
			t.Fatalf("list(%q) = %+v, want noindex and nofollow", content, m)
		}
		// Adding "nofollow" to a list never clears a flag.
		n := noDirectives
		n.list(content + ",nofollow")
		if !n.NoFollow || (m.NoIndex && !n.NoIndex) {
			t.Fatalf("list(%q + nofollow) = %+v, lost a flag of %+v", content, n, m)
		}
	})
}
