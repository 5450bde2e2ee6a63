package robotsmw

import (
	"context"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
	"weak"

	"github.com/gocolly/colly/v2"
)

// A visit is the Guard's one record of one colly request, from the moment
// colly calls OnRequest for it until its final outcome: everything the
// Guard knows about the request lives here, and nowhere else. It is found
// again by one key (see keyOf) at every later stage — its gate
// (OnRequestHeaders), the transport, each redirect hop, OnError, the
// deferral queue and the retry's own OnRequest — and dropped exactly once,
// by deliver (a final outcome) or at the end of a response read to its end
// (fetched). docs/design.md draws the way.
//
// A visit is used by one stage at a time, in the order of the request's
// life; the index hands it from one to the next. Its fields are written
// by the stage that holds it and read by the next, after the index's
// mutex (or colly's own hand-over between its callbacks and its client)
// ordered the two.
type visit struct {
	c      *colly.Collector // the collector the Guard is attached to
	method string
	// orig is the URL the request was admitted under, before redirects:
	// it names the request in errors.
	orig *url.URL
	key  reqKey // the key the index holds the visit under
	// keyed is key while the index holds the visit under it, else 0:
	// what a look-up without the index's mutex checks (visitIndex.recent).
	keyed atomic.Uintptr
	hops  []reqKey // the keys of its redirect hops in the index

	// r is the colly request of the current attempt. A sweep of the index
	// that finds the visit short of its gate holds the request weakly
	// instead (held): a user's later OnRequest callback may have aborted
	// it, and then no stage of the Guard sees it again, so once it is
	// collected the next sweep drops the visit. Past its gate (passed) it
	// is held strongly. All three are atomic: a sweep runs on whichever
	// request's OnRequest grew the index, beside the request's own stages.
	r      atomic.Pointer[colly.Request]
	held   atomic.Pointer[weak.Pointer[colly.Request]]
	passed atomic.Bool
	seq    uint32 // when the visit was indexed, in visits indexed before it

	// The current attempt, as the callbacks leave it for the transport.
	err   error // nil: admitted; else the outcome the transport returns
	gated bool  // the attempt (or its current hop) passed its host's gate
	taken bool  // the Guard's transport took the attempt
	lease uint64
	hop   bool // the current hop is a redirect's
	// redirectedBy is the host whose redirect is the attempt's last
	// response, until the Guard's redirect handler takes the next hop
	// up; should colly refuse that hop (a URL filter, a page visited
	// already), the redirect is the request's final response, counted
	// as its page (outcome).
	redirectedBy *host
	sent         int64         // when the attempt passed its gate, Unix ns on the Guard's clock
	waited       time.Duration // how long OnRequest waited, for Stats.Waits
	h            *host         // the host the attempt was admitted to
	// crawl is the collector's context (colly's Context) when the
	// attempt started: its end is final and nobody's fault.
	crawl       context.Context
	parseErrors bool // the collector's ParseHTTPErrorResponse for the attempt
	body        watchedBody
	// dl is the context that bounds the first attempt by the collector's
	// request timeout (guardTransport.bound), in the visit rather than an
	// allocation of its own; dlUsed says it was taken, and later attempts
	// and hops make their own. It is never reused: net/http may read it
	// after the request is done.
	dl     deadlineCtx
	dlUsed bool

	// outcome is what the transport returned for the attempt, kept for
	// OnError: net/http replaces a transport's error with a string when
	// the client's Timeout fired meanwhile.
	outcome error
	// reports are the failed attempts of a synchronous collector's request
	// retried in place, for OnError once colly's client returned
	// (reportAttempt, tellAttempts); while any wait, the visit stays
	// indexed past its response's end, for the Guard's OnResponse.
	reports []*DeferredError

	// Across attempts.
	failures int // failed attempts so far
	// retryOn is the host whose last failed attempt is to be sent again:
	// its Stats count it as retried once the retry is sent (send), and a
	// final outcome delivered before that forgets it (Guard.deliver). Stats
	// counters only grow.
	retryOn  *host
	reserved bool // the next attempt holds a position in its host's schedule
	// parse is the first failed attempt's ParseHTTPErrorResponse, which
	// every retry keeps (set once an attempt failed).
	parse parseSnapshot
	// reissuing says the Guard is sending the request again (Retry): the
	// next OnRequest under the key is its next attempt. Atomic, as a
	// sweep reads it.
	reissuing atomic.Bool
	// finished says deliver has delivered the final outcome; guarded by
	// the index's mutex.
	finished bool
}

// colly reports whether v is the visit of a colly request of the Guard's
// callbacks, whose failures the transport turns into retries.
func (v *visit) colly() bool { return v != nil && v.method != "" }

// request returns v's colly request, or nil if it is gone.
func (v *visit) request() *colly.Request {
	if r := v.r.Load(); r != nil {
		return r
	}
	if w := v.held.Load(); w != nil {
		return w.Value()
	}
	return nil
}

// attempt makes r the colly request of v's attempt, short of its gate.
func (v *visit) attempt(r *colly.Request) {
	v.passed.Store(false)
	v.r.Store(r)
	v.held.Store(nil)
}

