// Command compare measures robotsmw against its peers on the shared corpus
// and workload in one run, and prints the table the README shows.
//
//	cd bench && go run ./compare [-shared DIR] [-rounds N]
//
// The shared reference material (corpus/ and bench/robots-workload.tsv) is
// found as -shared, $ROBOTSMW_SHARED, or a shared/ directory next to the
// working directory or one of its parents. Without it (a clone of the
// repository alone) the engines are measured on a generated corpus
// (bench.Synthetic), and the output says so.
package main

import (
	"flag"
	"fmt"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/robotsmw/robotsmw/bench"
)

func main() {
	shared := flag.String("shared", "", "directory holding corpus/ and bench/ (default: $"+bench.SharedEnv+", or a shared/ directory next to this one or a parent)")
	rounds := flag.Int("rounds", 5, "measurement rounds; each engine keeps its best")
	flag.Parse()
	var s *bench.Set
	dir, err := bench.FindShared(*shared)
	switch {
	case err != nil && *shared != "":
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	case err != nil:
		// A clone of the repository alone: measure on a generated corpus.
		fmt.Printf("no shared reference material found (%v)\nmeasuring on a generated corpus instead: its numbers compare the engines, not the real corpus's\n\n", err)
		s = bench.Synthetic(260, 1)
	default:
		if s, err = bench.Load(dir); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	compiled := make([]map[string]any, len(bench.Engines))
	for i, e := range bench.Engines {
		compiled[i] = s.Compiled(e)
	}
	checks := s.Runnable(compiled)
	body, path := bench.WorstCase()
	worst := bench.Check{Agent: "ExampleBot", URL: &url.URL{Path: path}, Path: path}

	// The engines take turns for *rounds* rounds and each keeps its best
	// time, so that a burst of load on the machine during one engine's turn
	// does not decide the comparison.
	type result struct{ parse, check, worst testing.BenchmarkResult }
	res := make([]result, len(bench.Engines))
	var ready testing.BenchmarkResult // robotsmw: parse + first check per agent
	best := func(old *testing.BenchmarkResult, f func(*testing.B)) {
		if r := testing.Benchmark(f); old.N == 0 || r.NsPerOp() < old.NsPerOp() {
			*old = r
		}
	}
	for round := 0; round < *rounds; round++ {
		best(&ready, s.BenchParseReady)
		for i, e := range bench.Engines {
			best(&res[i].parse, func(b *testing.B) { s.BenchParse(b, e) })
			best(&res[i].check, func(b *testing.B) { s.BenchCheck(b, e, compiled[i], checks) })
			r := e.Parse(body)
			best(&res[i].worst, func(b *testing.B) {
				b.ReportAllocs()
				for j := 0; j < b.N; j++ {
					e.Allowed(r, &worst)
				}
			})
		}
	}

	mbps := func(r testing.BenchmarkResult) float64 {
		return float64(s.Bytes) * float64(r.N) / r.T.Seconds() / 1e6
	}
	perSec := func(r testing.BenchmarkResult) float64 { return float64(r.N) / r.T.Seconds() }
	fmt.Printf("corpus: %d files, %.1f MB; workload: %d checks (%d on files every engine accepts); best of %d rounds\n\n",
		len(s.Files), float64(s.Bytes)/1e6, len(s.Checks), len(checks), *rounds)
	fmt.Println("| engine | parse MB/s | checks/s | allocs/check | worst case per check |")
	fmt.Println("|---|---:|---:|---:|---:|")
	for i, e := range bench.Engines {
		fmt.Printf("| %s | %.1f | %.0f | %d | %v |\n", e.Name, mbps(res[i].parse), perSec(res[i].check),
			res[i].check.AllocsPerOp(), time.Duration(res[i].worst.NsPerOp()))
	}
	fmt.Printf("\nrobotsmw parse + first check per agent (builds the groups' lookup indexes): %.1f MB/s\n\n", mbps(ready))
	for i := 1; i < len(bench.Engines); i++ {
		fmt.Printf("robotsmw vs %s: parse %.1f× (%.1f× with first checks), checks %.1f×, worst case %.0f×\n", bench.Engines[i].Name,
			mbps(res[0].parse)/mbps(res[i].parse), mbps(ready)/mbps(res[i].parse), perSec(res[0].check)/perSec(res[i].check),
			float64(res[i].worst.NsPerOp())/float64(res[0].worst.NsPerOp()))
	}
	fmt.Println()
	for i := 1; i < len(bench.Engines); i++ {
		differ := 0
		for _, c := range checks {
			if bench.Engines[0].Allowed(compiled[0][c.File], &c) != bench.Engines[i].Allowed(compiled[i][c.File], &c) {
				differ++
			}
		}
		fmt.Printf("verdicts that differ from %s: %d of %d\n", bench.Engines[i].Name, differ, len(checks))
	}
}
