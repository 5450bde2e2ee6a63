package sitemap

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptrace"
	"sync"
	"time"
)

// A sendDeadline bounds one request of a Walker, its redirect hops and
// its body by Options.Timeout counted from when the request is sent, not
// from when it was made: the waits before it goes — the host's turn and
// Crawl-delay in the Walker's own pacing, a paced client's own (a Guard's
// gate under Guard.Transport) — do not count against it. So a host that
// asks for a Crawl-delay longer than Timeout is walked slowly, as it
// asks, rather than failed file by file before anything is sent.
//
// The clock starts at the first of: the Walker's pacing letting the
// request go, net/http getting the request a connection (httptrace's
// GotConn, which a Guard's transport reaches only after its gate), and
// the response's headers arriving. A client whose transport neither is
// net/http's nor reports to httptrace is bounded from its response on.
//
// Safe for concurrent use: start runs on the transport's goroutine, stop
// and err on the fetch's.
type sendDeadline struct {
	d      time.Duration
	cancel context.CancelCauseFunc
	once   sync.Once   // arms timer, once
	timer  *time.Timer // set by once; nil if never armed
	fired  chan struct{}
}

// sendDeadlineKey is the context key of a request's sendDeadline.
type sendDeadlineKey struct{}

// errSendTimeout is the cause of a context a sendDeadline ended.
var errSendTimeout = errors.New("sitemap: timeout")

// withSendDeadline returns a context of parent for one request, bounded
// by d from when the request is sent, and the deadline. Its stop must be
// called once the request's body is done with.
func withSendDeadline(parent context.Context, d time.Duration) (context.Context, *sendDeadline) {
	ctx, cancel := context.WithCancelCause(parent)
	s := &sendDeadline{d: d, cancel: cancel, fired: make(chan struct{})}
	ctx = context.WithValue(ctx, sendDeadlineKey{}, s)
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		GotConn: func(httptrace.GotConnInfo) { s.start() },
	})
	return ctx, s
}

// sendDeadlineOf returns the sendDeadline of ctx, or nil.
func sendDeadlineOf(ctx context.Context) *sendDeadline {
	s, _ := ctx.Value(sendDeadlineKey{}).(*sendDeadline)
	return s
}

// start starts s's clock, if it has not started; s may be nil.
func (s *sendDeadline) start() {
	if s == nil {
		return
	}
	s.once.Do(func() {
		s.timer = time.AfterFunc(s.d, func() {
			close(s.fired)
			s.cancel(errSendTimeout)
		})
	})
}

// stop releases s and its context.
func (s *sendDeadline) stop() {
	s.once.Do(func() {}) // a start after this arms nothing
	if s.timer != nil {
		s.timer.Stop()
	}
	s.cancel(context.Canceled)
}

// err returns err, or, if s ended the request, the error that says so:
// it wraps context.DeadlineExceeded, as the timeout of a client does.
func (s *sendDeadline) err(err error) error {
	if err == nil {
		return nil
	}
	select {
	case <-s.fired:
		return fmt.Errorf("sitemap: no response within %v of sending the request: %w", s.d, context.DeadlineExceeded)
	default:
		return err
	}
}
