package policy

import (
	"fmt"
	"math/rand/v2"
	"net/url"
	"strings"
	"testing"
)

// checkMatcher reports any target on which r.Matcher(agent) and
// r.Allowed(agent, ·) disagree.
func checkMatcher(t *testing.T, name string, r *Robots, agent string, targets []string) {
	t.Helper()
	m := r.Matcher(agent)
	for _, target := range targets {
		u, err := url.Parse(target)
		if err != nil {
			continue
		}
		if got, want := m.Allowed(u), r.Allowed(agent, u); got != want {
			t.Errorf("%s: Matcher(%q).Allowed(%q) = %v, Allowed = %v (inline %v)", name, agent, target, got, want, m.inline)
		}
	}
}

// targetsNear returns targets on either side of the patterns of r's
// rules: each pattern, shortened, lengthened, with a query, and in
// other cases.
func targetsNear(r *Robots) []string {
	targets := []string{"/", "/robots.txt", "/robots.txt?x", "/a", "/index.html", "/%7Ea", "/~a", "/a?b=c", "/%2f"}
	for _, g := range r.groups {
		g.once.Do(g.compile)
		for _, rl := range g.idx.rules {
			p := strings.TrimSuffix(strings.ReplaceAll(rl.raw, "*", "x"), "$")
			targets = append(targets, p, p+"x", p+"/", p+"?q=1", strings.ToUpper(p), p[:len(p)/2])
			if len(p) > 1 {
				targets = append(targets, p[:len(p)-1])
			}
		}
	}
	return targets
}

func TestMatcherAgreesWithAllowedOnCorpus(t *testing.T) {
	names, bodies := corpusFiles(t)
	inline := 0
	for i, name := range names {
		r := Parse(bodies[i])
		targets := targetsNear(r)
		agents := []string{"*", "robotsmw", "Googlebot", "bingbot"}
		for _, g := range r.groups {
			agents = append(agents, g.agent)
		}
		for _, agent := range agents {
			checkMatcher(t, name, r, agent, targets)
			if m := r.Matcher(agent); m.inline {
				inline++
			}
		}
	}
	if inline == 0 {
		t.Errorf("no corpus group was held inline")
	}
}

// TestMatcherAgreesWithAllowedOnSmallFiles cross-checks Matcher with
// Allowed on many random small files, whose groups are mostly held
// inline, and targets made of the same octets.
func TestMatcherAgreesWithAllowedOnSmallFiles(t *testing.T) {
	rng := rand.New(rand.NewPCG(9309, 7))
	gen := func(alphabet string, n int) string {
		b := make([]byte, 1+rng.IntN(n))
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		return string(b)
	}
	inline := 0
	for range 20000 {
		var body strings.Builder
		body.WriteString("User-agent: *\n")
		for range rng.IntN(6) {
			verb := "Disallow"
			if rng.IntN(2) == 0 {
				verb = "Allow"
			}
			fmt.Fprintf(&body, "%s: /%s\n", verb, gen("ab/%7Ex$*.?=", 7))
		}
		r := Parse([]byte(body.String()))
		if m := r.Matcher("robotsmw"); m.inline {
			inline++
		}
		targets := targetsNear(r)
		for range 8 {
			targets = append(targets, "/"+gen("ab/%7Ex~.?=", 9))
		}
		checkMatcher(t, body.String(), r, "robotsmw", targets)
	}
	if inline < 5000 {
		t.Errorf("%d of 20000 small files held inline, want most", inline)
	}
}

func TestMatcherInline(t *testing.T) {
	for _, tc := range []struct {
		body   string
		inline bool
	}{
		{"User-agent: *\nDisallow: /private/\n", true},
		{"User-agent: *\nDisallow: /a\nAllow: /a/b\nDisallow: /c\nAllow: /d\n", true},
		{"User-agent: *\nDisallow: /a\nAllow: /a/b\nDisallow: /c\nAllow: /d\nDisallow: /e\n", false},
		{"User-agent: *\nDisallow: /*.php\n", false},
		{"User-agent: *\nDisallow: /a$\n", false},
		{"User-agent: *\nAllow: /a/index.html\n", false}, // implies "/a/$"
		{"User-agent: *\nDisallow: /" + strings.Repeat("a", 60) + "\n", false},
	} {
		if got := Parse([]byte(tc.body)).Matcher("robotsmw").inline; got != tc.inline {
			t.Errorf("Parse(%q).Matcher: inline %v, want %v", tc.body, got, tc.inline)
		}
	}
	var zero Matcher
	if u, _ := url.Parse("/x"); !zero.Allowed(u) {
		t.Errorf("Matcher{}.Allowed(/x) = false, want true")
	}
}

// FuzzMatcher cross-checks Matcher with Allowed on any file, agent and
// URL.
func FuzzMatcher(f *testing.F) {
	f.Add("User-agent: *\nDisallow: /private/\nAllow: /private/ok\n", "robotsmw", "/private/x")
	f.Add("User-agent: a\nDisallow: /%7e\n", "A", "/~x?y")
	f.Add("User-agent: *\nDisallow: /a$\nDisallow: /*b\n", "x", "/ab")
	f.Fuzz(func(t *testing.T, body, agent, target string) {
		if len(body) > 4096 || len(target) > 1024 {
			return
		}
		u, err := url.Parse(target)
		if err != nil {
			return
		}
		r := Parse([]byte(body))
		m := r.Matcher(agent)
		if got, want := m.Allowed(u), r.Allowed(agent, u); got != want {
			t.Errorf("Matcher(%q).Allowed(%q) = %v, Allowed = %v", agent, target, got, want)
		}
	})
}
