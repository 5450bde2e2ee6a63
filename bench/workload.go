package bench

import (
	"bufio"
	"bytes"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// SharedEnv names the environment variable that may point at the shared
// reference material (the directory holding corpus/ and bench/).
const SharedEnv = "ROBOTSMW_SHARED"

// FindShared returns the directory of the shared reference material: dir
// if it is not empty, else $ROBOTSMW_SHARED, else the first directory named
// "shared" holding corpus/robots found next to the working directory or one
// of its parents (a clone of the repository next to shared/, run from the
// repository or from bench/). The error says where it looked and how to
// point it there.
func FindShared(dir string) (string, error) {
	ok := func(d string) bool {
		fi, err := os.Stat(filepath.Join(d, "corpus", "robots"))
		return err == nil && fi.IsDir()
	}
	if dir == "" {
		dir = os.Getenv(SharedEnv)
	}
	if dir != "" {
		if !ok(dir) {
			return "", fmt.Errorf("bench: %s has no corpus/robots directory; point -shared or $%s at the shared reference material", dir, SharedEnv)
		}
		return dir, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("bench: %w", err)
	}
	var looked []string
	for d := wd; ; d = filepath.Dir(d) {
		for _, c := range []string{filepath.Join(d, "shared"), d} {
			if ok(c) {
				return c, nil
			}
		}
		looked = append(looked, filepath.Join(d, "shared"))
		if filepath.Dir(d) == d {
			break
		}
	}
	return "", fmt.Errorf("bench: no shared reference material (a shared/ directory with corpus/robots) in %s; pass -shared DIR or set $%s",
		strings.Join(looked, ", "), SharedEnv)
}

// A Check is one line of the standard matching workload: which corpus file,
// which agent, which URL.
type Check struct {
	File  string
	Agent string
	URL   *url.URL
	// Path is the URL's path and query as colly hands them to its robots
	// engine (path + "?" + raw query).
	Path string
}

// Corpus returns the real robots.txt files by name.
func Corpus(shared string) (map[string][]byte, error) {
	dir := filepath.Join(shared, "corpus", "robots")
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("bench: reading corpus: %w", err)
	}
	files := make(map[string][]byte, len(ents))
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, fmt.Errorf("bench: %w", err)
		}
		files[e.Name()] = b
	}
	return files, nil
}

// Names returns the keys of files in sorted order.
func Names(files map[string][]byte) []string {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Workload reads bench/robots-workload.tsv (file, agent, URL per line).
func Workload(shared string) ([]Check, error) {
	name := filepath.Join(shared, "bench", "robots-workload.tsv")
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("bench: reading workload: %w", err)
	}
	var checks []Check
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		f := strings.Split(sc.Text(), "\t")
		if len(f) != 3 {
			return nil, fmt.Errorf("bench: %s:%d: want 3 tab-separated fields, got %d", name, n, len(f))
		}
		u, err := url.Parse(f[2])
		if err != nil {
			return nil, fmt.Errorf("bench: %s:%d: %w", name, n, err)
		}
		p := u.EscapedPath()
		if u.RawQuery != "" || u.ForceQuery { // "/x?" keeps its '?'
			p += "?" + u.RawQuery
		}
		checks = append(checks, Check{File: f[0], Agent: f[1], URL: u, Path: p})
	}
	return checks, sc.Err()
}
