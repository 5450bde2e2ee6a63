package robotsmw

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"runtime"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gocolly/colly/v2"
	"golang.org/x/time/rate"
)

// Two live requests with one header map (a user's c.Request with the same
// http.Header twice) are two requests: OnRequest gives the second a copy
// of the map, so each has a visit of its own under its own key. (colly
// itself writes to the map of each request it fetches, so an async crawl
// that shares one races in colly; the Guard still keeps them apart.)
func TestVisitSharedHeaderMap(t *testing.T) {
	s := newSite(t, robots("", nil))
	g := &Guard{Rate: rate.Inf}
	c := colly.NewCollector(g.Attach)
	hdr := http.Header{"X-Shared": {"yes"}}
	r1 := &colly.Request{URL: mustURL(t, s.URL+"/p1"), Method: "GET", Headers: &hdr}
	h2 := hdr // the same map
	r2 := &colly.Request{URL: mustURL(t, s.URL+"/p2"), Method: "GET", Headers: &h2}
	g.onRequest(c, r1)
	g.onRequest(c, r2)
	v1, v2 := g.visits.get(keyOf(*r1.Headers)), g.visits.get(keyOf(*r2.Headers))
	switch {
	case v1 == nil || v2 == nil:
		t.Fatalf("onRequest left visits %v and %v, want one each", v1, v2)
	case v1 == v2 || keyOf(*r1.Headers) == keyOf(*r2.Headers):
		t.Errorf("two live requests with one header map share a visit or a key")
	case v1.orig.Path != "/p1" || v2.orig.Path != "/p2":
		t.Errorf("visits of %s and %s, want /p1 and /p2", v1.orig, v2.orig)
	case r2.Headers.Get("X-Shared") != "yes":
		t.Errorf("the second request's copy of the map lost its fields: %v", *r2.Headers)
	}
	g.visits.drop(v1)
	g.visits.drop(v2)
	if n := g.visits.count(); n != 0 {
		t.Errorf("%d visits left, want 0", n)
	}
}

// A retry finds its first attempt's visit by the key colly carries over
// (the header map): its failures add up across attempts, and the visit is
// gone once the request's outcome is final.
func TestVisitCarriedAcrossRetries(t *testing.T) {
	s := newSite(t, robots("", func(w http.ResponseWriter, r *http.Request) bool {
		if r.URL.Path == "/always503" {
			w.WriteHeader(http.StatusServiceUnavailable)
			return true
		}
		return false
	}))
	var rep reports
	g := withReports(&Guard{Rate: rate.Inf, Backoff: 20 * time.Millisecond, MaxRetries: 2, MaxRobotsFailures: 2}, &rep)
	c := colly.NewCollector(g.Attach, colly.Async())
	c.Visit(s.URL + "/always503")
	waitOrFail(t, "Wait", c.Wait)
	if n := s.count("/always503"); n != 3 {
		t.Errorf("server saw /always503 %d times, want 1 + MaxRetries 2", n)
	}
	if errs := rep.get(s.URL + "/always503"); len(errs) != 1 || !IsFinal(errs[0]) {
		t.Errorf("ErrorHandler(/always503) = %v, want one final outcome", errs)
	}
	if n := g.visits.count(); n != 0 {
		t.Errorf("%d visits left after the crawl, want 0", n)
	}
}

// The index finds a visit through recent without its mutex, and never
// hands out a visit under a key it is not indexed under: after a drop, a
// rekey, or with another key in the same slot.
func TestVisitIndexRecent(t *testing.T) {
	var x visitIndex
	headers := make([]http.Header, 3*recentVisits)
	visits := make([]*visit, len(headers))
	for i := range headers {
		headers[i] = http.Header{}
		visits[i] = &visit{key: keyOf(headers[i])}
		visits[i].passed.Store(true) // past its gate: a sweep keeps it
		if got := x.putNew(visits[i]); got != visits[i] {
			t.Fatalf("putNew(visit %d) = %p, want %p", i, got, visits[i])
		}
	}
	for i, h := range headers { // more keys than slots: some share one
		if got := x.get(keyOf(h)); got != visits[i] {
			t.Fatalf("get(key %d) = %p, want %p", i, got, visits[i])
		}
	}
	v := visits[0]
	if !x.drop(v) || x.get(keyOf(headers[0])) != nil || x.recentSlot(keyOf(headers[0])).Load() == v {
		t.Errorf("get(key 0) after drop found the visit, or recent kept it")
	}
	v = visits[1]
	moved := http.Header{}
	x.rekey(v, keyOf(moved))
	if x.get(keyOf(headers[1])) != nil || x.get(keyOf(moved)) != v {
		t.Errorf("after rekey get(old key) = %p, get(new key) = %p; want nil, %p", x.get(keyOf(headers[1])), x.get(keyOf(moved)), v)
	}
}

// putHop under a key a stale visit is still indexed under (its aborted
// request's header map was collected and its address reused by the
// hop's) unindexes the stale one: recent must not hand it out.
func TestVisitIndexPutHopOverStale(t *testing.T) {
	var x visitIndex
	hdr := http.Header{}
	k := keyOf(hdr)
	stale := &visit{key: k}
	x.put(stale)
	v := &visit{key: keyOf(http.Header{})}
	x.put(v)
	x.putHop(v, k)
	x.mu.Lock()
	inMap := x.m[k]
	x.mu.Unlock()
	if got := x.get(k); got != inMap {
		t.Errorf("get(k) = %p (stale %p), but m[k] = %p (the hop's visit)", got, stale, inMap)
	}
	x.drop(v)
	if got := x.get(k); got != nil {
		t.Errorf("after drop(v), get(k) = %p (stale %p), want nil; recent still holds it: %v", got, stale, x.recentSlot(k).Load() == stale)
	}
}

