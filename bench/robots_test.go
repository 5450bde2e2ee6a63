package bench

import (
	"net/url"
	"sync"
	"testing"
)

var (
	loadOnce sync.Once
	set      *Set
	loadErr  error
)

func load(tb testing.TB) *Set {
	tb.Helper()
	loadOnce.Do(func() {
		var dir string
		if dir, loadErr = FindShared(""); loadErr == nil {
			set, loadErr = Load(dir)
		}
	})
	if loadErr != nil {
		tb.Skipf("shared corpus not available: %v", loadErr)
	}
	return set
}

// BenchmarkParse parses the 261-file corpus per iteration (MB/s is parse speed).
func BenchmarkParse(b *testing.B) {
	s := load(b)
	for _, e := range Engines {
		b.Run(e.Name, func(b *testing.B) { s.BenchParse(b, e) })
	}
}

// BenchmarkCheck answers one workload check per iteration: URL pre-parsed,
// group looked up on every check.
func BenchmarkCheck(b *testing.B) {
	s := load(b)
	compiled := make([]map[string]any, len(Engines))
	for i, e := range Engines {
		compiled[i] = s.Compiled(e)
	}
	checks := s.Runnable(compiled)
	for i, e := range Engines {
		b.Run(e.Name, func(b *testing.B) { s.BenchCheck(b, e, compiled[i], checks) })
	}
}

// BenchmarkWorstCase is one check against 300 rules of 41 '*' each.
func BenchmarkWorstCase(b *testing.B) {
	body, path := WorstCase()
	c := Check{Agent: "ExampleBot", URL: &url.URL{Path: path}, Path: path}
	for _, e := range Engines {
		r := e.Parse(body)
		b.Run(e.Name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				e.Allowed(r, &c)
			}
		})
	}
}

// TestEnginesAgreeOnWorstCase keeps the worst-case benchmark honest: both
// engines must decide it. No rule matches (each ends in a digit), so every
// rule is tried in full and the URL is allowed.
func TestEnginesAgreeOnWorstCase(t *testing.T) {
	body, path := WorstCase()
	c := Check{Agent: "ExampleBot", URL: &url.URL{Path: path}, Path: path}
	for _, e := range Engines {
		if got := e.Allowed(e.Parse(body), &c); !got {
			t.Errorf("%s: Allowed(worst case) = false, want true", e.Name)
		}
	}
}
