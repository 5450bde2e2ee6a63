package robotsmw

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"
)

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
	late, endLate := l.withDeadline(context.Background(), now.Add(300*time.Millisecond), cause)
	defer endLate()
	early, endEarly := l.withDeadline(context.Background(), now.Add(20*time.Millisecond), cause)
	defer endEarly()
	mid, endMid := l.withDeadline(context.Background(), now.Add(100*time.Millisecond), cause)
	if dl, ok := mid.Deadline(); !ok || !dl.Equal(now.Add(100*time.Millisecond)) {
		t.Errorf("Deadline() = %v, %v; want its deadline", dl, ok)
	}
	endMid() // done before its deadline
	if err := mid.Err(); err != context.Canceled {
		t.Errorf("Err() of a context ended early = %v, want context.Canceled", err)
	}
	waitDone(t, early, "early")
	if err := early.Err(); err != context.DeadlineExceeded {
		t.Errorf("Err() at the deadline = %v, want context.DeadlineExceeded", err)
	}
	if late.Err() != nil {
		t.Errorf("the later deadline ended with the earlier one: %v", late.Err())
	}
	waitDone(t, late, "late")
	req, _ := http.NewRequestWithContext(late, http.MethodGet, "http://example.com/", nil)
	if err := timedOut(req, context.DeadlineExceeded); err != cause {
		t.Errorf("timedOut(req, DeadlineExceeded) = %v, want the deadline's cause", err)
	}
	if err := timedOut(req, errors.New("reset")); errors.Is(err, cause) {
		t.Errorf("timedOut(req, another error) = %v, want it as is", err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.head != nil || l.tail != nil {
		t.Errorf("contexts left in the list: %v %v", l.head, l.tail)
	}
}

func TestDeadlineCtxPast(t *testing.T) {
	var l deadlineList
	ctx, end := l.withDeadline(context.Background(), time.Now().Add(-time.Second), errors.New("timed out"))
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
	parent, end := l.withDeadline(context.Background(), time.Now().Add(30*time.Millisecond), errors.New("timed out"))
	defer end()
	child, cancel := context.WithCancelCause(parent)
	defer cancel(nil)
	ran := make(chan struct{})
	context.AfterFunc(parent, func() { close(ran) })
	stopped := false
	stop := context.AfterFunc(parent, func() { stopped = true })
	if !stop() {
		t.Errorf("stop() of a pending AfterFunc = false, want true")
	}
	waitDone(t, child, "derived context")
	if err := context.Cause(child); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Cause(derived) = %v, want context.DeadlineExceeded", err)
	}
	<-ran
	if stopped {
		t.Errorf("a stopped AfterFunc ran")
	}
	// Registered after the end: runs at once.
	late := make(chan struct{})
	context.AfterFunc(parent, func() { close(late) })
	<-late
}

func TestDeadlineCtxEndedEarlyEndsDerived(t *testing.T) {
	var l deadlineList
	parent, end := l.withDeadline(context.Background(), time.Now().Add(time.Hour), errors.New("timed out"))
	child, cancel := context.WithCancel(parent)
	defer cancel()
	end()
	waitDone(t, child, "derived context")
	if err := child.Err(); err != context.Canceled {
		t.Errorf("Err() of derived context = %v, want context.Canceled", err)
	}
	end() // a second end is harmless
}
