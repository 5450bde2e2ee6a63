package main

import (
	"bytes"
	"context"
	"flag"
	"github.com/robotsmw/robotsmw/internal/sharedtest"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/corpus-lint.golden")

// TestLintCorpusGolden lints the 261 real robots.txt files of the corpus in
// one run and compares the output with testdata/corpus-lint.golden, which
// was reviewed by hand: every error there is a line crawlers ignore or
// misread, every warning a likely mistake. Run with -update after a
// change, and review the diff.
func TestLintCorpusGolden(t *testing.T) {
	dir := sharedtest.Corpus("robots") // next to the checkout, or $ROBOTSMW_SHARED
	if dir == "" {
		t.Skip(sharedtest.Missing("robots"))
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"lint"}
	for _, e := range entries {
		args = append(args, e.Name())
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	golden, err := filepath.Abs(filepath.Join("testdata", "corpus-lint.golden"))
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(abs) // file names in the output without the directory
	var out, errOut bytes.Buffer
	code := run(context.Background(), args, strings.NewReader(""), &out, &errOut, http.DefaultClient)
	got := out.String() + "-- stderr --\n" + errOut.String()
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -run TestLintCorpusGolden -update)", err)
	}
	if got != string(want) {
		gl, wl := strings.Split(got, "\n"), strings.Split(string(want), "\n")
		for i := 0; i < len(gl) && i < len(wl); i++ {
			if gl[i] != wl[i] {
				t.Fatalf("lint of the corpus differs from %s at line %d:\n got %q\nwant %q\n(run with -update and review the diff)", golden, i+1, gl[i], wl[i])
			}
		}
		t.Fatalf("lint of the corpus: %d lines, %s has %d (run with -update and review the diff)", len(gl), golden, len(wl))
	}
	if code != exitFail {
		t.Errorf("lint of the corpus: exit %d, want %d (some files have errors)", code, exitFail)
	}
}
