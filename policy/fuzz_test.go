package policy

import (
	"bytes"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fuzzProbeAgents and fuzzProbePaths are asked of every fuzzed file, with
// agents and paths taken from the file itself.
var (
	fuzzProbeAgents = []string{"FooBot", "foobot", "googlebot", "*", ""}
	fuzzProbePaths  = []string{"/", "/a", "/a/b?c=d", "/fish.php", "/%E3%83%84", "/robots.txt", "/x$", "/*", "/!a b"}
)

// fuzzProbes returns agents and URLs to ask of body: the fixed probes plus
// the user-agent tokens and rule paths written in body.
func fuzzProbes(body []byte) (agents []string, urls []*url.URL) {
	agents = append(agents, fuzzProbeAgents...)
	paths := append([]string(nil), fuzzProbePaths...)
	for _, line := range strings.Split(string(body), "\n") {
		if len(agents) > 10 && len(paths) > 20 {
			break
		}
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		v, _, _ = strings.Cut(v, "#")
		v = strings.TrimSpace(v)
		switch strings.ToLower(strings.TrimSpace(k)) {
		case "user-agent":
			if len(agents) <= 10 {
				agents = append(agents, ProductToken(v))
			}
		case "allow", "disallow":
			if len(paths) <= 20 {
				p := strings.NewReplacer("*", "x", "$", "").Replace(v)
				if !strings.HasPrefix(p, "/") {
					p = "/" + p
				}
				paths = append(paths, p)
			}
		}
	}
	for _, p := range paths {
		if u, err := url.Parse(p); err == nil {
			urls = append(urls, u)
		}
	}
	return agents, urls
}

// addFuzzSeeds adds the robots.txt of every golden file and the smaller
// real-world corpus files.
func addFuzzSeeds(f *testing.F) {
	for _, s := range []string{
		"",
		"User-agent: *\nDisallow: /\n",
		"\xEF\xBB\xBFUser-agent: FooBot\r\nDisallow: /a*b$\r\nAllow: /a/index.html\r\n",
		"user-agent FooBot\ndisallow /x\nsitemap: https://example.com/s.xml\ncrawl-delay: 1.5\nclean-param: a&b /x\n",
		"User-agent: *\n\x00Disallow: /\rAllow: /テ\n\rDisallow: %aa\nDisallow: fish\n",
	} {
		f.Add([]byte(s))
	}
	files, _ := filepath.Glob(filepath.Join("testdata", "*.txtar"))
	for _, file := range files {
		robots, _ := goldenSections(f, file)
		f.Add(robots)
	}
	entries, err := os.ReadDir(corpusDir)
	if err != nil {
		return
	}
	for _, e := range entries {
		info, err := e.Info()
		if err != nil || !info.Mode().IsRegular() || info.Size() > 8<<10 {
			continue
		}
		if body, err := os.ReadFile(filepath.Join(corpusDir, e.Name())); err == nil {
			f.Add(body)
		}
	}
}

// hostFirst returns the URLs that url.Parse makes of the path-only URL
// string s, and of s with a host but no scheme in front: a relative
// reference ("example.com/a") and an opaque URL ("example.com:8080/a").
// Allowed must read the last two as the first (as
// Google's GetPathParamsQuery in robots.cc does). It returns none for an s
// that does not start with '/', or that url.Parse reads with a host
// ("//a/b"), or rejects.
func hostFirst(s string) []*url.URL {
	if !strings.HasPrefix(s, "/") || strings.HasPrefix(s, "//") {
		return nil
	}
	var urls []*url.URL
	for _, host := range []string{"", "example.com", "example.com:8080"} {
		u, err := url.Parse(host + s)
		if err != nil {
			return nil
		}
		urls = append(urls, u)
	}
	return urls
}

// FuzzParse checks the invariants every robots.txt must keep: no panic;
// /robots.txt is always allowed; CRLF line breaks and a leading BOM change
// nothing; decisions are deterministic; Explain agrees with Allowed; a URL
// without a scheme is read with its first component for the host; Lint never
// panics.
func FuzzParse(f *testing.F) {
	addFuzzSeeds(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		r := Parse(body)
		again := Parse(body)
		_ = Lint(body)
		_ = r.Sitemaps()
		_ = r.CleanParams()

		var crlf, bom *Robots
		if c := bytes.ReplaceAll(body, []byte("\n"), []byte("\r\n")); len(c) <= MaxSize &&
			!bytes.ContainsAny(body[:min(3, len(body))], "\n") {
			crlf = Parse(c)
		}
		if len(body)+3 <= MaxSize && len(skipBOM(body)) == len(body) {
			bom = Parse(append([]byte("\xEF\xBB\xBF"), body...))
		}

		robotsTxt := &url.URL{Path: "/robots.txt"}
		agents, urls := fuzzProbes(body)
		for _, agent := range agents {
			if !r.Allowed(agent, robotsTxt) {
				t.Errorf("Allowed(%q, %q) = false, want true", agent, "/robots.txt")
			}
			d1, ok1 := r.CrawlDelay(agent)
			if d2, ok2 := again.CrawlDelay(agent); d1 != d2 || ok1 != ok2 {
				t.Errorf("CrawlDelay(%q) = %v, %v, but %v, %v after parsing again", agent, d1, ok1, d2, ok2)
			}
			for _, u := range urls {
				got := r.Allowed(agent, u)
				if got2 := r.Allowed(agent, u); got2 != got {
					t.Errorf("Allowed(%q, %q) = %v, then %v", agent, u, got, got2)
				}
				if got2 := again.Allowed(agent, u); got2 != got {
					t.Errorf("Allowed(%q, %q) = %v, but %v after parsing again", agent, u, got, got2)
				}
				if d := r.Explain(agent, u); d.Allowed != got {
					t.Errorf("Allowed(%q, %q) = %v, but Explain says %s", agent, u, got, d)
				}
				if crlf != nil {
					if got2 := crlf.Allowed(agent, u); got2 != got {
						t.Errorf("Allowed(%q, %q) = %v with LF, %v with CRLF", agent, u, got, got2)
					}
				}
				if bom != nil {
					if got2 := bom.Allowed(agent, u); got2 != got {
						t.Errorf("Allowed(%q, %q) = %v, %v with a leading BOM", agent, u, got, got2)
					}
				}
				if u.Host != "" {
					continue
				}
				// u.String() is u's path escaped as url.URL.EscapedPath
				// escapes it, which may read differently from u.RawPath.
				if twins := hostFirst(u.String()); twins != nil {
					base := twins[0]
					want := r.Allowed(agent, base)
					for _, v := range twins[1:] {
						if got2 := r.Allowed(agent, v); got2 != want {
							t.Errorf("Allowed(%q, %q) = %v, but Allowed(%q, %q) = %v", agent, base, want, agent, v, got2)
						}
						if d := r.Explain(agent, v); d.Allowed != want {
							t.Errorf("Allowed(%q, %q) = %v, but Explain(%q, %q) says %s", agent, base, want, agent, v, d)
						}
					}
				}
			}
		}
	})
}

