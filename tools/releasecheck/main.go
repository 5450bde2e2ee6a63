// Command releasecheck checks that the repository's modules work for a user
// of a tagged release, outside this checkout: it lays out a file-based
// module proxy with the library and robotsprom at the release's version,
// zipped from the checkout as the module proxy would serve them, then
// builds a throwaway module in a temporary directory that requires
// robotsprom at that version (resolved through that proxy, third-party
// modules through the machine's own GOPROXY; no go.work, no replace),
// runs it and checks the metrics it serves.
//
//	scripts/release-check
package main

import (
	"bytes"
	_ "embed"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

//go:embed testdata/user/main.go
var userMain []byte

// wantMetrics are lines the user's program must print from its scrape:
// its crawl fetched one page and was refused one by robots.txt.
var wantMetrics = []string{
	"robotsmw_pages_fetched_total 1",
	`robotsmw_final_outcomes_total{outcome="blocked"} 1`,
}

func main() {
	root := flag.String("root", ".", "the repository's root `dir`")
	version := flag.String("version", "v0.1.0", "the `version` the release will carry")
	keep := flag.Bool("keep", false, "keep the temporary directory and say where it is")
	flag.Parse()
	if err := run(*root, *version, *keep); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(root, version string, keep bool) error {
	root, err := filepath.Abs(root)
	if err != nil {
		return fmt.Errorf("releasecheck: %w", err)
	}
	tmp, err := os.MkdirTemp("", "robotsmw-releasecheck-")
	if err != nil {
		return fmt.Errorf("releasecheck: %w", err)
	}
	modcache := filepath.Join(tmp, "modcache")
	defer func() {
		if keep {
			fmt.Println("releasecheck: kept", tmp)
			return
		}
		// The module cache's files are read-only; go clean removes them.
		clean := exec.Command("go", "clean", "-modcache")
		clean.Env = append(os.Environ(), "GOMODCACHE="+modcache, "GOFLAGS=")
		clean.Run()
		os.RemoveAll(tmp)
	}()

	proxy := filepath.Join(tmp, "proxy")
	paths, err := WriteProxy(proxy, version, time.Now(), root, filepath.Join(root, "robotsprom"))
	if err != nil {
		return err
	}
	fmt.Printf("releasecheck: proxy of %s at %s\n", strings.Join(paths, ", "), version)

	// Third-party modules: first the machine's module cache, read as a
	// proxy (its cache/download directory has the proxy's layout), then
	// the machine's GOPROXY. A module cache of its own keeps the check
	// from reading an earlier run's zips of the same version.
	machineProxy, err := goEnv("GOPROXY")
	if err != nil {
		return err
	}
	machineCache, err := goEnv("GOMODCACHE")
	if err != nil {
		return err
	}
	goproxy := "file://" + filepath.ToSlash(proxy) + ",file://" + filepath.ToSlash(filepath.Join(machineCache, "cache", "download"))
	if machineProxy != "" && machineProxy != "off" {
		goproxy += "," + machineProxy
	}
	env := append(os.Environ(),
		"GOWORK=off",
		"GOFLAGS=-mod=mod",
		"GOPROXY="+goproxy,
		"GONOSUMDB="+paths[0], // the release is not in the checksum database yet
		"GOMODCACHE="+modcache,
	)

	user := filepath.Join(tmp, "user")
	if err := os.MkdirAll(user, 0o755); err != nil {
		return fmt.Errorf("releasecheck: %w", err)
	}
	gomod := "module example.com/user\n\ngo 1.24.0\n"
	if err := os.WriteFile(filepath.Join(user, "go.mod"), []byte(gomod), 0o644); err != nil {
		return fmt.Errorf("releasecheck: %w", err)
	}
	if err := os.WriteFile(filepath.Join(user, "main.go"), userMain, 0o644); err != nil {
		return fmt.Errorf("releasecheck: %w", err)
	}
	steps := [][]string{
		{"go", "get", paths[1] + "@" + version},
		{"go", "mod", "tidy"},
		{"go", "list", "-m", paths[0], paths[1]},
		{"go", "build", "-o", "user", "."},
	}
	for _, s := range steps {
		if _, err := command(user, env, s...); err != nil {
			return err
		}
	}
	out, err := command(user, env, "./user")
	if err != nil {
		return err
	}
	for _, want := range wantMetrics {
		if !bytes.Contains(out, []byte("\n"+want+"\n")) {
			return fmt.Errorf("releasecheck: the user's scrape has no line %q", want)
		}
	}
	fmt.Printf("releasecheck: a module outside the checkout built against %s %s and served its metrics\n", paths[1], version)
	return nil
}

// command runs name in dir with env, echoing the command and its output.
func command(dir string, env []string, args ...string) ([]byte, error) {
	fmt.Println("$", strings.Join(args, " "))
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = dir
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	os.Stdout.Write(out)
	if err != nil {
		return out, fmt.Errorf("releasecheck: %s in %s: %w", strings.Join(args, " "), dir, err)
	}
	return out, nil
}

// goEnv returns the value of a go env variable as the machine has it.
func goEnv(name string) (string, error) {
	out, err := exec.Command("go", "env", name).Output()
	if err != nil {
		return "", fmt.Errorf("releasecheck: go env %s: %w", name, err)
	}
	return strings.TrimSpace(string(out)), nil
}
