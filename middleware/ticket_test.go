package robotsmw

import (
	"testing"

	"github.com/gocolly/colly/v2"
)

// The hand-off gives OnRequest's ticket to the gate of its own request
// only, once; a request whose slot another took over meanwhile, or one
// that collides with it, gets none.
func TestHandoffTable(t *testing.T) {
	var tab handoffTable
	r1 := &colly.Request{ID: 7}
	r2 := &colly.Request{ID: 7 + uint32(len(tab))} // the same slot
	tk1 := &ticket{strong: r1}
	tab.put(r1, tk1)
	if got := tab.take(r2); got != nil {
		t.Errorf("take(another request in the slot) = %p, want nil", got)
	}
	if got := tab.take(r1); got != tk1 {
		t.Errorf("take(r1) = %p, want its ticket %p", got, tk1)
	}
	if got := tab.take(r1); got != nil {
		t.Errorf("take(r1) again = %p, want nil: a ticket is handed over once", got)
	}
	tab.put(r1, tk1)
	tab.put(r2, &ticket{strong: r2}) // takes the slot over
	if got := tab.take(r1); got != nil {
		t.Errorf("take(r1) after r2 took the slot = %p, want nil", got)
	}
	if got := tab.take(r2); got == nil || got.strong != r2 {
		t.Errorf("take(r2) = %v, want r2's ticket", got)
	}
}