// refMatch is a naive reference for match: a memoised recursive glob where
// '*' matches any run of octets and a final '$' anchors the end.
func refMatch(pattern, target string) bool {
	end := strings.HasSuffix(pattern, "$")
	if end {
		pattern = pattern[:len(pattern)-1]
	}
	memo := make([]int8, (len(pattern)+1)*(len(target)+1)) // 0 unknown, 1 true, 2 false
	var rec func(i, j int) bool
	rec = func(i, j int) bool {
		k := i*(len(target)+1) + j
		if memo[k] != 0 {
			return memo[k] == 1
		}
		var ok bool
		switch {
		case i == len(pattern):
			ok = !end || j == len(target)
		case pattern[i] == '*':
			ok = rec(i+1, j) || (j < len(target) && rec(i, j+1))
		default:
			ok = j < len(target) && pattern[i] == target[j] && rec(i+1, j+1)
		}
		memo[k] = 2
		if ok {
			memo[k] = 1
		}
		return ok
	}
	return rec(0, 0)
}

// squeeze maps s onto a small alphabet so that random inputs hit '*', '$'
// and repeated segments often.
func squeeze(s, alphabet string) string {
	b := []byte(s)
	for i, c := range b {
		b[i] = alphabet[int(c)%len(alphabet)]
	}
	return string(b)
}

