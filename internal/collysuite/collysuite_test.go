package collysuite

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// skipped are colly's tests that cannot pass with the Guard, by design.
var skipped = []string{
	// colly's own robots.txt check, which Attach turns off: the Guard
	// decides, with its own errors (which match colly.ErrRobotsTxtBlocked
	// with errors.Is), and a collector's IgnoreRobotsTxt does not lift it.
	// TestRobotsWhenDisallowed and ...WithQueryParameter compare the
	// error's text with colly's; TestIgnoreRobotsWhenDisallowed sets
	// IgnoreRobotsTxt and expects a disallowed page fetched.
	"TestRobotsWhenDisallowed",
	"TestRobotsWhenDisallowedWithQueryParameter",
	"TestIgnoreRobotsWhenDisallowed",
}

// hook replaces colly's NewCollector and Clone in the copy.
const hook = `package colly

// Added by robotsmw's internal/collysuite: AttachHook is called with every
// new collector (parent nil) and every clone.
var AttachHook func(parent, c *Collector)

func NewCollector(options ...CollectorOption) *Collector {
	c := newCollector(options...)
	if AttachHook != nil {
		AttachHook(nil, c)
	}
	return c
}

func (c *Collector) Clone() *Collector {
	n := c.clone()
	if AttachHook != nil {
		AttachHook(c, n)
	}
	return n
}
`

// attach sets the hook from an external test package of the copy, which
// may import robotsmw (itself importing the copy).
const attach = `package colly_test

import (
	"sync"

	"github.com/gocolly/colly/v2"
	"golang.org/x/time/rate"

	robotsmw "github.com/robotsmw/robotsmw/middleware"
)

func init() {
	var mu sync.Mutex
	guards := make(map[*colly.Collector]*robotsmw.Guard)
	colly.AttachHook = func(parent, c *colly.Collector) {
		mu.Lock()
		g := guards[parent]
		if g == nil {
			g = &robotsmw.Guard{Rate: rate.Inf}
		}
		guards[c] = g
		mu.Unlock()
		g.Attach(c)
	}
}
`

func TestCollySuiteWithGuard(t *testing.T) {
	if testing.Short() {
		t.Skip("runs colly's test suite: not in -short mode")
	}
	if raceEnabled {
		t.Skip("colly's suite runs once, in the test run without -race; the run itself uses -race")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to run colly's tests with")
	}
	colly := moduleDir(t, goBin, "github.com/gocolly/colly/v2")
	repo := moduleDir(t, goBin, "github.com/robotsmw/robotsmw")
	touchSources(t, repo)
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(colly)); err != nil {
		t.Fatalf("copy colly: %v", err)
	}
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil {
			os.Chmod(p, 0o755) // the module cache is read-only
		}
		return nil
	})
	src := read(t, filepath.Join(dir, "colly.go"))
	for _, r := range [][2]string{
		{"func NewCollector(options ...CollectorOption) *Collector {", "func newCollector(options ...CollectorOption) *Collector {"},
		{"func (c *Collector) Clone() *Collector {", "func (c *Collector) clone() *Collector {"},
	} {
		if !strings.Contains(src, r[0]) {
			t.Fatalf("colly.go has no %q: another colly version?", r[0])
		}
		src = strings.Replace(src, r[0], r[1], 1)
	}
	write(t, filepath.Join(dir, "colly.go"), src)
	write(t, filepath.Join(dir, "zz_attachhook.go"), hook)
	write(t, filepath.Join(dir, "zz_attach_test.go"), attach)
	mod := read(t, filepath.Join(dir, "go.mod")) + "\nrequire github.com/robotsmw/robotsmw v0.0.0\nrequire golang.org/x/time v0.14.0\nreplace github.com/robotsmw/robotsmw => " + repo + "\n"
	write(t, filepath.Join(dir, "go.mod"), mod)
	write(t, filepath.Join(dir, "go.sum"), read(t, filepath.Join(dir, "go.sum"))+read(t, filepath.Join(repo, "go.sum")))

	cmd := exec.Command(goBin, "test", "-race", "-count=1", "-skip", "^("+strings.Join(skipped, "|")+")$", ".", "./queue")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("colly's tests with the Guard attached failed: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}

func moduleDir(t *testing.T, goBin, path string) string {
	t.Helper()
	out, err := exec.Command(goBin, "list", "-m", "-json", path).Output()
	if err != nil {
		t.Fatalf("go list -m %s: %v", path, err)
	}
	var m struct{ Dir string }
	if err := json.Unmarshal(out, &m); err != nil || m.Dir == "" {
		t.Fatalf("go list -m %s: no directory in %s", path, bytes.TrimSpace(out))
	}
	return m.Dir
}

func read(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func write(t *testing.T, p, s string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// touchSources reads the module's Go files, so that go test's cache knows
// this test depends on them: the go command it runs reads them, not the
// test itself.
func touchSources(t *testing.T, repo string) {
	t.Helper()
	filepath.WalkDir(repo, func(p string, d os.DirEntry, err error) error {
		switch {
		case err != nil:
			return nil
		case d.IsDir() && p != repo && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "bench"):
			return filepath.SkipDir
		case !d.IsDir() && (strings.HasSuffix(p, ".go") || d.Name() == "go.mod" || d.Name() == "go.sum"):
			os.ReadFile(p)
		}
		return nil
	})
}
