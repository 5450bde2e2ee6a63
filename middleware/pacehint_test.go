package robotsmw

import (
	"context"
	"testing"
	"time"
)

// A hint to a MemoryPacer's state of a host (the Guard's own Pacer) is
// that state, shared with look-ups by name, until a sweep forgets the
// host: then the next call looks the host up again.
func TestMemoryPacerHint(t *testing.T) {
	clock := newFakeClock()
	m := &MemoryPacer{Now: clock.now}
	a := Ask{Limit: time.Hour, InFlight: 1}
	var hint *pace
	s, err := m.reserve("a.test", a, &hint, time.Time{})
	if err != nil || s.Lease == 0 {
		t.Fatalf("reserve(a.test) = %+v, %v, want a lease", s, err)
	}
	if hint == nil || hint != m.hosts["a.test"] {
		t.Fatalf("reserve(a.test) left hint %p, want the host's state %p", hint, m.hosts["a.test"])
	}
	if s2, err := m.Reserve(context.Background(), "a.test", a); err != nil || s2.Lease != 0 || s2.InFlight != 1 {
		t.Errorf("Reserve(a.test) by name = %+v, %v, want no lease: the hinted one holds the place", s2, err)
	}
	if _, err := m.release("a.test", Release{Lease: s.Lease}, &hint, time.Time{}); err != nil {
		t.Fatalf("release(a.test): %v", err)
	}
	old := hint
	clock.advance(2 * DefaultPacerIdle)
	if _, err := m.Reserve(context.Background(), "b.test", a); err != nil { // sweeps: a.test is forgotten
		t.Fatalf("Reserve(b.test): %v", err)
	}
	if _, ok := m.hosts["a.test"]; ok || !old.gone {
		t.Fatalf("a.test kept after a sweep (gone %v), want it forgotten", old.gone)
	}
	if _, err := m.reserve("a.test", a, &hint, time.Time{}); err != nil {
		t.Fatalf("reserve(a.test) after the sweep: %v", err)
	}
	if hint == old || hint != m.hosts["a.test"] {
		t.Errorf("reserve(a.test) after the sweep used hint %p (old %p), want the new state %p", hint, old, m.hosts["a.test"])
	}
}
