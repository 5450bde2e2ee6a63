package robotsmw

import (
	"testing"

	"github.com/gocolly/colly/v2"
	"golang.org/x/time/rate"
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

// A crawl leaves no ticket in the hand-off table: a page colly's cache
// (CacheDir) answers never reaches its gate, so none is handed over for it.
func TestHandoffNoneLeft(t *testing.T) {
	s := newSite(t, robots("", nil))
	for _, cached := range []bool{false, true} {
		g := &Guard{Rate: rate.Inf, FixedPace: true}
		opts := []colly.CollectorOption{g.Attach, colly.AllowURLRevisit()}
		if cached {
			opts = append(opts, colly.CacheDir(t.TempDir()))
		}
		c := colly.NewCollector(opts...)
		for i := 0; i < 3; i++ {
			if err := c.Visit(s.URL + "/page"); err != nil {
				t.Fatalf("cached %v: Visit %d = %v", cached, i, err)
			}
		}
		for i := range g.handoff {
			if tk := g.handoff[i].Load(); tk != nil {
				t.Errorf("cached %v: slot %d holds the ticket of %v after the crawl", cached, i, tk.orig)
			}
		}
	}
}