// FuzzMatch cross-checks the fast matcher against refMatch.
func FuzzMatch(f *testing.F) {
	for _, s := range [][2]string{
		{"/*.php$", "/a.php"}, {"/*ab*ba$", "/abba"}, {"/a$$", "/a$"}, {"*", ""},
		{"/fish*.php", "/fishheads/catfish.php?x"}, {"/*a*a*a*a*b", "/aaaaaaaaaaaa"}, {"$", ""},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pattern, target string) {
		if len(pattern) > 200 || len(target) > 400 {
			return
		}
		if got, want := match(pattern, target), refMatch(pattern, target); got != want {
			t.Errorf("match(%q, %q) = %v, want %v", pattern, target, got, want)
		}
		p, q := squeeze(pattern, "ab*$/"), squeeze(target, "ab$*/")
		if got, want := match(p, q), refMatch(p, q); got != want {
			t.Errorf("match(%q, %q) = %v, want %v", p, q, got, want)
		}
	})
}

// TestMatchReference runs the FuzzMatch cross-check on many random small
// inputs, so that it is exercised without -fuzz too.
func TestMatchReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(9309, 2022))
	gen := func(alphabet string, max int) string {
		b := make([]byte, rng.IntN(max+1))
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		return string(b)
	}
	for range 200000 {
		p, q := gen("ab*$/", 9), gen("ab$*/", 12)
		if got, want := match(p, q), refMatch(p, q); got != want {
			t.Fatalf("match(%q, %q) = %v, want %v", p, q, got, want)
		}
	}
}

// FuzzTarget checks targetOf on whatever url.Parse accepts: no panic; the
// target starts with '/', is normalised and summarised exactly; and the
// schemeless forms of a path-only URL string read as the string itself
// (as Google's GetPathParamsQuery in robots.cc does).
func FuzzTarget(f *testing.F) {
	for _, s := range []string{
		"", "/", "/a?b#c", "example.com/a;b#c", "a", "//a/b/c", "example.com:8080/a?q",
		"mailto:x", "http:a/b", "a;b/c", "/a%2fb%7e$*", "ex%41mple.com/%zz", "/p?",
		"/!00 00", // RawPath "/!00 00", though EscapedPath is "/%2100%2000"
	} {
		f.Add(s)
	}
	var buf [512]byte
	f.Fuzz(func(t *testing.T, s string) {
		u, err := url.Parse(s)
		if err != nil {
			return
		}
		target, set := targetOf(buf[:0], u)
		if target == "" || target[0] != '/' {
			t.Fatalf("targetOf(%q) = %q, want a target that starts with '/'", s, target)
		}
		if set != octetsOf(target) {
			t.Errorf("targetOf(%q) = %q, %#x, want the summary %#x", s, target, set, octetsOf(target))
		}
		if again := string(appendNormal(nil, target, &targetOctets)); again != target {
			t.Errorf("targetOf(%q) = %q, not normalised: %q", s, target, again)
		}
		if u.Host != "" {
			return
		}
		target = strings.Clone(target)
		for _, v := range hostFirst(s) {
			if got, _ := targetOf(buf[:0], v); got != target {
				t.Errorf("targetOf(%q) = %q, but targetOf(%q) = %q", v, got, s, target)
			}
		}
	})
}
