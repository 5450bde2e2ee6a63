package redistest

import (
	"net"
	"sync"
	"sync/atomic"
	"testing"
)

// A TurnProxy is a TCP proxy on a free loopback port in front of a Redis
// server that counts round trips as the wire sees them: on each
// connection, a turn is the client sending bytes and the server
// answering. A pipeline is one turn however many commands it carries;
// messages the server pushes unasked (pub/sub) count for nothing.
//
// Its methods are safe for concurrent use.
type TurnProxy struct {
	// Addr is where clients connect.
	Addr string

	target string
	l      net.Listener
	turns  atomic.Int64
	conns  atomic.Int64

	// mu guards open; wg counts the copying goroutines.
	mu   sync.Mutex
	open map[net.Conn]bool
	wg   sync.WaitGroup
}

// StartTurnProxy starts a TurnProxy in front of target and stops it when
// the test ends.
func StartTurnProxy(t testing.TB, target string) *TurnProxy {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &TurnProxy{Addr: l.Addr().String(), target: target, l: l, open: map[net.Conn]bool{}}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(p.close)
	return p
}

// Turns returns the round trips counted so far, over every connection.
func (p *TurnProxy) Turns() int64 { return p.turns.Load() }

// Conns returns the connections accepted so far.
func (p *TurnProxy) Conns() int64 { return p.conns.Load() }

func (p *TurnProxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.l.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		if !p.track(c, s) {
			return
		}
		p.conns.Add(1)
		var asked atomic.Bool // the client sent bytes not answered yet
		p.wg.Add(2)
		go p.pipe(s, c, func() { asked.Store(true) })
		go p.pipe(c, s, func() {
			if asked.Swap(false) {
				p.turns.Add(1)
			}
		})
	}
}

// track records an open pair; it reports false (and closes them) once
// the proxy is closed.
func (p *TurnProxy) track(c, s net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.open == nil {
		c.Close()
		s.Close()
		return false
	}
	p.open[c], p.open[s] = true, true
	return true
}

// pipe copies from src to dst, calling seen before each chunk is passed
// on, until either side closes; then it closes both.
func (p *TurnProxy) pipe(dst, src net.Conn, seen func()) {
	defer p.wg.Done()
	defer dst.Close()
	defer src.Close()
	buf := make([]byte, 64<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			seen()
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return // io.EOF or a closed connection
		}
	}
}

// close stops accepting, closes every connection and waits for the
// copying goroutines.
func (p *TurnProxy) close() {
	p.l.Close()
	p.mu.Lock()
	for c := range p.open {
		c.Close()
	}
	p.open = nil
	p.mu.Unlock()
	p.wg.Wait()
}
