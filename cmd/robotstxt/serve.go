package main

import (
	"context"
	"embed"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"time"
)

// web holds the page: plain HTML, CSS and JavaScript, no build step.
//
//go:embed web
var web embed.FS

func serveCommand() command {
	return command{
		name:     "serve",
		synopsis: "[-addr HOST:PORT] [-allow-private] [-timeout D]",
		summary:  "analyse a robots.txt in the browser: verdicts, lint, summary, diff",
		help: `serve starts a local web page to edit a robots.txt (or paste, upload, or
fetch a site's live one), test URLs against it for several agents with the
deciding line highlighted, see its lint diagnostics, a summary of its groups,
Crawl-delay, Clean-param and Sitemap lines, and which URLs change verdict
between two versions. Nothing is kept on disk; the page works offline
except for the fetches you ask for.

The page is served from the binary. Open the address it prints. Its JSON
API, which scripts can use too:

  POST /api/check     {"robots": TEXT, "urls": [URL...], "agents": [AGENT...]}
  POST /api/lint      {"robots": TEXT}
  POST /api/summary   {"robots": TEXT, "urls": [...], "agents": [...], "base": URL}
  POST /api/diff      {"current": TEXT, "draft": TEXT, "urls": [...], "agents": [...]}
  POST /api/fetch     {"url": URL}        the site's live robots.txt, as a crawler gets it
  POST /api/sitemaps  {"robots": TEXT, "base": URL}   fetch and count the sitemaps

/api/check and /api/diff take at most 1000 URLs, 50 agents and 10000
checks (URLs times agents) a request, and give up after 10s of checks.

TEXT is a JSON string, so UTF-8: bytes that are not UTF-8 arrive as U+FFFD
(lint such a file with robotstxt lint). Answers are JSON; a bad request is
answered 400 with {"error": MESSAGE}, a request with another server's Host
421 with one too. /api/fetch answers 200 when robots.txt gave a verdict
(state "parsed" or "unavailable"), 502 when it is unreachable (state
"unreachable": a network error, a timeout, 429 or 5xx) and 403 when the
address was refused (a private one, see below), each with the same JSON
body, so that a script can test the status.

A link to the page can carry a draft, a site, URLs and agents in its
fragment (the part after #, which browsers never send to the server, so
it stays out of every server log): "Copy a link to this page" writes one,
and opening it fills the page in:

  http://127.0.0.1:8080/#site=https%3A%2F%2Fexample.com&draft=...&urls=...&agents=...


Live fetches reach public addresses only, and the addresses of the site you
type, on its port, when the server listens on loopback only (a site on this
machine or your network, as the other commands allow the sites they are
given); its redirects and sitemaps reach no other private address or port.
-allow-private lifts the guard. Fetches go through the proxies of
HTTP_PROXY, HTTPS_PROXY and NO_PROXY; a URL's host is checked before its
request goes to a proxy.
By default the server listens on loopback only. A client gets 10s to
send a request's headers, a minute to send its body and a minute to read
an answer once it starts; a kept-alive connection idle for a minute is
closed, and at most 128 connections are served at once (more wait to be
accepted), so that slow or idle clients cannot take the page from others.
A fetch itself is bounded by -timeout, not by these. Ctrl-C stops it (exit
status 130, as for every command interrupted).

examples:
  robotstxt serve
  robotstxt serve -addr 127.0.0.1:9000
`,
		setup: serveFlags,
	}
}

func serveFlags(fs *flag.FlagSet) action {
	addr := fs.String("addr", "127.0.0.1:8080", "listen on `HOST:PORT`; port 0 picks a free one")
	timeout := new(time.Duration)
	timeoutVar(fs, timeout) // and -allow-private: live fetches may reach private addresses
	return func(ctx context.Context, e *env, args []string) (int, error) {
		if err := checkTimeout(*timeout); err != nil {
			return 0, err
		}
		if len(args) > 0 {
			return 0, usagef("takes no arguments, got %q", args[0])
		}
		allowPrivate := fs.Lookup(allowPrivateFlag).Value.String() == "true"
		return e.serve(ctx, *addr, allowPrivate, *timeout)
	}
}

// serve listens on addr and serves the page until ctx ends (Ctrl-C).
func (e *env) serve(ctx context.Context, addr string, allowPrivate bool, timeout time.Duration) (int, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return exitUsage, err
	}
	return e.serveOn(ctx, ln, allowPrivate, timeout, defaultServeLimits())
}

