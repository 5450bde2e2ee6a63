package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
	"golang.org/x/mod/zip"
)

// WriteProxy lays out a module proxy in dir, as GOPROXY=file://DIR reads
// it (https://go.dev/ref/mod#goproxy-protocol): for the module in each of
// moddirs, its version's .info, .mod and .zip under <module path>/@v/, and
// a list naming the version. The zip is made from the directory as it is,
// as zip.CreateFromDir makes it: nested modules, vendor directories and
// version control directories left out.
func WriteProxy(dir, version string, when time.Time, moddirs ...string) ([]string, error) {
	var paths []string
	for _, md := range moddirs {
		gomod, err := os.ReadFile(filepath.Join(md, "go.mod"))
		if err != nil {
			return nil, fmt.Errorf("releasecheck: %w", err)
		}
		path := modfile.ModulePath(gomod)
		if path == "" {
			return nil, fmt.Errorf("releasecheck: %s/go.mod has no module line", md)
		}
		mv := module.Version{Path: path, Version: version}
		if err := module.Check(path, version); err != nil {
			return nil, fmt.Errorf("releasecheck: %w", err)
		}
		esc, err := module.EscapePath(path)
		if err != nil {
			return nil, fmt.Errorf("releasecheck: %w", err)
		}
		at := filepath.Join(dir, filepath.FromSlash(esc), "@v")
		if err := os.MkdirAll(at, 0o755); err != nil {
			return nil, fmt.Errorf("releasecheck: %w", err)
		}
		info, err := json.Marshal(struct {
			Version string
			Time    time.Time
		}{version, when.UTC()})
		if err != nil {
			return nil, fmt.Errorf("releasecheck: %w", err)
		}
		files := map[string][]byte{
			"list":            []byte(version + "\n"),
			version + ".info": info,
			version + ".mod":  gomod,
		}
		for name, data := range files {
			if err := os.WriteFile(filepath.Join(at, name), data, 0o644); err != nil {
				return nil, fmt.Errorf("releasecheck: %w", err)
			}
		}
		if err := writeZip(filepath.Join(at, version+".zip"), mv, md); err != nil {
			return nil, err
		}
		paths = append(paths, path)
	}
	return paths, nil
}

// writeZip writes the module zip of m, made from dir, to file.
func writeZip(file string, m module.Version, dir string) (err error) {
	f, err := os.Create(file)
	if err != nil {
		return fmt.Errorf("releasecheck: %w", err)
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("releasecheck: %w", cerr)
		}
	}()
	if err := zip.CreateFromDir(f, m, dir); err != nil {
		return fmt.Errorf("releasecheck: zip of %s from %s: %w", m, dir, err)
	}
	return nil
}
