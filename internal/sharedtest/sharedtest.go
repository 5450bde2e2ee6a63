// Package sharedtest finds the shared reference material (the corpus of
// real robots.txt files and sitemaps) for the tests and benchmarks of this
// module: $ROBOTSMW_SHARED if it is set, else the first directory named
// "shared" found next to the working directory or one of its parents (CI
// checks the repository out beside it).
package sharedtest

import (
	"os"
	"path/filepath"
)

// Env names the environment variable that points at the shared directory.
const Env = "ROBOTSMW_SHARED"

// Corpus returns the directory of the corpus of kind ("robots" or
// "sitemaps"), or "" if none is found.
func Corpus(kind string) string {
	if d := os.Getenv(Env); d != "" {
		return dirOrEmpty(filepath.Join(d, "corpus", kind))
	}
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	for {
		if c := dirOrEmpty(filepath.Join(dir, "shared", "corpus", kind)); c != "" {
			return c
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// Missing is the skip message of a test that needs the corpus of kind.
func Missing(kind string) string {
	return "the shared corpus/" + kind + " was not found: set " + Env + " to the shared directory, or check the repository out next to it"
}

func dirOrEmpty(d string) string {
	if fi, err := os.Stat(d); err == nil && fi.IsDir() {
		return d
	}
	return ""
}
