package robotsmw

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"runtime"
	"testing"
	"time"
)

// withDeadline returns parent bounded by timeout from now through l, and
// the function that ends it before (see deadlineList.start).
func (l *deadlineList) withDeadline(parent context.Context, now time.Time, timeout time.Duration, cause error) (context.Context, context.CancelFunc) {
	c := new(deadlineCtx)
	l.start(c, parent, now, timeout, cause)
	return c, c.end
}

// waitDone waits for ctx to end, failing the test if it does not within
// a minute (a hung test, not a measure of speed).
func waitDone(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	select {
	case <-ctx.Done():
	case <-time.After(time.Minute):
		t.Fatalf("%s: not done", name)
	}
}

func TestDeadlineListEndsContextsInDeadlineOrder(t *testing.T) {
	var l deadlineList
	cause := errors.New("timed out")
	now := time.Now()
	late, endLate := l.withDeadline(context.Background(), now, time.Hour, cause)
	second, endSecond := l.withDeadline(context.Background(), now, 60*time.Millisecond, cause)
	defer endSecond()
	first, endFirst := l.withDeadline(context.Background(), now, 20*time.Millisecond, cause)
	defer endFirst()
	mid, endMid := l.withDeadline(context.Background(), now, 40*time.Millisecond, cause)
	if dl, ok := mid.Deadline(); !ok || !dl.Equal(now.Add(40*time.Millisecond)) {
		t.Errorf("Deadline() = %v, %v; want its deadline", dl, ok)
	}
	endMid() // done before its deadline
	if err := mid.Err(); err != context.Canceled {
		t.Errorf("Err() of a context ended early = %v, want context.Canceled", err)
	}
	waitDone(t, first, "first")
	if err := first.Err(); err != context.DeadlineExceeded {
		t.Errorf("Err() at the deadline = %v, want context.DeadlineExceeded", err)
	}
	waitDone(t, second, "second") // the timer was armed again for it
	if late.Err() != nil {
		t.Errorf("a deadline an hour away ended with the earlier ones: %v", late.Err())
	}
	endLate()
	if err := late.Err(); err != context.Canceled {
		t.Errorf("Err() of a context ended early = %v, want context.Canceled", err)
	}
	req, _ := http.NewRequestWithContext(first, http.MethodGet, "http://example.com/", nil)
	if err := timedOut(req, context.DeadlineExceeded); err != cause {
		t.Errorf("timedOut(req, DeadlineExceeded) = %v, want the deadline's cause", err)
	}
	if err := timedOut(req, errors.New("reset")); errors.Is(err, cause) {
		t.Errorf("timedOut(req, another error) = %v, want it as is", err)
	}
	l.mu.Lock()
	if l.head != nil || l.tail != nil {
		t.Errorf("list not empty: head %v, tail %v", l.head, l.tail)
	}
	l.mu.Unlock()
	// The timer stays armed for late's deadline, and finding no
	// context then, arms nothing more.
	l.fire()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.armed {
		t.Errorf("timer armed again by a fire that found the list empty")
	}
}

func TestDeadlineCtxPast(t *testing.T) {
	var l deadlineList
	ctx, end := l.withDeadline(context.Background(), time.Now(), -time.Second, errors.New("timed out"))
	defer end()
	waitDone(t, ctx, "withDeadline(past)")
	if err := ctx.Err(); err != context.DeadlineExceeded {
		t.Errorf("Err() = %v, want context.DeadlineExceeded", err)
	}
}