// Two keys that share a slot: the first is kept in the slot, the second
// in the map; either is found, dropped and indexed again wherever its
// slot then allows, and the index counts both places.
func TestVisitIndexSharedSlot(t *testing.T) {
	var x visitIndex
	var keep []http.Header // live maps: their addresses stay theirs
	bySlot := map[*atomic.Pointer[visit]]http.Header{}
	var a, b http.Header
	for a == nil {
		h := http.Header{}
		keep = append(keep, h)
		s := x.recentSlot(keyOf(h))
		if o, ok := bySlot[s]; ok {
			a, b = o, h
		}
		bySlot[s] = h
	}
	va, vb := &visit{key: keyOf(a)}, &visit{key: keyOf(b)}
	x.put(va)
	x.put(vb)
	if x.recentSlot(va.key).Load() != va || x.m[vb.key] != vb || x.count() != 2 {
		t.Fatalf("put(a), put(b) sharing a slot: slot holds %p, m[b] = %p, count() = %d; want a, b, 2", x.recentSlot(va.key).Load(), x.m[vb.key], x.count())
	}
	if x.get(va.key) != va || x.get(vb.key) != vb {
		t.Errorf("get(a), get(b) = %p, %p; want %p, %p", x.get(va.key), x.get(vb.key), va, vb)
	}
	if !x.drop(va) || x.get(va.key) != nil || x.get(vb.key) != vb || x.count() != 1 {
		t.Errorf("after drop(a): get(a) = %p, get(b) = %p, count() = %d; want nil, %p, 1", x.get(va.key), x.get(vb.key), x.count(), vb)
	}
	vc := &visit{key: keyOf(a)}
	if got := x.putNew(vc); got != vc || x.recentSlot(vc.key).Load() != vc {
		t.Errorf("putNew(a again) = %p, in slot %v; want %p in the freed slot", got, x.recentSlot(vc.key).Load() == vc, vc)
	}
	if x.drop(va) {
		t.Errorf("drop(a's old visit) = true after a new visit took its key")
	}
	if !x.drop(vb) || !x.drop(vc) || x.count() != 0 || len(x.m) != 0 {
		t.Errorf("after dropping all: count() = %d, len(m) = %d; want 0, 0", x.count(), len(x.m))
	}
	runtime.KeepAlive(keep)
}

// checkIndex reports the first broken invariant of x: a slot's visit is
// indexed under its key, which hashes to that slot, and is not in m too;
// slotted counts the slots in use; m holds visits under their keys or
// their hops' keys.
func checkIndex(x *visitIndex) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	n := 0
	for i := range x.recent {
		v := x.recent[i].Load()
		if v == nil {
			continue
		}
		n++
		if v.keyed.Load() != uintptr(v.key) || x.recentSlot(v.key) != &x.recent[i] {
			return fmt.Errorf("slot %d holds a visit not indexed under a key of the slot", i)
		}
		if w, ok := x.m[v.key]; ok {
			return fmt.Errorf("key of slot %d is in m too (%p)", i, w)
		}
	}
	if n != x.slotted {
		return fmt.Errorf("slotted = %d, but %d slots are in use", x.slotted, n)
	}
	for k, v := range x.m {
		if v.key == k {
			if v.keyed.Load() != uintptr(k) {
				return fmt.Errorf("m holds a visit under its key that is not indexed")
			}
			continue
		}
		if !slices.Contains(v.hops, k) {
			return fmt.Errorf("m holds a visit under a key neither its own nor a hop's")
		}
	}
	return nil
}

// Random puts, putNews, putHops, rekeys and drops over live header maps
// (nil keys among them, and more visits than slots for some) keep the
// index's invariants, get never hands out a visit under a key it is not
// indexed under, and dropping every visit leaves the index empty.
func TestVisitIndexInvariants(t *testing.T) {
	var x visitIndex
	rng := rand.New(rand.NewPCG(1, 2))
	hdrs := make([]http.Header, 2*recentVisits)
	for i := range hdrs {
		hdrs[i] = http.Header{}
	}
	var live []*visit
	for step := 0; step < 20000; step++ {
		k := keyOf(hdrs[rng.IntN(len(hdrs))])
		if rng.IntN(50) == 0 {
			k = nil
		}
		op := rng.IntN(6)
		var call string
		switch {
		case op <= 1:
			v := &visit{key: k}
			v.passed.Store(rng.IntN(4) != 0) // the rest may be swept
			if op == 0 {
				call = "put"
				x.put(v)
			} else if call = "putNew"; x.putNew(v) != v {
				continue
			}
			live = append(live, v)
		case op == 2 && len(live) > 0:
			call = "putHop"
			x.putHop(live[rng.IntN(len(live))], k)
		case op == 3 && len(live) > 0:
			call = "rekey"
			x.rekey(live[rng.IntN(len(live))], k)
		case len(live) > 0:
			call = "drop"
			i := rng.IntN(len(live))
			x.drop(live[i])
			live[i] = live[len(live)-1]
			live = live[:len(live)-1]
		}
		if err := checkIndex(&x); err != nil {
			t.Fatalf("step %d, after %s: %v", step, call, err)
		}
		if got := x.get(k); got != nil && got.keyed.Load() != uintptr(k) && !slices.Contains(got.hops, k) {
			t.Fatalf("step %d, after %s: get(k) = %p, a visit indexed under neither k nor a hop k", step, call, got)
		}
	}
	for _, v := range live {
		x.drop(v)
	}
	if err := checkIndex(&x); err != nil || x.count() != 0 || len(x.m) != 0 {
		t.Fatalf("after dropping every visit: %v, count() = %d, len(m) = %d; want nil, 0, 0", err, x.count(), len(x.m))
	}
	runtime.KeepAlive(hdrs)
}