// serveOn serves the page on ln, within limits, until ctx ends.
func (e *env) serveOn(ctx context.Context, ln net.Listener, allowPrivate bool, timeout time.Duration, limits serveLimits) (int, error) {
	s := &server{
		client:       e.fetchClient(allowPrivate),
		allowPrivate: allowPrivate,
		timeout:      timeout,
		listenHost:   listenHost(ln.Addr()),
	}
	srv := limits.server(s.handler())
	srv.BaseContext = func(net.Listener) context.Context { return ctx }
	shown := ln.Addr().String()
	if !s.listenHost.IsValid() {
		// Every interface: the machine's own name is one of them.
		_, port, _ := net.SplitHostPort(shown)
		shown = net.JoinHostPort("localhost", port)
	}
	fmt.Fprintf(e.stdout, "robotstxt serve: listening on http://%s/\n", shown)
	switch {
	case !s.listenHost.IsValid():
		fmt.Fprintf(e.stderr, "robotstxt: serve: listening on every interface (%s): anyone who can reach this machine can use the page and its fetches\n", ln.Addr())
	case !s.loopbackOnly():
		fmt.Fprintf(e.stderr, "robotstxt: serve: %s is not a loopback address: anyone who can reach it can use the page and its fetches\n", ln.Addr())
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(limits.listener(ln)) }()
	select {
	case err := <-done:
		return exitUsage, err
	case <-ctx.Done():
	}
	// Ctrl-C is how the server ends: it finishes the requests under way
	// (their fetches end with ctx) and exits as every command does when
	// interrupted.
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	srv.Shutdown(shutdown)
	<-done
	return 0, errInterrupted
}

// listenHost returns the address the server listens on, invalid for an
// unspecified one (every interface).
func listenHost(a net.Addr) netip.Addr {
	ap, err := netip.ParseAddrPort(a.String())
	if err != nil || ap.Addr().IsUnspecified() {
		return netip.Addr{}
	}
	return ap.Addr().Unmap()
}

// A server is the page and its API. It keeps no state between requests:
// each works on the texts it is sent, and a live fetch uses a robots.txt
// cache of its own. Safe for concurrent use; its fields are set before it
// serves.
type server struct {
	client       *http.Client // live fetches; its dials refuse non-public addresses unless allowPrivate
	allowPrivate bool
	timeout      time.Duration // of each fetch
	listenHost   netip.Addr    // invalid: every interface
}

// contentSecurityPolicy lets the page load only its own script and style
// and talk only to its own server.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; " +
	"connect-src 'self'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'"

func (s *server) handler() http.Handler {
	mux := http.NewServeMux()
	assets, _ := fs.Sub(web, "web")
	files := http.FileServerFS(assets)
	mux.Handle("GET /{$}", files)
	mux.Handle("GET /static/", http.StripPrefix("/static", noListing(files)))
	mux.HandleFunc("POST /api/check", apiHandler(s.check))
	mux.HandleFunc("POST /api/lint", apiHandler(s.lint))
	mux.HandleFunc("POST /api/summary", apiHandler(s.summary))
	mux.HandleFunc("POST /api/diff", apiHandler(s.diff))
	mux.HandleFunc("POST /api/fetch", apiHandler(s.fetch))
	mux.HandleFunc("POST /api/sitemaps", apiHandler(s.sitemaps))
	mux.HandleFunc("/api/", func(w http.ResponseWriter, r *http.Request) {
		// The API answers in JSON even when it is asked wrongly.
		switch r.URL.Path {
		case "/api/check", "/api/lint", "/api/summary", "/api/diff", "/api/fetch", "/api/sitemaps":
			w.Header().Set("Allow", http.MethodPost)
			respondJSON(w, http.StatusMethodNotAllowed, map[string]string{"error": r.Method + " " + r.URL.Path + ": use POST with a JSON body"})
		default:
			respondJSON(w, http.StatusNotFound, map[string]string{"error": "no API at " + r.URL.Path})
		}
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", contentSecurityPolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Cache-Control", "no-store")
		if !s.hostAllowed(r.Host) {
			// A page of another site whose name was made to resolve to
			// this machine (DNS rebinding) must not reach the API.
			respondJSON(w, http.StatusMisdirectedRequest, map[string]string{"error": "robotstxt serve: unexpected Host " + r.Host})
			return
		}
		mux.ServeHTTP(w, r)
	})
}

// noListing serves files but answers 404 to a directory, which
// http.FileServer would list.
func noListing(files http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/") {
			http.NotFound(w, r)
			return
		}
		files.ServeHTTP(w, r)
	})
}

// loopbackOnly reports whether the server listens on loopback only.
func (s *server) loopbackOnly() bool {
	return s.listenHost.IsValid() && s.listenHost.IsLoopback()
}

// hostAllowed reports whether a request's Host names this server: a
// loopback name or address, or the address it listens on. A server on
// every interface accepts any Host.
func (s *server) hostAllowed(hostport string) bool {
	if !s.listenHost.IsValid() {
		return true
	}
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.Trim(host, "[]"), ".")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	a, err := netip.ParseAddr(host)
	return err == nil && (a.Unmap().IsLoopback() || a.Unmap() == s.listenHost)
}

// errTooLarge reports an API request body past maxAPIBody.
var errTooLarge = errors.New("request too large")
