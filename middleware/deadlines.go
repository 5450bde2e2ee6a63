package robotsmw

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// The transport bounds each colly request by the collector's request
// timeout itself (guardTransport.bound). context.WithTimeout would arm a
// runtime timer per request: a timer that becomes the earliest of its P
// wakes the network poller or another thread (runtime.wakeNetPoller),
// which on a crawl of short pages cost more CPU than the rest of the
// Guard together (bench/cpupage). All of a transport's requests share
// one timer instead: their contexts wait in a list ordered by deadline,
// and the timer fires at the earliest, ends the contexts whose deadline
// passed and is armed again for the next. Requests end long before
// their timeout, as a rule, and leave the list without touching the
// timer while others are in flight.

// A deadlineList holds the contexts of a transport's requests in flight
// by deadline, and ends each at its deadline. The zero value is ready
// to use; it is safe for concurrent use.
type deadlineList struct {
	// mu guards every field, and the list links (prev, next, linked) of
	// the contexts in the list.
	mu         sync.Mutex
	head, tail *deadlineCtx
	timer      *time.Timer // nil until the first deadline
	armed      bool        // timer will fire, at at
	at         time.Time
}

// A deadlineCtx is the context of one request in flight (an attempt or
// a redirect hop): its parent's values, with a deadline that its list
// ends it at. Its parent is never cancelled (its Done is nil). It
// implements the AfterFunc method that package context looks for, so
// that the contexts net/http derives from it register with it rather
// than in a map of children (or, failing both, with a goroutine each).
// context.Cause reports context.DeadlineExceeded once the deadline ended
// it: the transport reports the cause it was given instead (timedOut).
type deadlineCtx struct {
	context.Context // the parent: Value
	dl              time.Time
	cause           error // the cause at the deadline
	list            *deadlineList

	done atomic.Value // chan struct{}: made by the first Done, or as c ends
	err  atomic.Value // error: set once, when c ends
	// mu guards the making of done, the setting of err, and after.
	mu sync.Mutex
	// after holds the functions registered by AfterFunc (net/http
	// registers one); nil once run or stopped.
	after  []func()
	after1 [1]func() // after's first array

	prev, next *deadlineCtx // guarded by list.mu
	linked     bool         // guarded by list.mu
}

// start makes c, a zero deadlineCtx, parent bounded by timeout from now
// (the time on the real clock); parent has no deadline of its own and is
// never cancelled. c.end ends it before (with context.Canceled), and must
// be called once the request is done.
func (l *deadlineList) start(c *deadlineCtx, parent context.Context, now time.Time, timeout time.Duration, cause error) {
	c.Context, c.dl, c.cause, c.list = parent, now.Add(timeout), cause, l
	if !l.link(c, now) {
		c.finish(context.DeadlineExceeded)
	}
}

// Deadline implements context.Context.
func (c *deadlineCtx) Deadline() (time.Time, bool) { return c.dl, true }

// Done implements context.Context.
func (c *deadlineCtx) Done() <-chan struct{} {
	if d := c.done.Load(); d != nil {
		return d.(chan struct{})
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	d := c.done.Load()
	if d == nil {
		d = make(chan struct{})
		c.done.Store(d)
	}
	return d.(chan struct{})
}

// Err implements context.Context.
func (c *deadlineCtx) Err() error {
	if err := c.err.Load(); err != nil {
		// Done is closed right after err is set: wait for it, so that
		// no caller sees an error while Done is still open (as
		// context's own contexts do).
		<-c.Done()
		return err.(error)
	}
	return nil
}

// AfterFunc arranges for f to be called once c is done (at once, in a
// goroutine of its own, if it is done already), as context.AfterFunc
// does; stop reports whether it kept f from being called.
func (c *deadlineCtx) AfterFunc(f func()) (stop func() bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err.Load() != nil {
		go f()
		return func() bool { return false }
	}
	if c.after == nil {
		c.after = c.after1[:0]
	}
	i := len(c.after)
	c.after = append(c.after, f)
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		if i >= len(c.after) || c.after[i] == nil {
			return false
		}
		c.after[i] = nil
		return true
	}
}

