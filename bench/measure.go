package bench

import (
	"fmt"
	"strings"
	"testing"
)

// Set is the corpus and workload loaded once for all measurements.
type Set struct {
	Files  map[string][]byte
	Names  []string
	Bytes  int64
	Checks []Check
}

// Load reads the corpus and the workload from the shared directory.
func Load(shared string) (*Set, error) {
	files, err := Corpus(shared)
	if err != nil {
		return nil, err
	}
	checks, err := Workload(shared)
	if err != nil {
		return nil, err
	}
	s := &Set{Files: files, Names: Names(files), Checks: checks}
	for _, b := range files {
		s.Bytes += int64(len(b))
	}
	return s, nil
}

// Compiled parses every corpus file with e; files e rejects map to nil.
func (s *Set) Compiled(e Engine) map[string]any {
	m := make(map[string]any, len(s.Files))
	for name, body := range s.Files {
		m[name] = e.Parse(body)
	}
	return m
}

// Runnable returns the checks whose file every engine accepted, so all
// engines answer the same work.
func (s *Set) Runnable(compiled []map[string]any) []Check {
	var out []Check
outer:
	for _, c := range s.Checks {
		for _, m := range compiled {
			if m[c.File] == nil {
				continue outer
			}
		}
		out = append(out, c)
	}
	return out
}

// BenchParse parses the whole corpus once per iteration.
func (s *Set) BenchParse(b *testing.B, e Engine) {
	b.SetBytes(s.Bytes)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		for _, name := range s.Names {
			e.Parse(s.Files[name])
		}
	}
}

// Agents returns the distinct agents of the workload.
func (s *Set) Agents() []string {
	seen := map[string]bool{}
	var out []string
	for _, c := range s.Checks {
		if !seen[c.Agent] {
			seen[c.Agent] = true
			out = append(out, c.Agent)
		}
	}
	return out
}

// BenchParseReady is BenchParse for robotsmw with every group the workload's
// agents use compiled (see ParseReady).
func (s *Set) BenchParseReady(b *testing.B) {
	agents := s.Agents()
	b.SetBytes(s.Bytes)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		for _, name := range s.Names {
			ParseReady(s.Files[name], agents)
		}
	}
}

// BenchCheck answers one check per iteration, cycling through checks.
func (s *Set) BenchCheck(b *testing.B, e Engine, compiled map[string]any, checks []Check) {
	rs := make([]any, len(checks))
	for i := range checks {
		rs[i] = compiled[checks[i].File]
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		j := i % len(checks)
		e.Allowed(rs[j], &checks[j])
	}
}

// WorstCase is a robots.txt of 300 rules, each with 41 '*', and a 2 KB path
// that almost matches every rule: the case that makes a naive matcher
// quadratic (Google's takes ~0.1 s per check on it).
func WorstCase() (body []byte, path string) {
	var sb strings.Builder
	sb.WriteString("User-agent: *\n")
	for i := 0; i < 300; i++ {
		fmt.Fprintf(&sb, "Disallow: /%s%d\n", strings.Repeat("a*", 41), i)
	}
	return []byte(sb.String()), "/" + strings.Repeat("a", 2048)
}
