package main

import (
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"slices"
	"testing"
)

const sample = `package sample

import "net/url"

// Exported and unexported declarations of every kind.
const (
	Max = 10
	StateA State = iota
	StateB
	hidden = 1
)

type State int

func (State) String() string { return "" }

var ErrX error

type Config struct {
	Name  string
	URL   *url.URL
	inner int
	*url.Userinfo
}

func (c *Config) Get(key string, n ...int) (string, error) { return "", nil }
func (c *Config) hidden() {}

type Pacer interface {
	Ask(u *url.URL) bool
}

type Alias = Config

func New(name string) *Config { return nil }
func helper() {}
`

func TestFeatures(t *testing.T) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "sample.go", sample, 0)
	if err != nil {
		t.Fatal(err)
	}
	conf := types.Config{Importer: importer.Default()}
	pkg, err := conf.Check("example.com/sample", fset, []*ast.File{f}, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, counts := Features(pkg)
	const p = "pkg example.com/sample, "
	want := []string{
		p + "const Max = 10",
		p + "const StateA State",
		p + "const StateB State",
		p + "func New(string) *Config",
		p + "method (*Config) Get(string, ...int) (string, error)",
		p + "method (State) String() string",
		p + "type Alias = Config",
		p + "type Config struct",
		p + "type Config struct, Name string",
		p + "type Config struct, URL *url.URL",
		p + "type Config struct, embedded *url.Userinfo",
		p + "type Pacer interface",
		p + "type Pacer interface, Ask(*url.URL) bool",
		p + "type State int",
		p + "var ErrX error",
	}
	if !slices.Equal(got, want) {
		t.Errorf("Features(sample):\ngot\n%q\nwant\n%q", got, want)
	}
	wantCounts := Counts{Types: 4, Funcs: 1, Methods: 3, Fields: 3, Consts: 3, Vars: 1}
	if counts != wantCounts {
		t.Errorf("Features(sample) counts = %+v, want %+v", counts, wantCounts)
	}
	if counts.Total() != 15 {
		t.Errorf("Counts.Total() = %d, want 15", counts.Total())
	}
}

func TestReported(t *testing.T) {
	for path, want := range map[string]bool{
		ModulePath + "/policy":                    true,
		ModulePath + "/robotsprom":                true,
		ModulePath + "/internal/promtext":         false,
		ModulePath + "/cmd/robotstxt":             false,
		ModulePath + "/examples/fleet":            false,
		ModulePath + "/bench/slowweb":             false,
		ModulePath + "/cmd/robotstxt/browsertest": false,
	} {
		if got := Reported(path); got != want {
			t.Errorf("Reported(%q) = %v, want %v", path, got, want)
		}
	}
}
