package main

import (
	"net"
	"net/http"
	"time"

	"golang.org/x/net/netutil"
)

// serveLimits bounds what one client can hold of robotstxt serve, so that
// slow or idle clients cannot take the page from everyone else: a client
// that sends its headers and then one byte of a large body every few
// seconds, or keeps a connection open and sends nothing, is cut, and no
// more than conns connections are served at once (the rest wait in the
// kernel's queue to be accepted, using no file descriptor of the process).
//
// The fetch handlers (/api/fetch, /api/sitemaps) are not bounded here: each
// fetch has -timeout, and a sitemap walk at most maxServeSitemaps fetches.
// Their request bodies are bounded like any other, and writing their answer
// gets write from when it starts, not from when the request came in, so a
// long walk is not cut by a write deadline that ran while it fetched.
type serveLimits struct {
	header time.Duration // to read a request's headers (http.Server.ReadHeaderTimeout)
	body   time.Duration // to read a request's body, from the end of its headers
	write  time.Duration // to write a response, from its first byte
	idle   time.Duration // a kept-alive connection waits for its next request
	conns  int           // connections served at once
}

// defaultServeLimits are the limits of robotstxt serve: an API body is at
// most maxAPIBody (a few MiB), which a minute reads even at 100 KiB/s; an
// answer is bounded (the page's files, JSON of at most maxServeReports
// sitemaps, or of at most maxChecks verdicts, each quoting a rule cut to
// maxPatternShown bytes); a browser reopens an idle connection when it needs one; and
// 128 connections are more than a page's user and scripts need while
// staying far below the usual limit of 1024 open files, with room for the
// fetches the handlers make.
func defaultServeLimits() serveLimits {
	return serveLimits{header: 10 * time.Second, body: time.Minute, write: time.Minute, idle: time.Minute, conns: 128}
}

// listener returns ln serving at most l.conns connections at once: Accept
// waits while that many are open.
func (l serveLimits) listener(ln net.Listener) net.Listener {
	return netutil.LimitListener(ln, l.conns)
}

// server returns an http.Server of h with the limits on headers and idle
// connections, and h wrapped to bound each request's body and response.
func (l serveLimits) server(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           l.handler(h),
		ReadHeaderTimeout: l.header,
		IdleTimeout:       l.idle,
	}
}

// handler bounds the body read of each request h serves, and the write of
// its response from the response's first byte. Once a body has been read
// to its end, net/http lifts the read deadline itself (it then watches for
// the client going away, which a deadline would take for it), so a
// handler that reads its body and then fetches for long is not cut; a
// request without a body gets no read deadline, for the same reason.
func (l serveLimits) handler(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		if r.ContentLength != 0 { // -1: chunked, of unknown length
			rc.SetReadDeadline(time.Now().Add(l.body))
		}
		rc.SetWriteDeadline(time.Time{}) // none while the handler works
		h.ServeHTTP(&writeDeadline{ResponseWriter: w, rc: rc, d: l.write}, r)
	})
}

// A writeDeadline sets the connection's write deadline when its response
// starts.
type writeDeadline struct {
	http.ResponseWriter
	rc      *http.ResponseController
	d       time.Duration
	started bool
}

func (w *writeDeadline) start() {
	if !w.started {
		w.started = true
		w.rc.SetWriteDeadline(time.Now().Add(w.d))
	}
}

func (w *writeDeadline) WriteHeader(code int) {
	w.start()
	w.ResponseWriter.WriteHeader(code)
}

func (w *writeDeadline) Write(b []byte) (int, error) {
	w.start()
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection.
func (w *writeDeadline) Unwrap() http.ResponseWriter { return w.ResponseWriter }
