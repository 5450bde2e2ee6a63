package main

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// runBinaryEnv runs the built command with the proxy settings of the
// environment replaced by env ("NAME=value"), and returns its exit status,
// standard output and standard error.
func runBinaryEnv(t *testing.T, env []string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(binary(t), args...)
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch strings.ToUpper(name) {
		case "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY", "REQUEST_METHOD":
			continue
		}
		cmd.Env = append(cmd.Env, kv)
	}
	cmd.Env = append(cmd.Env, env...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("running %q: %v", args, err)
	}
	return cmd.ProcessState.ExitCode(), out.String(), errOut.String()
}

// The commands honour HTTP_PROXY: the site's robots.txt and sitemaps come
// through the proxy, nothing goes direct, and a Sitemap line naming a
// private address is refused before the proxy is asked for it.
//
// The site is named by 0.0.0.0, which a connection reaches as this
// machine, and which the proxy rules (unlike "localhost" and loopback
// addresses, never proxied) send through the proxy: had the command gone
// direct, it would have reached the loopback site below, and nothing else.
func TestBinaryHonoursHTTPProxy(t *testing.T) {
	var direct atomic.Int64
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		direct.Add(1)
		fmt.Fprint(w, "User-agent: *\nAllow: /\n")
	}))
	defer site.Close()
	origin := strings.Replace(site.URL, "127.0.0.1", "0.0.0.0", 1)
	var mu sync.Mutex // guards seen
	var seen []string
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Method+" "+r.RequestURI)
		mu.Unlock()
		switch r.URL.Path {
		case "/robots.txt":
			fmt.Fprintf(w, "User-agent: *\nDisallow: /private\nSitemap: http://10.0.0.1/s.txt\nSitemap: %s/own.txt\n", origin)
		case "/own.txt":
			fmt.Fprintf(w, "%s/page\n", origin)
		default:
			http.NotFound(w, r)
		}
	}))
	defer proxy.Close()
	env := []string{"HTTP_PROXY=" + proxy.URL, "NO_PROXY="}
	requests := func() []string {
		mu.Lock()
		defer mu.Unlock()
		s := slices.Clone(seen)
		seen = nil
		return s
	}

	code, out, errOut := runBinaryEnv(t, env, "check", origin+"/private/x")
	if code != exitFail || !strings.HasPrefix(out, "DISALLOWED") {
		t.Errorf("HTTP_PROXY=%s check %s/private/x: exit %d, %q, %q; want DISALLOWED by the proxy's robots.txt", proxy.URL, origin, code, out, errOut)
	}
	if got, want := requests(), []string{"GET " + origin + "/robots.txt"}; !slices.Equal(got, want) {
		t.Errorf("check: the proxy saw %q, want %q", got, want)
	}

	code, out, errOut = runBinaryEnv(t, env, "sitemaps", "-walk", "-urls", origin+"/")
	if !strings.Contains(out, origin+"/page\n") {
		t.Errorf("sitemaps -walk %s/ printed %q (exit %d), want the page of own.txt; stderr %q", origin, out, code, errOut)
	}
	if want := "refused to send a request for 10.0.0.1:80 (10.0.0.1) to proxy " + proxy.Listener.Addr().String() + ": private address"; !strings.Contains(errOut, want) {
		t.Errorf("sitemaps -walk: stderr %q, want %q", errOut, want)
	}
	for _, r := range requests() {
		if strings.Contains(r, "10.0.0.1") {
			t.Errorf("sitemaps -walk: the proxy was asked for %q", r)
		}
	}

	// -allow-private lifts the guard, not the proxy.
	code, out, errOut = runBinaryEnv(t, env, "check", "-allow-private", origin+"/private/x")
	if code != exitFail || !strings.HasPrefix(out, "DISALLOWED") {
		t.Errorf("check -allow-private through the proxy: exit %d, %q, %q", code, out, errOut)
	}
	if n := direct.Load(); n != 0 {
		t.Errorf("the site got %d requests direct, want all through the proxy", n)
	}
}
