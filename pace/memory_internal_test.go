package pace

import (
	"context"
	"testing"
	"unsafe"
)

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
