package policy

import (
	"container/list"
	"context"
	"errors"
	"sync"
	"time"
)

// A Store keeps a [Cache]'s records, one per origin. It is the seam where a
// storage shared by a fleet of crawlers replaces the in-memory default; the
// fetching, the status rules and the de-duplication of fetches stay in
// Cache. A Store must be safe for concurrent use by multiple goroutines.
//
// A Store may forget any record at any time (to bound its size, or because
// it expired); the Cache then fetches robots.txt again. A record should be
// kept at least until its Expires time, and longer while the origin is
// unreachable, since FailingSince and the last good copy are what the
// 30-day rule (RFC 9309 §2.3.1.4) and the last-good-copy rule need.
type Store interface {
	// Load returns the record for origin and whether there is one. An
	// error means the store could not be read; the Cache then treats the
	// origin as unreachable (it fails closed).
	Load(ctx context.Context, origin string) (Record, bool, error)
	// Save stores the record for origin, replacing any earlier one. The
	// Cache uses the fetched policy whether or not Save succeeds; after a
	// failed Save the next look-up fetches robots.txt again.
	Save(ctx context.Context, origin string, r Record) error
}

// A Leaser is a [Store] shared by several Caches (the members of a fleet
// of crawlers) that lets one of them at a time fetch an origin's
// robots.txt, so that the fleet fetches it once per expiry.
//
// Before it fetches robots.txt for origin, a Cache whose Store is a
// Leaser calls Lease. Lease waits, for a bounded time, until either the
// caller holds the origin's lease (release is not nil: the Cache fetches,
// saves the record, then calls release) or another member has saved a
// record that is fresh at now (fresh is true; the Cache uses rec and does
// not fetch). When the wait runs out, or the lease cannot be had because
// the store is unreachable, Lease returns an error and the Cache fetches
// anyway: a crawler never waits on its store for ever.
type Leaser interface {
	Store
	Lease(ctx context.Context, origin string) (rec Record, fresh bool, release func(), err error)
}

// ErrStore is wrapped by the error of a look-up whose Store could not be
// read: the look-up has no verdict, and may succeed later.
var ErrStore = errors.New("policy: store unavailable")

// A Record is what a [Store] keeps for one origin: the outcome of the last
// robots.txt fetch, the back-off state and the last good copy. The Cache
// turns it into an [Entry] at the time of each look-up.
//
// Every field is plain data except Robots, so a shared store can serialise
// a Record: it keeps Body (at most [MaxSize] bytes) and the other fields,
// leaves Robots out, and returns Robots == nil from Load; the Cache then
// parses Body again, on every look-up, so such a store should keep recently
// used records in memory too. Err may be stored as its URL, StatusCode and
// error text. A store that keeps records in memory, like the default one,
// keeps Robots and may drop Body.
type Record struct {
	State      State     // what the last fetch found
	StatusCode int       // HTTP status of the last fetch; 0 if none arrived
	FetchedAt  time.Time // when the last fetch completed
	Expires    time.Time // when robots.txt is fetched again
	RetryAt    time.Time // for StateUnreachable: equal to Expires
	Err        *FetchError

	// Failures counts the consecutive fetches, ending with the last one,
	// that found robots.txt unreachable; it sets the back-off and is
	// reported as Entry.Failures.
	Failures int
	// FailingSince is when the first of those fetches completed; zero when
	// the last fetch did not find robots.txt unreachable.
	FailingSince time.Time

	// GoodState is the outcome of the last fetch that gave a verdict about
	// the site: StateParsed (a 2xx body) or StateUnavailable (allow all);
	// zero if none did. It is the last good copy kept while a refresh
	// fails (docs/robots-semantics.md#unreachable).
	GoodState State
	// Body is the 2xx body of the last good copy, for GoodState ==
	// StateParsed. It may be nil when Robots is set.
	Body []byte
	// Robots is Body parsed. It may be nil when Body is set.
	Robots *Robots
	// URL is the URL the last good copy's body came from when robots.txt
	// was redirected (RFC 9309 §2.3.1.2); empty when it came from the
	// origin's own /robots.txt or there is no body.
	URL string
}

// memStore is the default Store: records in memory, at most max of them,
// the least recently used forgotten first.
type memStore struct {
	max int

	// mu guards order and byKey.
	mu    sync.Mutex
	order list.List // of *memItem, most recently used first
	byKey map[string]*list.Element
}

type memItem struct {
	origin string
	rec    Record
}

func newMemStore(max int) *memStore {
	return &memStore{max: max, byKey: make(map[string]*list.Element)}
}

func (s *memStore) Load(_ context.Context, origin string) (Record, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.byKey[origin]
	if !ok {
		return Record{}, false, nil
	}
	s.order.MoveToFront(e)
	return e.Value.(*memItem).rec, true, nil
}

func (s *memStore) Save(_ context.Context, origin string, r Record) error {
	if r.Robots != nil {
		r.Body = nil // the compiled copy is all a memory store needs
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.byKey[origin]; ok {
		e.Value.(*memItem).rec = r
		s.order.MoveToFront(e)
		return nil
	}
	s.byKey[origin] = s.order.PushFront(&memItem{origin: origin, rec: r})
	for s.order.Len() > s.max {
		e := s.order.Back()
		s.order.Remove(e)
		delete(s.byKey, e.Value.(*memItem).origin)
	}
	return nil
}

// len returns the number of records kept.
func (s *memStore) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.order.Len()
}