// end ends c before its deadline: the request is done.
func (c *deadlineCtx) end() {
	c.list.unlink(c)
	c.finish(context.Canceled)
}

// finish ends c with err, unless it has ended, and calls the functions
// registered with it.
func (c *deadlineCtx) finish(err error) {
	c.mu.Lock()
	if c.err.Load() != nil {
		c.mu.Unlock()
		return
	}
	c.err.Store(err)
	d, _ := c.done.Load().(chan struct{})
	if d == nil {
		d = make(chan struct{}) // nothing asked for Done yet
		c.done.Store(d)
	}
	close(d)
	after := c.after
	c.after = nil
	c.mu.Unlock()
	for _, f := range after {
		if f != nil {
			f()
		}
	}
}

// timedOut returns err, a request's error, as the cause the transport's
// deadline gave req's context if that deadline ended it. net/http reports
// context.Cause over HTTP/1, which for a deadlineCtx is
// context.DeadlineExceeded, and ctx.Err() in places over HTTP/2.
func timedOut(req *http.Request, err error) error {
	if err == nil || !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	ctx := req.Context()
	if c, ok := ctx.(*deadlineCtx); ok {
		if c.Err() == context.DeadlineExceeded {
			return c.cause
		}
		return err
	}
	if cause := context.Cause(ctx); cause != err && ctx.Err() == context.DeadlineExceeded && errors.Is(cause, context.DeadlineExceeded) {
		return cause // a context.WithTimeoutCause of bound's
	}
	return err
}

// link adds c to l in deadline order and reports whether its deadline
// is still ahead at now; if not, c is not added.
func (l *deadlineList) link(c *deadlineCtx, now time.Time) bool {
	if !c.dl.After(now) {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	// Deadlines mostly come in order: look from the tail.
	p := l.tail
	for p != nil && p.dl.After(c.dl) {
		p = p.prev
	}
	c.prev = p
	if p == nil {
		c.next, l.head = l.head, c
	} else {
		c.next, p.next = p.next, c
	}
	if c.next == nil {
		l.tail = c
	} else {
		c.next.prev = c
	}
	c.linked = true
	if !l.armed || c.dl.Before(l.at) {
		l.arm(c.dl, now)
	}
	return true
}

// unlink removes c from l, if it is there. The timer stays armed, even
// once no context waits: when it fires it finds the next deadline, or
// none and arms nothing more, so an idle transport holds one timer for at
// most its timeout. Stopping it whenever the list empties would arm it
// again with the next request, and arming a timer that becomes the
// earliest wakes the network poller (a write and a wake-up of a thread),
// which on a crawl whose requests come and go one by one cost about
// half a per cent of its CPU (bench/cpupage).
func (l *deadlineList) unlink(c *deadlineCtx) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !c.linked {
		return
	}
	if c.prev == nil {
		l.head = c.next
	} else {
		c.prev.next = c.next
	}
	if c.next == nil {
		l.tail = c.prev
	} else {
		c.next.prev = c.prev
	}
	c.prev, c.next, c.linked = nil, nil, false
}

// arm sets l's timer to fire at at. l.mu must be held.
func (l *deadlineList) arm(at, now time.Time) {
	l.armed, l.at = true, at
	if l.timer == nil {
		l.timer = time.AfterFunc(at.Sub(now), l.fire)
		return
	}
	l.timer.Reset(at.Sub(now))
}

// fire ends the contexts whose deadline passed, and arms the timer for
// the next deadline, if any.
func (l *deadlineList) fire() {
	now := time.Now()
	var due *deadlineCtx // a chain through next
	l.mu.Lock()
	for c := l.head; c != nil && !c.dl.After(now); c = l.head {
		l.head = c.next
		if l.head == nil {
			l.tail = nil
		} else {
			l.head.prev = nil
		}
		c.prev, c.linked = nil, false
		c.next, due = due, c
	}
	l.armed = false
	if l.head != nil {
		l.arm(l.head.dl, now)
	}
	l.mu.Unlock()
	for due != nil {
		c := due
		due, c.next = c.next, nil
		c.finish(context.DeadlineExceeded)
	}
}
