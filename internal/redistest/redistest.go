// Package redistest starts a real redis-server on a free loopback port for
// the tests of the fleet mode.
package redistest

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// A Server is a redis-server process run by a test.
type Server struct {
	Addr string

	t   testing.TB
	dir string // the server's data: an append-only file, kept across restarts
	// mu guards cmd.
	mu  sync.Mutex
	cmd *exec.Cmd
}

func init() {
	// go-redis logs every failed dial to stderr; the tests stop Redis on
	// purpose and check what the code reports instead.
	redis.SetLogger(quiet{})
}

// quiet is a go-redis logger that drops what it is given.
type quiet struct{}

func (quiet) Printf(context.Context, string, ...interface{}) {}

// Start starts redis-server on a free loopback port and stops it when the
// test ends. It skips the test, saying why, when redis-server is not
// installed.
func Start(t testing.TB) *Server {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server is not installed (apt-get install -y redis-server); the fleet tests need a real Redis")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	s := &Server{Addr: addr, t: t, dir: t.TempDir()}
	s.Restart()
	t.Cleanup(s.Stop)
	return s
}

// Client returns a client of the server, closed when the test ends.
func (s *Server) Client() *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: s.Addr, MaxRetries: -1, DialTimeout: time.Second})
	s.t.Cleanup(func() { c.Close() })
	return c
}

// Stop kills the server, as a crash would. Its data survives in an
// append-only file synced on every write, as a production Redis keeps it.
func (s *Server) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Kill()
	_ = s.cmd.Wait()
	s.cmd = nil
}

// Wipe kills the server and starts it again with no data, as a server
// restarted without persistence comes back.
func (s *Server) Wipe() {
	s.t.Helper()
	s.Stop()
	entries, _ := os.ReadDir(s.dir)
	for _, e := range entries {
		if err := os.RemoveAll(filepath.Join(s.dir, e.Name())); err != nil {
			s.t.Fatalf("wiping redis-server's data: %v", err)
		}
	}
	s.Restart()
}

// Restart starts the server again on the same port, with the data it had.
func (s *Server) Restart() {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil {
		return
	}
	_, port, _ := net.SplitHostPort(s.Addr)
	cmd := exec.Command("redis-server", "--port", port, "--bind", "127.0.0.1",
		"--dir", s.dir, "--save", "", "--appendonly", "yes", "--appendfsync", "always",
		"--daemonize", "no", "--loglevel", "warning")
	dieWithTest(cmd)
	if err := cmd.Start(); err != nil {
		s.t.Fatalf("starting redis-server: %v", err)
	}
	s.cmd = cmd
	waitPing(s.t, s.Addr)
}
