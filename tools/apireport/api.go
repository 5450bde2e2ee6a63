package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/tools/go/packages"
)

// ModulePath is the import path every reported package starts with.
const ModulePath = "github.com/robotsmw/robotsmw"

// An API is the exported API of one package.
type API struct {
	Path     string   // import path
	Dir      string   // directory relative to the repository's root, "/"-separated
	Features []string // one line each, sorted: "pkg PATH, func F(int) error"
	Counts   Counts
}

// Reported says whether a package of the workspace is part of what users
// import: not internal, not a command, not an example, a benchmark or a test
// harness.
func Reported(path string) bool {
	rel := strings.TrimPrefix(strings.TrimPrefix(path, ModulePath), "/")
	for _, elem := range strings.Split(rel, "/") {
		switch elem {
		case "internal", "cmd", "examples", "bench", "tools", "testdata":
			return false
		}
	}
	return true
}

// Load type-checks the packages matching patterns in the workspace at root
// and returns the API of each reported one, sorted by import path.
func Load(root string, patterns ...string) ([]API, error) {
	cfg := &packages.Config{
		Mode: packages.NeedName | packages.NeedTypes | packages.NeedSyntax | packages.NeedTypesInfo | packages.NeedModule,
		Dir:  root,
		// The workspace's modules (robotsprom's too), also when this
		// command itself runs with GOWORK=off.
		Env: append(os.Environ(), "GOWORK="+filepath.Join(root, "go.work")),
	}
	pkgs, err := packages.Load(cfg, patterns...)
	if err != nil {
		return nil, fmt.Errorf("apireport: loading %s: %w", strings.Join(patterns, " "), err)
	}
	var apis []API
	var errs []string
	for _, p := range pkgs {
		for _, e := range p.Errors {
			errs = append(errs, e.Error())
		}
		if p.Name == "main" || !Reported(p.PkgPath) || p.Types == nil {
			continue
		}
		dir := strings.TrimPrefix(strings.TrimPrefix(p.PkgPath, ModulePath), "/")
		features, counts := Features(p.Types)
		apis = append(apis, API{Path: p.PkgPath, Dir: dir, Features: features, Counts: counts})
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("apireport: %d errors loading packages:\n%s", len(errs), strings.Join(errs, "\n"))
	}
	sort.Slice(apis, func(i, j int) bool { return apis[i].Path < apis[j].Path })
	return apis, nil
}