// pass holds r, the request of v's attempt, strongly once it passed its
// gate: no callback of the user can abort it any more.
func (v *visit) pass(r *colly.Request) {
	v.passed.Store(true) // before r: see loosen
	v.r.Store(r)
}

// loosen holds the request of v's attempt weakly, unless it passed its
// gate; the index's mutex is held.
func (v *visit) loosen() {
	r := v.r.Load()
	if r == nil || v.passed.Load() {
		return
	}
	w := weak.Make(r)
	v.held.Store(&w)
	if v.r.CompareAndSwap(r, nil) && v.passed.Load() {
		// It passed its gate meanwhile: pass stored passed before r, so
		// either its r is the one kept, or passed is seen here.
		v.r.Store(r)
	}
}

// crawlDeadline reports whether dl, the deadline of a request's context,
// is the deadline of v's crawl: not the client's Timeout.
func (v *visit) crawlDeadline(dl time.Time) bool {
	if v == nil || v.crawl == nil {
		return false
	}
	cd, ok := v.crawl.Deadline()
	return ok && !cd.After(dl)
}

// crawlOver reports whether the crawl of v has ended. The end of a crawl's
// context (colly's Context, set by StdlibContext) is final and never the
// host's fault: a request it cut strikes no host, is not retried, and
// reaches OnError with colly's own error.
func (v *visit) crawlOver() bool {
	return v != nil && v.crawl != nil && v.crawl.Err() != nil
}

// A reqKey names a request in the index: the identity of the header map
// it is sent with. colly builds each request's http.Request around the
// header map its colly.Request points to (Request.Headers is
// &httpRequest.Header), hands that same map to every copy net/http makes
// of the request, and passes it on to Request.Retry's new attempt; a
// redirect hop gets a map of its own from net/http, which the redirect
// handler indexes too. So one key finds the visit from OnRequest, the
// gate, the transport, OnError and the retry alike, with no side table
// per stage. Two live requests that share one header map (a user's
// c.Request with the same http.Header twice) are told apart in OnRequest,
// which gives the second a copy of the map.
type reqKey unsafe.Pointer

// keyOf returns the key of a request sent with header h.
func keyOf(h http.Header) reqKey {
	return reqKey(*(*unsafe.Pointer)(unsafe.Pointer(&h)))
}

// Sweeps of the index: visits of requests that no stage will see again (a
// user's OnRequest or OnRequestHeaders callback aborted them after the
// Guard's) are dropped once their request is collected, or once maxVisitAge
// visits were indexed after them. A sweep runs whenever the index has
// doubled since the last one, so it costs O(1) per visit: it holds the
// requests short of their gates weakly (visit.loosen), which a request
// would cost on its way if it made its weak pointer itself, and drops the
// visits whose weakly held request was collected since.
const (
	maxVisitAge = 1 << 20
	sweepVisits = 1 << 12 // the smallest index that is swept
)

// A visitIndex holds the visits of the requests in flight, by key.
//
// A visit is stored in its key's slot of recent when the slot is free,
// which it is for most: a request then finds its visit, is indexed and is
// dropped without a map, whose buckets a crawl going round its requests
// finds cold at each step. A visit whose slot another holds, and the keys
// of redirect hops, are kept in m. A key is in one place at a time: its
// slot, if the visit there is indexed under it (its keyed says so), else
// m.
type visitIndex struct {
	// mu guards every field, and every write of recent; recent is read
	// without it too (get).
	mu        sync.Mutex
	m         map[reqKey]*visit // visits whose slot is taken, and hops' keys
	slotted   int               // visits in recent
	issued    uint64
	nextSweep int // len at which put sweeps

	// recent holds visits by a hash of their key: a slot's visit is the
	// one under a key only while its keyed says so. A visit dropped is
	// cleared from its slot, so that recent keeps no request alive.
	recent [recentVisits]atomic.Pointer[visit]
}

// recentVisits is the size of visitIndex.recent, 1<<recentBits: about
// four times the requests a crawl has between OnRequest and their ends,
// so that few share a slot.
const (
	recentBits   = 12
	recentVisits = 1 << recentBits
)

// recentSlot returns the slot of k in recent: a multiplicative hash of
// the map's address (header maps are 48 octets, and are often allocated
// next to one another).
func (x *visitIndex) recentSlot(k reqKey) *atomic.Pointer[visit] {
	a := uint64(uintptr(k) >> 4)
	return &x.recent[a*0x9E3779B97F4A7C15>>(64-recentBits)]
}

// get returns the visit under k, or nil.
func (x *visitIndex) get(k reqKey) *visit {
	if v := x.inSlot(k); v != nil {
		return v
	}
	x.mu.Lock()
	v := x.lookup(k)
	x.mu.Unlock()
	return v
}

// inSlot returns the visit under k in its slot, or nil; it needs no lock.
func (x *visitIndex) inSlot(k reqKey) *visit {
	if v := x.recentSlot(k).Load(); v != nil && k != nil && v.keyed.Load() == uintptr(k) {
		return v
	}
	return nil
}

