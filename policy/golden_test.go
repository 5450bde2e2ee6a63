package policy

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A txtarSection is one "-- name --" file of a txtar archive.
type txtarSection struct {
	name string
	data []byte
}

// readTxtar splits a txtar archive (the format of golang.org/x/tools/txtar,
// which this module may not depend on) into its leading comment and its
// sections. A section starts with a line "-- name --" and runs to the next
// such line or the end of the archive.
func readTxtar(data []byte) (comment []byte, sections []txtarSection) {
	name, start := "", 0
	for off := 0; off <= len(data); {
		end := bytes.IndexByte(data[off:], '\n')
		next := len(data) + 1
		if end >= 0 {
			end += off
			next = end + 1
		} else {
			end = len(data)
		}
		line := data[off:end]
		if n, ok := txtarMarker(line); ok {
			if name == "" && sections == nil {
				comment = data[:off]
			} else {
				sections = append(sections, txtarSection{name, data[start:off]})
			}
			name, start = n, min(next, len(data))
		}
		off = next
	}
	if name == "" && sections == nil {
		return data, nil
	}
	return comment, append(sections, txtarSection{name, data[start:]})
}

func txtarMarker(line []byte) (string, bool) {
	s := string(line)
	if !strings.HasPrefix(s, "-- ") || !strings.HasSuffix(s, " --") || len(s) < 7 {
		return "", false
	}
	return strings.TrimSpace(s[3 : len(s)-3]), true
}

func TestReadTxtar(t *testing.T) {
	comment, sections := readTxtar([]byte("note\n-- a --\nx\n-- b --\n-- c --\ny\nz"))
	var got []string
	for _, s := range sections {
		got = append(got, s.name+"="+string(s.data))
	}
	if string(comment) != "note\n" || strings.Join(got, "|") != "a=x\n|b=|c=y\nz" {
		t.Errorf("readTxtar = %q, %q; want %q, %q", comment, got, "note\n", "a=x\n|b=|c=y\nz")
	}
}

// goldenFiles returns the testdata/*.txtar archives.
func goldenFiles(t testing.TB) []string {
	files, err := filepath.Glob(filepath.Join("testdata", "*.txtar"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata/*.txtar files: %v", err)
	}
	return files
}

// goldenRobots returns the robots.txt section of a golden archive.
func goldenSections(t testing.TB, file string) (robots, want []byte) {
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	_, sections := readTxtar(data)
	found := 0
	for _, s := range sections {
		switch s.name {
		case "robots.txt":
			robots = s.data
			found++
		case "want":
			want = s.data
			found++
		default:
			t.Errorf("%s: unexpected section %q", file, s.name)
		}
	}
	if found != 2 {
		t.Fatalf("%s: want sections \"robots.txt\" and \"want\"", file)
	}
	return robots, want
}

// TestGolden runs testdata/*.txtar: each has a "robots.txt" section and a
// "want" section of lines "agent URL allowed|disallowed" (agent "-" is the
// empty agent; blank lines and lines starting with '#' are skipped).
func TestGolden(t *testing.T) {
	for _, file := range goldenFiles(t) {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			robots, want := goldenSections(t, file)
			r := Parse(robots)
			n := 0
			for i, line := range strings.Split(string(want), "\n") {
				line = strings.TrimSpace(line)
				if line == "" || line[0] == '#' {
					continue
				}
				f := strings.Fields(line)
				if len(f) != 3 || (f[2] != "allowed" && f[2] != "disallowed") {
					t.Errorf("%s: want line %d: %q is not \"agent URL allowed|disallowed\"", file, i+1, line)
					continue
				}
				agent := f[0]
				if agent == "-" {
					agent = ""
				}
				u := parseTestURL(t, f[1])
				wantAllowed := f[2] == "allowed"
				if got := r.Allowed(agent, u); got != wantAllowed {
					d := r.Explain(agent, u)
					t.Errorf("want line %d: Allowed(%q, %q) = %v, want %v (%s)", i+1, agent, f[1], got, wantAllowed, d)
				}
				n++
			}
			if n == 0 {
				t.Errorf("%s: no want lines", file)
			}
		})
	}
}
