package pace

import (
	"context"
	"testing"
	"time"
	"unsafe"
)

// A Hint to a Memory's state of a host (a Guard's own schedule) is that
// state, shared with look-ups by name, until a sweep forgets the host:
// then the next call looks the host up again.
func TestMemoryHint(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	m := &Memory{Now: func() time.Time { return now }}
	a := Ask{Limit: time.Hour, InFlight: 1}
	var hint Hint
	s, err := m.ReserveHint("a.test", a, &hint, time.Time{})
	if err != nil || s.Lease == 0 {
		t.Fatalf("ReserveHint(a.test) = %+v, %v, want a lease", s, err)
	}
	if hint.p == nil || hint.p != m.hosts["a.test"] {
		t.Fatalf("ReserveHint(a.test) left hint %p, want the host's state %p", hint.p, m.hosts["a.test"])
	}
	if s2, err := m.Reserve(context.Background(), "a.test", a); err != nil || s2.Lease != 0 || s2.InFlight != 1 {
		t.Errorf("Reserve(a.test) by name = %+v, %v, want no lease: the hinted one holds the place", s2, err)
	}
	if _, err := m.ReleaseHint("a.test", Release{Lease: s.Lease}, &hint, time.Time{}); err != nil {
		t.Fatalf("ReleaseHint(a.test): %v", err)
	}
	old := hint.p
	now = now.Add(2 * DefaultIdle)
	if _, err := m.Reserve(context.Background(), "b.test", a); err != nil { // sweeps: a.test is forgotten
		t.Fatalf("Reserve(b.test): %v", err)
	}
	if _, ok := m.hosts["a.test"]; ok || !old.gone {
		t.Fatalf("a.test kept after a sweep (gone %v), want it forgotten", old.gone)
	}
	if _, err := m.ReserveHint("a.test", a, &hint, time.Time{}); err != nil {
		t.Fatalf("ReserveHint(a.test) after the sweep: %v", err)
	}
	if hint.p == old || hint.p != m.hosts["a.test"] {
		t.Errorf("ReserveHint(a.test) after the sweep used hint %p (old %p), want the new state %p", hint.p, old, m.hosts["a.test"])
	}
}

// A Memory keeps its own copy of a host's name: the caller's string may
// share memory with much more (a Guard's host state), which the Memory
// must not keep alive after the caller forgot it.
func TestMemoryCopiesHostName(t *testing.T) {
	buf := []byte("example.com and much more that the name shares memory with")
	name := unsafe.String(&buf[0], len("example.com"))
	var m Memory
	if _, err := m.Reserve(context.Background(), name, Ask{}); err != nil {
		t.Fatalf("Reserve(%q) = %v", name, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for k := range m.hosts {
		if unsafe.StringData(k) == &buf[0] {
			t.Errorf("Memory's key %q is the caller's string, want a copy", k)
		}
	}
}