// lookup is get with x.mu held.
func (x *visitIndex) lookup(k reqKey) *visit {
	if v := x.inSlot(k); v != nil {
		return v
	}
	return x.m[k]
}

// indexed reports whether v is indexed under its key; x.mu is held.
func (x *visitIndex) indexed(v *visit) bool {
	if v.key == nil {
		return x.m[nil] == v
	}
	return v.keyed.Load() == uintptr(v.key)
}

// put indexes v under its key.
func (x *visitIndex) put(v *visit) {
	x.mu.Lock()
	x.putLocked(v)
	x.mu.Unlock()
}

// putLocked is put with x.mu held.
func (x *visitIndex) putLocked(v *visit) {
	x.issued++
	v.seq = uint32(x.issued)
	x.store(v.key, v)
	if x.len() >= max(x.nextSweep, sweepVisits) {
		x.sweep()
	}
}

// store indexes v under k, its key, in k's slot if it is free, else in
// m; x.mu is held.
func (x *visitIndex) store(k reqKey, v *visit) {
	x.replace(k, v)
	v.keyed.Store(uintptr(k))
	if s := x.recentSlot(k); k != nil && s.Load() == nil {
		delete(x.m, k) // a hop's stale key, if any (see replace)
		s.Store(v)
		x.slotted++
		return
	}
	x.mapStore(k, v)
}

// mapStore sets m[k] to v; x.mu is held.
func (x *visitIndex) mapStore(k reqKey, v *visit) {
	if x.m == nil {
		x.m = make(map[reqKey]*visit)
	}
	x.m[k] = v
}

// putNew indexes v under its key unless a visit is there already, and
// returns the visit indexed under the key.
func (x *visitIndex) putNew(v *visit) *visit {
	x.mu.Lock()
	defer x.mu.Unlock()
	if old := x.lookup(v.key); old != nil {
		return old
	}
	x.putLocked(v)
	return v
}

// putHop indexes v under k too, the key of one of its redirect hops.
func (x *visitIndex) putHop(v *visit, k reqKey) {
	x.mu.Lock()
	x.replace(k, v)
	x.mapStore(k, v)
	v.hops = append(v.hops, k)
	x.mu.Unlock()
}

// replace unindexes the visit under k, if another than v, as v takes k
// (a stale visit whose request's header map was collected, and whose
// address a new map took); x.mu is held. A hop's key of another visit
// under k is overwritten, or deleted, by the caller.
func (x *visitIndex) replace(k reqKey, v *visit) {
	if old := x.lookup(k); old != nil && old != v && old.key == k && x.indexed(old) {
		x.unindex(old)
	}
}

// rekey moves v to key k (its request was given a header map of its own).
func (x *visitIndex) rekey(v *visit, k reqKey) {
	x.mu.Lock()
	if x.indexed(v) {
		x.unindex(v)
	}
	v.key = k
	x.store(k, v)
	x.mu.Unlock()
}

// drop removes v, and its hops' keys, from the index; it reports whether
// v was still there, so that exactly one caller acts on its end.
func (x *visitIndex) drop(v *visit) bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.dropLocked(v)
}

// dropLocked is drop with x.mu held.
func (x *visitIndex) dropLocked(v *visit) bool {
	for _, k := range v.hops {
		if x.m[k] == v {
			delete(x.m, k)
		}
	}
	v.hops = v.hops[:0]
	if !x.indexed(v) {
		return false
	}
	x.unindex(v)
	return true
}

// unindex removes v, indexed under its key, from recent or m; x.mu is
// held.
func (x *visitIndex) unindex(v *visit) {
	v.keyed.Store(0)
	if s := x.recentSlot(v.key); v.key != nil && s.Load() == v {
		s.Store(nil)
		x.slotted--
		return
	}
	delete(x.m, v.key)
}

// finish drops v and reports whether this is the first finish of v: its
// final outcome is delivered once, whoever else dropped it before.
func (x *visitIndex) finish(v *visit) bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.dropLocked(v)
	first := !v.finished
	v.finished = true
	return first
}

// len returns the number of keys indexed; x.mu is held.
func (x *visitIndex) len() int {
	return x.slotted + len(x.m)
}

// count returns the number of keys indexed.
func (x *visitIndex) count() int {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.len()
}

// sweep drops the visits of collected requests and of old ones; x.mu is
// held.
func (x *visitIndex) sweep() {
	now := uint32(x.issued)
	check := func(v *visit) {
		switch {
		case now-v.seq > maxVisitAge:
			x.dropLocked(v)
		case v.reissuing.Load() || v.passed.Load():
		case v.r.Load() != nil:
			v.loosen()
		case v.request() == nil:
			x.dropLocked(v)
		}
	}
	for i := range x.recent {
		if v := x.recent[i].Load(); v != nil {
			check(v)
		}
	}
	for k, v := range x.m {
		if k == v.key && x.indexed(v) { // not a hop's key: dropped with its visit
			check(v)
		}
	}
	x.nextSweep = 2 * x.len()
}
