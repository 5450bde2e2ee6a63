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

// renamed is colly's robots.txt check and the name the copy gives it, so
// that the suite shows the Guard never finds colly's functions by name.
var renamed = [2]string{"checkRobots(", "checkRobotsRenamedByCollysuite("}

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

// envCheck runs in the copy, against a colly whose robots.txt check goes
// by another name (see renamed): with colly's check turned back on after
// the Guard was attached (as COLLY_IGNORE_ROBOTSTXT=false does to a Guard
// attached as an option of NewCollector), the Guard answers that check
// without sending it, and alone decides. It shows that the Guard does not
// find colly's check by the name of a function.
const envCheck = `package colly_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/gocolly/colly/v2"

	robotsmw "github.com/robotsmw/robotsmw/middleware"
)

func TestRobotsmwAnswersCollyCheck(t *testing.T) {
	var mu sync.Mutex
	hits := map[string]int{}
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits[r.URL.Path]++
		mu.Unlock()
		if r.URL.Path == "/robots.txt" {
			w.Write([]byte("User-agent: *\nDisallow: /private\n"))
			return
		}
		w.Write([]byte("<p>ok</p>"))
	}))
	defer s.Close()
	c := colly.NewCollector()
	// The hook attached a Guard, which turned colly's check off; on
	// again, as COLLY_IGNORE_ROBOTSTXT=false would.
	c.IgnoreRobotsTxt = false
	err := c.Visit(s.URL + "/private/a")
	if !errors.Is(err, robotsmw.ErrDisallowed) {
		t.Errorf("Visit(/private/a) = %v, want the Guard's ErrDisallowed", err)
	}
	if err := c.Visit(s.URL + "/ok"); err != nil {
		t.Errorf("Visit(/ok) = %v, want nil", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if hits["/robots.txt"] != 1 || hits["/private/a"] != 0 || hits["/ok"] != 1 {
		t.Errorf("server saw %v, want one robots.txt (the Guard's: colly's check answered without sending), /ok once, no /private", hits)
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
	// The colly this module requires: v2.3.0 in go.mod, another after a
	// go get (scripts/colly-latest.sh).
	colly := module(t, goBin, "github.com/gocolly/colly/v2")
	t.Logf("colly %s, from %s", colly.Version, colly.Dir)
	repo := module(t, goBin, "github.com/robotsmw/robotsmw").Dir
	xtime := module(t, goBin, "golang.org/x/time").Version
	touchSources(t, repo)
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(colly.Dir)); err != nil {
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
	if strings.Contains(src, renamed[0]) {
		src = strings.ReplaceAll(src, renamed[0], renamed[1])
	} else {
		t.Logf("colly.go has no %q: its robots.txt check goes by another name already", renamed[0])
	}
	write(t, filepath.Join(dir, "colly.go"), src)
	write(t, filepath.Join(dir, "zz_robotsmw_check_test.go"), envCheck)
	write(t, filepath.Join(dir, "zz_attachhook.go"), hook)
	write(t, filepath.Join(dir, "zz_attach_test.go"), attach)
	mod := read(t, filepath.Join(dir, "go.mod")) + "\nrequire github.com/robotsmw/robotsmw v0.0.0\nrequire golang.org/x/time " + xtime + "\nreplace github.com/robotsmw/robotsmw => " + repo + "\n"
	write(t, filepath.Join(dir, "go.mod"), mod)
	write(t, filepath.Join(dir, "go.sum"), read(t, filepath.Join(dir, "go.sum"))+read(t, filepath.Join(repo, "go.sum")))

	cmd := exec.Command(goBin, "test", "-race", "-count=1", "-skip", "^("+strings.Join(skipped, "|")+")$", ".", "./queue")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("colly %s's tests with the Guard attached failed: %v\n%s", colly.Version, err, out)
	}
	t.Logf("%s", out)
}

// A mod is a module of the build list, as go list -m reports it.
type mod struct{ Version, Dir string }

// module returns the module path of this module's build list.
func module(t *testing.T, goBin, path string) mod {
	t.Helper()
	out, err := exec.Command(goBin, "list", "-m", "-json", path).Output()
	if err != nil {
		t.Fatalf("go list -m %s: %v", path, err)
	}
	var m mod
	if err := json.Unmarshal(out, &m); err != nil || m.Dir == "" {
		t.Fatalf("go list -m %s: no directory in %s", path, bytes.TrimSpace(out))
	}
	return m
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
