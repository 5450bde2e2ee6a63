package policy

import (
	"bytes"
	"github.com/robotsmw/robotsmw/internal/sharedtest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// corpusDir holds real-world robots.txt files, kept outside the repository
// (internal/sharedtest says where they are looked for).
var corpusDir = sharedtest.Corpus("robots")

// corpusFiles returns the corpus files and their bodies, or skips the test
// when the corpus is absent.
func corpusFiles(t testing.TB) (names []string, bodies [][]byte) {
	entries, err := os.ReadDir(corpusDir)
	if err != nil {
		t.Skipf("corpus not available: %v", err)
	}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		body, err := os.ReadFile(filepath.Join(corpusDir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, e.Name())
		bodies = append(bodies, body)
	}
	if len(names) == 0 {
		t.Skip("corpus is empty")
	}
	return names, bodies
}

// TestCorpus parses every real-world file and checks that decisions are
// deterministic and that /robots.txt stays allowed.
func TestCorpus(t *testing.T) {
	names, bodies := corpusFiles(t)
	for i, name := range names {
		t.Run(name, func(t *testing.T) {
			body := bodies[i]
			r := Parse(body)
			again := Parse(body)
			agents, urls := fuzzProbes(body)
			agents = append(agents, "Googlebot", "bingbot", "Yandex")
			for _, agent := range agents {
				if !r.Allowed(agent, &url.URL{Path: "/robots.txt"}) {
					t.Errorf("Allowed(%q, %q) = false, want true", agent, "/robots.txt")
				}
				for _, u := range urls {
					got := r.Allowed(agent, u)
					if r.Allowed(agent, u) != got || again.Allowed(agent, u) != got {
						t.Errorf("Allowed(%q, %q) is not deterministic", agent, u)
					}
					if d := r.Explain(agent, u); d.Allowed != got {
						t.Errorf("Allowed(%q, %q) = %v, but Explain says %s", agent, u, got, d)
					}
				}
			}
		})
	}
}

// TestCorpusBigFileCut proves that the largest corpus file (853 KB) is cut
// at MaxSize (docs/robots-semantics.md#limits): a rule appended at its end,
// and every rule past the cut, has no effect, while the file still parses.
func TestCorpusBigFileCut(t *testing.T) {
	names, bodies := corpusFiles(t)
	big := 0
	for i := range bodies {
		if len(bodies[i]) > len(bodies[big]) {
			big = i
		}
	}
	body := bodies[big]
	if len(body) <= MaxSize {
		t.Skipf("largest corpus file %s has %d bytes, not more than MaxSize", names[big], len(body))
	}
	t.Logf("%s: %d bytes", names[big], len(body))
	r := Parse(body)
	cut := Parse(body[:MaxSize])
	tail := append(bytes.Clone(body), "\nUser-agent: *\nDisallow: /\nUser-agent: Googlebot\nDisallow: /\n"...)
	withTail := Parse(tail)

	// Probe with paths written both before and after the cut.
	agents, urls := fuzzProbes(body)
	_, late := fuzzProbes(body[MaxSize:])
	urls = append(urls, late...)
	urls = append(urls, &url.URL{Path: "/"}, &url.URL{Path: "/some/page.html"})
	agents = append(agents, "Googlebot", "bingbot", "SomeOtherBot")
	// The late probes come from Disallow lines past the cut: had they been
	// read, they would disallow their own paths.
	ignored := 0
	for _, u := range late {
		if r.Allowed("SomeOtherBot", u) {
			ignored++
		}
	}
	if len(late) > 0 && ignored == 0 {
		t.Errorf("every path of a rule past MaxSize is disallowed; want the rules past the cut ignored")
	}
	t.Logf("%d of %d paths written past the cut are allowed", ignored, len(late))
	for _, agent := range agents {
		for _, u := range urls {
			got := r.Allowed(agent, u)
			if c := cut.Allowed(agent, u); c != got {
				t.Errorf("Allowed(%q, %q) = %v on the whole file, %v on its first MaxSize bytes", agent, u, got, c)
			}
			if w := withTail.Allowed(agent, u); w != got {
				t.Errorf("Allowed(%q, %q) = %v, %v after appending \"Disallow: /\" past the cut", agent, u, got, w)
			}
		}
	}
}

// TestSizeCut builds a file whose second rule starts after 600 KiB of
// comments: it is ignored (docs/robots-semantics.md#limits). A rule that
// ends exactly at MaxSize still counts.
func TestSizeCut(t *testing.T) {
	head := "User-agent: *\nDisallow: /early\n"
	pad := strings.Repeat("# comment line that pads the file to past the limit\n", (600<<10)/52)
	body := head + pad + "Disallow: /late\n"
	if len(body) < 600<<10 {
		t.Fatalf("padding too short: %d bytes", len(body))
	}
	r := Parse([]byte(body))
	for _, c := range []struct {
		path string
		want bool
	}{{"/early", false}, {"/late", true}, {"/other", true}} {
		if got := r.Allowed("x", parseTestURL(t, c.path)); got != c.want {
			t.Errorf("MaxSize: Allowed(%q, %q) = %v, want %v", "x", c.path, got, c.want)
		}
	}

	// "Disallow: /edge" ends exactly at byte MaxSize: it is read whole.
	rule := "Disallow: /edge"
	fill := MaxSize - len(head) - len(rule) - 1
	body = head + strings.Repeat("#", fill) + "\n" + rule + "\nDisallow: /beyond\n"
	r = Parse([]byte(body))
	for _, c := range []struct {
		path string
		want bool
	}{{"/edge", false}, {"/edg", true}, {"/beyond", true}} {
		if got := r.Allowed("x", parseTestURL(t, c.path)); got != c.want {
			t.Errorf("MaxSize: Allowed(%q, %q) = %v, want %v", "x", c.path, got, c.want)
		}
	}
}