// net/http derives a context of its own from a request's (and cancels it
// when the request ends): it must end with the deadline, and register
// with the deadlineCtx without a goroutine or a map of children.
func TestDeadlineCtxDerived(t *testing.T) {
	var l deadlineList
	cause := errors.New("timed out")
	pending, endPending := l.withDeadline(context.Background(), time.Now(), time.Hour, cause)
	stopped := make(chan struct{})
	stop := context.AfterFunc(pending, func() { close(stopped) })
	if !stop() {
		t.Errorf("stop() of a pending AfterFunc = false, want true")
	}
	endPending()
	select {
	case <-stopped:
		t.Errorf("a stopped AfterFunc ran")
	default:
	}

	parent, end := l.withDeadline(context.Background(), time.Now(), 30*time.Millisecond, cause)
	defer end()
	child, cancel := context.WithCancelCause(parent)
	defer cancel(nil)
	ran := make(chan struct{})
	context.AfterFunc(parent, func() { close(ran) })
	waitDone(t, child, "derived context")
	if err := context.Cause(child); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Cause(derived) = %v, want context.DeadlineExceeded", err)
	}
	<-ran
	// Registered after the end: runs at once.
	late := make(chan struct{})
	context.AfterFunc(parent, func() { close(late) })
	<-late
}

func TestDeadlineCtxEndedEarlyEndsDerived(t *testing.T) {
	var l deadlineList
	parent, end := l.withDeadline(context.Background(), time.Now(), time.Hour, errors.New("timed out"))
	child, cancel := context.WithCancel(parent)
	defer cancel()
	end()
	waitDone(t, child, "derived context")
	if err := child.Err(); err != context.Canceled {
		t.Errorf("Err() of derived context = %v, want context.Canceled", err)
	}
	end() // a second end is harmless
}

// Err must not report an end while Done is still open (the contract of
// context.Context): end runs on another goroutine while Err is polled.
func TestDeadlineCtxErrOnlyOnceDone(t *testing.T) {
	var l deadlineList
	for i := range 20000 {
		ctx, end := l.withDeadline(context.Background(), time.Now(), time.Hour, errors.New("timed out"))
		done := ctx.Done()
		go end()
		for ctx.Err() == nil {
			runtime.Gosched()
		}
		select {
		case <-done:
		default:
			t.Fatalf("round %d: Err() = %v while Done() is open", i, ctx.Err())
		}
	}
}

// timedOut names the transport's timeout for a request under a context
// of its own (context.WithTimeoutCause, as bound gives a request whose
// context can end), whose error net/http's HTTP/2 reports as
// ctx.Err().
func TestTimedOutUnderWithTimeoutCause(t *testing.T) {
	cause := fmt.Errorf("robotsmw: not done within 1s: %w", context.DeadlineExceeded)
	ctx, cancel := context.WithTimeoutCause(context.Background(), -time.Second, cause)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://example.com/", nil)
	if err := timedOut(req, context.DeadlineExceeded); err != cause {
		t.Errorf("timedOut(req, DeadlineExceeded) = %v, want the context's cause", err)
	}
	live, stop := context.WithCancel(context.Background())
	defer stop()
	req, _ = http.NewRequestWithContext(live, http.MethodGet, "http://example.com/", nil)
	if err := timedOut(req, context.DeadlineExceeded); err != context.DeadlineExceeded {
		t.Errorf("timedOut(req under a live context, DeadlineExceeded) = %v, want it as is", err)
	}
}

// A request's first attempt is bounded by the context in its visit; a
// second attempt of the same visit (retried in place, or a hop) gets a
// context of its own, so that ending one does not end the other, which
// net/http may still read.
func TestBoundUsesVisitContextOnce(t *testing.T) {
	tr := newGuardTransport(&Guard{}, nil, time.Hour)
	v := &visit{method: http.MethodGet}
	req, err := http.NewRequest(http.MethodGet, "http://a.test/", nil)
	if err != nil {
		t.Fatal(err)
	}
	first, endFirst := tr.bound(req, v, true)
	second, endSecond := tr.bound(req, v, true)
	if first.Context() != context.Context(&v.dl) {
		t.Errorf("bound(first attempt): context %p, want the visit's own %p", first.Context(), &v.dl)
	}
	if second.Context() == first.Context() {
		t.Fatalf("bound(second attempt) gave the first attempt's context again")
	}
	endSecond.end()
	if err := first.Context().Err(); err != nil {
		t.Errorf("after the second attempt's end, the first's Err() = %v, want nil", err)
	}
	endFirst.end()
	if err := first.Context().Err(); err != context.Canceled {
		t.Errorf("after its end, the first attempt's Err() = %v, want %v", err, context.Canceled)
	}
}
