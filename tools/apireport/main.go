// Command apireport writes the exported API of each of the repository's
// library packages to api/<package>.txt, one feature a line, sorted, as the
// Go project's api/ directory does, so that a change to the API shows as a
// diff in review. With -count it prints how many exported identifiers each
// package has instead.
//
// Run it from the repository's root through scripts/api, which also checks
// in CI that the files are up to date:
//
//	scripts/api          # rewrite api/*.txt
//	scripts/api -count   # exported identifiers per package
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

func main() {
	root := flag.String("root", ".", "the repository's root `dir` (go.work's)")
	count := flag.Bool("count", false, "print the number of exported identifiers per package instead of writing api/")
	flag.Parse()
	if err := run(*root, *count, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(root string, count bool, out io.Writer) error {
	root, err := filepath.Abs(root)
	if err != nil {
		return fmt.Errorf("apireport: %w", err)
	}
	apis, err := Load(root, ModulePath+"/...")
	if err != nil {
		return err
	}
	if count {
		return WriteCounts(out, apis)
	}
	return WriteFiles(filepath.Join(root, "api"), apis)
}

// WriteFiles replaces the files of dir with one file per package,
// <name>.txt, name being the package's directory with "/" as "-".
func WriteFiles(dir string, apis []API) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("apireport: %w", err)
	}
	old, err := filepath.Glob(filepath.Join(dir, "*.txt"))
	if err != nil {
		return fmt.Errorf("apireport: %w", err)
	}
	for _, f := range old {
		if err := os.Remove(f); err != nil {
			return fmt.Errorf("apireport: %w", err)
		}
	}
	for _, a := range apis {
		name := strings.ReplaceAll(a.Dir, "/", "-") + ".txt"
		text := strings.Join(a.Features, "\n") + "\n"
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			return fmt.Errorf("apireport: %w", err)
		}
	}
	return nil
}
