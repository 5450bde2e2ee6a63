package policy

import (
	"strings"
	"testing"
)

// naiveLookup is the specification index.lookup must agree with: try
// every rule; the highest priority wins, allow on a tie (RFC 9309 §2.2.2).
func naiveLookup(rules []rule, target string) (found, allow bool, prio int32) {
	for i := range rules {
		r := &rules[i]
		if !match(r.pattern, target) {
			continue
		}
		if !found || r.prio > prio || r.prio == prio && r.allow && !allow {
			found, allow, prio = true, r.allow, r.prio
		}
	}
	return found, allow, prio
}

// FuzzIndex checks the prefix index against naiveLookup. The input's lines
// are patterns (a leading '+' makes an Allow rule) and the last line is the
// target; patterns are kept to a small alphabet so that prefixes collide.
func FuzzIndex(f *testing.F) {
	for _, seed := range []string{
		"/a\n+/a/b\n/a/b/c*d$\n/a/b/c/d",
		"/\n+/$\n/",
		"/wp-admin/\n+/wp-admin/admin-ajax.php\n/wp-admin/admin-ajax.php",
		"/*.php$\n+/a\n/a/b.php",
		"/aaaaaaaaab\n/aaaaaaaaa\n+/aaaaaaaa*\n/aaaaaaaaac",
		"*/x\n+/a*\n/a/x",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in string) {
		lines := strings.Split(in, "\n")
		if len(lines) < 2 || len(lines) > 200 {
			return
		}
		target := string(appendNormal(nil, "/"+lines[len(lines)-1], &targetOctets))
		var rules []rule
		for i, l := range lines[:len(lines)-1] {
			allow := strings.HasPrefix(l, "+")
			raw := strings.TrimPrefix(l, "+")
			if raw == "" || raw[0] != '/' && raw[0] != '*' || len(raw) > maxLineLen {
				continue // Parse never yields these
			}
			pattern := compilePattern(raw)
			rules = append(rules, newRule(pattern, raw, len(pattern), pendingRule{line: int32(i + 1), allow: allow}))
		}
		wantFound, wantAllow, wantPrio := naiveLookup(rules, target)
		x := newIndex(append([]rule(nil), rules...))
		var got *rule
		if j := x.lookup(target, octetsOf(target)); j >= 0 {
			got = &x.rules[j]
			if x.allows(j) != got.allow {
				t.Fatalf("lookup(%q): allows(%d) = %v, rule %+v", target, j, x.allows(j), got)
			}
		}
		if (got != nil) != wantFound || got != nil && (got.allow != wantAllow || got.prio != wantPrio) {
			t.Fatalf("lookup(%q) = %+v; naive: found=%v allow=%v prio=%d\nrules: %q", target, got, wantFound, wantAllow, wantPrio, lines[:len(lines)-1])
		}
	})
}

// TestCorpusIndex checks every group of every corpus file against
// naiveLookup, on targets made from the group's own rules: each literal
// prefix, its neighbours in sort order, a prefix cut short, and each
// pattern with its wildcards filled in. Large real files exercise every
// way the index searches its keys, which small fuzz inputs seldom reach.
func TestCorpusIndex(t *testing.T) {
	names, bodies := corpusFiles(t)
	for fi, body := range bodies {
		r := Parse(body)
		for _, g := range r.groups {
			g.once.Do(g.compile)
			x := &g.idx
			rules := x.rules
			step := max(1, len(rules)*len(rules)/2_000_000) // bounds the naive work per group
			for ri := 0; ri < len(rules); ri += step {
				p := rules[ri].pattern
				lp := p[:rules[ri].plen]
				var probes []string
				probes = append(probes, lp, lp+"x/y.html", strings.NewReplacer("*", "abc", "$", "").Replace(p))
				if n := len(lp); n > 1 {
					probes = append(probes, lp[:n-1], lp[:n-1]+string(lp[n-1]+1), lp[:n-1]+string(lp[n-1]-1)+"zz")
				}
				for _, s := range probes {
					if s == "" || s[0] != '/' {
						s = "/" + s
					}
					target := string(appendNormal(nil, s, &targetOctets))
					wantFound, wantAllow, wantPrio := naiveLookup(rules, target)
					j := x.lookup(target, octetsOf(target))
					if (j >= 0) != wantFound || j >= 0 && (rules[j].allow != wantAllow || rules[j].prio != wantPrio) {
						t.Fatalf("%s group %q: lookup(%q) = %d, want found %v allow %v prio %d", names[fi], g.agent, target, j, wantFound, wantAllow, wantPrio)
					}
				}
			}
		}
	}
}

// TestSimplifyRest checks the forms a pattern's wildcard part is reduced
// to; FuzzIndex checks that matching is unchanged by them.
func TestSimplifyRest(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", ""},
		{"$", "$"},
		{"*", ""},
		{"*$", ""},
		{"**", ""},
		{"*?*", "*?"},
		{"*?**$", "*?"},
		{"*.pdf$", "*.pdf$"},
		{"**a***b*", "*a*b"},
		{"*a**b$", "*a*b$"},
	} {
		if got := simplifyRest(c.in); got != c.want {
			t.Errorf("simplifyRest(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
