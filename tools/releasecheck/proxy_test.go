package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"golang.org/x/mod/module"
	"golang.org/x/mod/zip"
)

func TestWriteProxy(t *testing.T) {
	src := t.TempDir()
	files := map[string]string{
		"go.mod":          "module example.com/Lib\n\ngo 1.24.0\n",
		"lib.go":          "package lib\n",
		"sub/sub.go":      "package sub\n",
		"nested/go.mod":   "module example.com/Lib/nested\n",
		"nested/other.go": "package nested\n",
	}
	for name, text := range files {
		p := filepath.Join(src, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	proxy := t.TempDir()
	when := time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)
	paths, err := WriteProxy(proxy, "v0.1.0", when, src)
	if err != nil {
		t.Fatalf("WriteProxy: %v", err)
	}
	if !slices.Equal(paths, []string{"example.com/Lib"}) {
		t.Errorf("WriteProxy paths = %q, want [example.com/Lib]", paths)
	}
	at := filepath.Join(proxy, "example.com", "!lib", "@v") // the proxy's case encoding
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(at, name))
		if err != nil {
			t.Fatalf("WriteProxy wrote no %s: %v", name, err)
		}
		return string(b)
	}
	if got := read("list"); got != "v0.1.0\n" {
		t.Errorf("WriteProxy list = %q, want %q", got, "v0.1.0\n")
	}
	if got := read("v0.1.0.mod"); got != files["go.mod"] {
		t.Errorf("WriteProxy .mod = %q, want the go.mod", got)
	}
	var info struct {
		Version string
		Time    time.Time
	}
	if err := json.Unmarshal([]byte(read("v0.1.0.info")), &info); err != nil || info.Version != "v0.1.0" || !info.Time.Equal(when) {
		t.Errorf("WriteProxy .info = %+v (%v), want v0.1.0 at %v", info, err, when)
	}
	checked, err := zip.CheckZip(module.Version{Path: "example.com/Lib", Version: "v0.1.0"}, filepath.Join(at, "v0.1.0.zip"))
	if err != nil {
		t.Fatalf("WriteProxy zip: CheckZip: %v", err)
	}
	const dir = "example.com/Lib@v0.1.0/"                                // the zip's paths start with the module and version
	want := []string{dir + "go.mod", dir + "lib.go", dir + "sub/sub.go"} // not the nested module's files
	got := slices.Clone(checked.Valid)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("WriteProxy zip holds %q, want %q", got, want)
	}
}

func TestWriteProxyNoModuleLine(t *testing.T) {
	src := t.TempDir()
	if err := os.WriteFile(filepath.Join(src, "go.mod"), []byte("go 1.24.0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := WriteProxy(t.TempDir(), "v0.1.0", time.Now(), src); err == nil {
		t.Error("WriteProxy of a go.mod with no module line: nil error, want one")
	}
}
