package policy

import (
	"strings"
	"testing"
)

// FuzzProductToken holds ProductToken's invariants on any User-Agent: the
// token is a run of [A-Za-z_-] found in the header; a header that does not
// start with a browser's product gets its leading token; one that does
// never gets "Mozilla" or "Opera" from its comments, nor a browser's or
// platform's product.
func FuzzProductToken(f *testing.F) {
	for _, s := range []string{
		"ExampleBot/1.0 (+https://example.org/bot)",
		"Mozilla/5.0 (compatible; MyBot/1.0; +https://example.org/bot)",
		"Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Googlebot/2.1; +http://www.google.com/bot.html) Chrome/120.0.0.0 Safari/537.36",
		"Mozilla/5.0 (X11; Linux x86_64; rv:109.0) Gecko/20100101 Firefox/115.0",
		"Opera/9.80 (Windows NT 6.0) Presto/2.12.388 Version/12.14",
		"", "Mozilla", "Mozilla/", "  Mozilla/5.0 (;;;/)",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, ua string) {
		tok := ProductToken(ua)
		if tokenPrefix(tok) != tok {
			t.Fatalf("ProductToken(%q) = %q, not a run of letters, '_' and '-'", ua, tok)
		}
		if !strings.Contains(ua, tok) {
			t.Fatalf("ProductToken(%q) = %q, not in the header", ua, tok)
		}
		lead := tokenPrefix(strings.TrimLeft(ua, " \t"))
		rest := strings.TrimLeft(ua, " \t")[len(lead):]
		if !browserBase(lead) || !strings.HasPrefix(rest, "/") {
			if tok != lead {
				t.Fatalf("ProductToken(%q) = %q, want the leading token %q", ua, tok, lead)
			}
			return
		}
		if tok != "" && browserProduct(tok) {
			t.Fatalf("ProductToken(%q) = %q, a browser's or platform's product", ua, tok)
		}
	})
}
