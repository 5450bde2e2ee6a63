package policy

import "testing"

// FuzzLint: Lint accepts any bytes, and what it returns holds the
// invariants every diagnostic must: a line inside the file, sorted by
// line, each code with its one severity, lower-case messages; and a body
// with no diagnostic parses (Clean-param lines included) to at most the
// lines it has.
func FuzzLint(f *testing.F) {
	for _, s := range []string{
		"User-agent: *\nDisallow:\nDisallow: /a\nDisallow: /a\nAllow: /a\n",
		"User-agent: *\nDisallow: /x\n\nUser-agent: *\nNoindex: /y\n\nUser-agent: bot\n",
		"Clean-param: &a&&b=1 /p*\nClean-param: c d e\n",
		"User-agent: Googlebot, Bingbot\nUser-agent: MJ12bot\nDisallow: /\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		diags := Lint(body)
		checkDiagnostics(t, body, diags)
		r := Parse(body)
		if n := len(r.CleanParams()); n > lintCountLines(body) {
			t.Fatalf("Parse(%q): %d Clean-param lines in %d lines", body, n, lintCountLines(body))
		}
		for _, cp := range r.CleanParams() {
			if len(cp.Params) == 0 {
				t.Fatalf("Parse(%q): a Clean-param line without names: %+v", body, cp)
			}
			for _, p := range cp.Params {
				if p == "" {
					t.Fatalf("Parse(%q): an empty Clean-param name: %+v", body, cp)
				}
			}
		}
	})
}
