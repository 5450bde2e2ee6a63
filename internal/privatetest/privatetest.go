// Package privatetest serves tests a server on 127.0.0.2, a loopback
// address other than the 127.0.0.1 test sites run on: it stands in for a
// service of the machine's own network (Redis, a metadata service, an
// admin page) that a crawl must never reach, and counts the connections
// it accepted.
package privatetest

import (
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
)

// A Server is an httptest.Server on 127.0.0.2 that counts connections.
type Server struct {
	*httptest.Server
	conns atomic.Int64
}

// New starts a Server with handler h, closed when the test ends. It skips
// the test where 127.0.0.2 cannot be listened on.
func New(tb testing.TB, h http.Handler) *Server {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		tb.Skipf("no 127.0.0.2 to listen on: %v", err)
	}
	s := &Server{}
	s.Server = &httptest.Server{Listener: l, Config: &http.Server{
		Handler: h,
		ConnState: func(_ net.Conn, st http.ConnState) {
			if st == http.StateNew {
				s.conns.Add(1)
			}
		},
	}}
	s.Start()
	tb.Cleanup(s.Close)
	return s
}

// Conns returns the number of connections the server accepted.
func (s *Server) Conns() int64 { return s.conns.Load() }

// Reset sets the count of connections back to 0.
func (s *Server) Reset() { s.conns.Store(0) }
