package policy

import (
	"net/url"
	"path/filepath"
	"strings"
	"testing"
)

// benchRobots is a real file (github.com, from the golden corpus) with many
// wildcard rules, and benchURLs typical URLs to ask of it.
func benchRobots(tb testing.TB) (*Robots, []*url.URL) {
	robots, _ := goldenSections(tb, filepath.Join("testdata", "corpus-github.com.txtar"))
	r := Parse(robots)
	var urls []*url.URL
	for _, s := range []string{
		"https://github.com/",
		"https://github.com/golang/go",
		"https://github.com/golang/go/pulse",
		"https://github.com/golang/go/blob/master/src/net/url/url.go",
		"https://github.com/golang/go/issues/123?q=is%3Aopen",
		"https://github.com/golang?tab=achievements&achievement=pull-shark",
		"https://github.com/golang/go/commits/master?author=rsc",
		"https://github.com/search/advanced",
		// A path url.Parse decodes without keeping RawPath, and a query
		// past the short buffer: the other ways a target is built.
		"https://github.com/golang/go/wiki/Caf%C3%A9%20menu",
		"https://github.com/golang/go/issues?q=" + strings.Repeat("is:open+label:bug+", 12),
	} {
		u, err := url.Parse(s)
		if err != nil {
			tb.Fatal(err)
		}
		urls = append(urls, u)
	}
	return r, urls
}

// TestAllowedAllocs checks the documented promise that Allowed does not
// allocate for ordinary targets.
func TestAllowedAllocs(t *testing.T) {
	r, urls := benchRobots(t)
	for _, u := range urls {
		if n := testing.AllocsPerRun(100, func() { r.Allowed("Googlebot", u) }); n != 0 {
			t.Errorf("Allowed(%q, %q) allocates %v times, want 0", "Googlebot", u, n)
		}
	}
}

// BenchmarkAllowed measures one decision against a parsed, warm file.
func BenchmarkAllowed(b *testing.B) {
	r, urls := benchRobots(b)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r.Allowed("Googlebot", urls[i%len(urls)])
	}
}

// BenchmarkParse parses the whole real-world corpus once per iteration.
func BenchmarkParse(b *testing.B) {
	bodies := corpusBench(b)
	for i := 0; i < b.N; i++ {
		for _, body := range bodies {
			Parse(body)
		}
	}
}

// BenchmarkWorstCase is a worst case for matchers whose cost per rule grows
// with the pattern's length times the path's, as Google's robots.cc does:
// 300 rules of 41 '*' each against a 2 KB path.
func BenchmarkWorstCase(b *testing.B) {
	body, path := worstCaseRobots()
	r := Parse([]byte(body))
	u := &url.URL{Path: path}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r.Allowed("x", u)
	}
}

// BenchmarkWorstCaseAdmitted is BenchmarkWorstCase with a path that holds
// every octet the rules need (the digits and 'z', though never a digit
// after the 'z'), so that the octet filter rules no rule out and the
// matcher runs for all 300: the bound of the matcher itself.
func BenchmarkWorstCaseAdmitted(b *testing.B) {
	body, path := worstCaseRobots()
	r := Parse([]byte(body))
	u := &url.URL{Path: path[:len(path)-11] + "0123456789z"}
	if !r.Allowed("x", u) {
		b.Fatalf("Allowed(%q, %.20q…) = false, want true", "x", u.Path)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r.Allowed("x", u)
	}
}

// BenchmarkParseCompileAll is BenchmarkParse plus building every group's
// lookup index, which Parse otherwise leaves to each group's first check.
func BenchmarkParseCompileAll(b *testing.B) {
	bodies := corpusBench(b)
	for i := 0; i < b.N; i++ {
		for _, body := range bodies {
			for _, g := range Parse(body).groups {
				g.once.Do(g.compile)
			}
		}
	}
}

// corpusBench returns the corpus bodies with b set up to measure bytes per
// second over all of them and allocations.
func corpusBench(b *testing.B) [][]byte {
	_, bodies := corpusFiles(b)
	total := 0
	for _, body := range bodies {
		total += len(body)
	}
	b.SetBytes(int64(total))
	b.ReportAllocs()
	b.ResetTimer()
	return bodies
}
