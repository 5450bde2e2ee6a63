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

// SharedDir is where the shared reference material lives, relative to this
// module's directory.
const SharedDir = "../../shared"

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
