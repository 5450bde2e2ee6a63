package sitemap

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptrace"
	"sync"
	"time"
)

// A sendDeadline bounds each request of a Walker's fetch (each redirect
// hop, and the body of the last) by Options.Timeout counted from when the
// request is sent, not from when it was made: the waits before it goes —
// the host's turn and Crawl-delay in the Walker's own pacing, a paced
// client's own (a Guard's gate under Guard.Transport), a hop's wait for
// its host — do not count against it. So a host that asks for a
// Crawl-delay longer than Timeout is walked slowly, as it asks, rather
// than failed file by file before anything is sent.
//
// The clock starts at the first of: the Walker's pacing letting the
// request go, net/http starting to get it a connection (httptrace's
// GetConn, before any dial: a Guard's transport reaches it only after its
// gate), and the response's headers arriving. A redirect stops it
// (CheckRedirect, before the hop waits for its host) and the hop starts
// it anew. A client whose transport neither is net/http's nor reports to
// httptrace is bounded from its response on.
//
// Safe for concurrent use: start runs on the transport's goroutine, the
// rest on the fetch's.
type sendDeadline struct {
	d      time.Duration
	cancel context.CancelCauseFunc
	fired  chan struct{} // closed when the timer ran out
	// mu guards timer, done and body.
	mu    sync.Mutex
	timer *time.Timer // counting, or fired; nil while not counting
	done  bool        // stopped for good
	body  bool        // the last response's headers arrived: its body is read
}

// sendDeadlineKey is the context key of a request's sendDeadline.
type sendDeadlineKey struct{}

// errSendTimeout is the cause of a context a sendDeadline ended.
var errSendTimeout = errors.New("sitemap: timeout")

// withSendDeadline returns a context of parent for one fetch attempt,
// bounded by d from when each of its requests is sent, and the deadline.
// Its stop must be called once the response's body is done with.
func withSendDeadline(parent context.Context, d time.Duration) (context.Context, *sendDeadline) {
	ctx, cancel := context.WithCancelCause(parent)
	s := &sendDeadline{d: d, cancel: cancel, fired: make(chan struct{})}
	ctx = context.WithValue(ctx, sendDeadlineKey{}, s)
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		GetConn: func(string) { s.start() },
	})
	return ctx, s
}

// sendDeadlineOf returns the sendDeadline of ctx, or nil.
func sendDeadlineOf(ctx context.Context) *sendDeadline {
	s, _ := ctx.Value(sendDeadlineKey{}).(*sendDeadline)
	return s
}

// start starts s's clock, unless it is counting, ran out or was stopped;
// s may be nil.
func (s *sendDeadline) start() {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.timer != nil || s.done {
		return
	}
	s.timer = time.AfterFunc(s.d, func() {
		close(s.fired)
		s.cancel(errSendTimeout)
	})
}

// pause stops s's clock while a redirect hop waits to be sent; the hop
// starts it anew. A clock that ran out stays out.
func (s *sendDeadline) pause() {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.timer != nil && s.timer.Stop() {
		s.timer = nil
	}
}

// stop releases s and its context.
func (s *sendDeadline) stop() {
	s.mu.Lock()
	s.done = true
	if s.timer != nil {
		s.timer.Stop()
	}
	s.mu.Unlock()
	s.cancel(context.Canceled)
}

// reading tells s that the response's headers arrived: a timeout from
// now on cuts its body.
func (s *sendDeadline) reading() {
	s.mu.Lock()
	s.body = true
	s.mu.Unlock()
}

// err returns err, or, if s ended the request, the error that says so:
// it wraps context.DeadlineExceeded, as the timeout of a client does.
func (s *sendDeadline) err(err error) error {
	if err == nil {
		return nil
	}
	select {
	case <-s.fired:
		s.mu.Lock()
		body := s.body
		s.mu.Unlock()
		if body {
			return fmt.Errorf("sitemap: the response's body was not read in full within %v of sending the request: %w", s.d, context.DeadlineExceeded)
		}
		return fmt.Errorf("sitemap: no response within %v of sending the request: %w", s.d, context.DeadlineExceeded)
	default:
		return err
	}
}
