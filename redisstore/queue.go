package redisstore

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/gocolly/colly/v2"
)

// defaultMaxQueue is the capacity of the shared queue when
// Fleet.MaxQueue is zero.
const defaultMaxQueue = 10_000_000

// popWaitMax bounds one wait of GetRequest for a host to be ready, so
// that it sees new requests and a stopping Run.
const popWaitMax = 250 * time.Millisecond

// A Queue is colly's queue.Storage kept in the fleet's Redis: the shared
// frontier, a queue per host and a sorted set of hosts by the time each
// may go next (see frontier.go). Get it from Fleet.Queue, pass it to
// queue.New, and run the queue with Fleet.Run, which tells when the whole
// fleet's work is done; the zero value is not usable.
//
// Requests are deduplicated as they are added: a request (colly's id:
// its URL, normalised as colly does, and body) is queued once per crawl,
// however many members add it, in the same atomic step that pushes it.
// MaxQueue counts requests queued, not duplicates. A request popped is
// held under a lease that the member's heartbeat renews; if the member
// dies, any other member gives it back to the front of its host's queue
// within two TTLs. GetRequest takes the front request of a host that may
// go now, waiting (a quarter second at a time) when every host with
// requests is pacing. A host's requests go by level, then in the order
// they came: the level is the request's priority (PriorityKey in its
// colly Ctx), or its depth, so each host is crawled breadth first; a
// request given back by a dead member, or added with AddFront, goes
// before the others of its level. Across hosts, of those that may go now
// (the 16 ready longest in a shard), the host whose best request has the
// highest priority goes first; on a Redis Cluster, where hosts are spread
// over Fleet.Shards shards that members take from in turn, this holds
// within each shard.
//
// During a Run, requests added (FollowLinks's links) are sent with the
// end of the page that found them, in one round trip; outside a Run each
// is sent at once. Calls wait while Redis cannot be reached (see
// Fleet.OnDown), up to Run's ctx or Close, and stop with an error
// wrapping ErrCrawlLost if the crawl's state in Redis is gone.
//
// A Queue is safe for concurrent use by multiple goroutines.
type Queue struct {
	f *Fleet

	// halts counts the Runs whose ctx ended while their colly queue
	// runs. While it is above zero, QueueSize reports an empty queue and
	// GetRequest no request, so that colly's queue loop ends once the
	// requests under way are done. (colly's Queue.Stop cannot be called
	// while Queue.Run runs: its loop reads the flag without a lock.)
	halts atomic.Int32
	// running is set while Fleet.Run runs.
	running atomic.Bool
}

// Queue returns the fleet's shared colly queue storage. Every call
// returns the same Queue.
func (f *Fleet) Queue() *Queue {
	f.init()
	return f.queue
}

// Init implements queue.Storage. It does nothing: the Fleet holds the
// Redis connection.
func (q *Queue) Init() error { return nil }

// AddRequest implements queue.Storage: it adds a serialised request to
// the shared frontier unless the crawl has seen it already (then it does
// nothing), or returns colly.ErrQueueFull if the fleet queues
// Fleet.MaxQueue requests (as last seen; the shard's script has the last
// word, and counts what it refuses in Stats).
func (q *Queue) AddRequest(r []byte) error {
	return q.add(r, false)
}

// AddFront is AddRequest at the front of the request's host's queue: it
// goes before the host's other requests.
func (q *Queue) AddFront(r []byte) error {
	return q.add(r, true)
}

func (q *Queue) add(r []byte, front bool) error {
	f := q.f
	fr := &f.front
	if err := fr.failed(); err != nil {
		return err
	}
	a, err := f.encode(r)
	if err != nil {
		return err
	}
	a.front = front
	limit := f.MaxQueue
	if limit <= 0 {
		limit = defaultMaxQueue
	}
	var queued int64
	for i := range fr.pending {
		queued += fr.pending[i].Load()
	}
	fr.mu.Lock()
	queued += int64(len(fr.adds))
	if queued >= int64(limit) {
		fr.mu.Unlock()
		return colly.ErrQueueFull
	}
	fr.adds = append(fr.adds, a)
	fr.mu.Unlock()
	if q.running.Load() {
		return nil // sent with the end of the page, or the next pop
	}
	return fr.commit(fr.ctx(), false)
}

// GetRequest implements queue.Storage: it takes the front request of a
// host that may go now and returns it, or returns nil and no error if the
// shared queue is empty (or a Run of this Fleet is stopping).
func (q *Queue) GetRequest() ([]byte, error) {
	f := q.f
	fr := &f.front
	ctx := fr.ctx()
	n := len(fr.pending)
	gap := f.hostGap()
	for {
		if q.halts.Load() > 0 || fr.failed() != nil || ctx.Err() != nil {
			q.empty()
			return nil, fr.failed()
		}
		start := int(fr.next.Add(1))
		wait := int64(-1)
		for k := 0; k < n; k++ {
			i := (start + k) % n
			if n > 1 && fr.pending[i].Load() == 0 {
				continue
			}
			p, err := fr.pop(ctx, i, gap)
			if err != nil {
				q.empty()
				return nil, err
			}
			if p.entry != "" {
				r, err := f.decode(p.entry, p.returned)
				if err != nil {
					return nil, err
				}
				return r, nil
			}
			if p.wait >= 0 && (wait < 0 || p.wait < wait) {
				wait = p.wait
			}
		}
		if fr.waiting() {
			// Links added outside a page's end: send them, then look
			// again. (A page's links go with its end.)
			if err := fr.commit(ctx, false); err != nil {
				q.empty()
				return nil, err
			}
			continue
		}
		if wait < 0 {
			q.empty()
			return nil, nil
		}
		t := time.NewTimer(min(time.Duration(wait+1)*time.Millisecond, popWaitMax))
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
		case <-f.closed:
			t.Stop()
			q.empty()
			return nil, ErrClosed
		}
	}
}

// empty sets the known queue size to zero, so that colly's loop stops
// asking for requests that GetRequest does not return.
func (q *Queue) empty() {
	for i := range q.f.front.pending {
		q.f.front.pending[i].Store(0)
	}
}

// QueueSize implements queue.Storage: it returns the number of requests
// queued in the fleet as this member last saw it (each pop and each
// commit tells), without asking Redis, or 0 while a Run of this Fleet is
// stopping.
func (q *Queue) QueueSize() (int, error) {
	fr := &q.f.front
	if q.halts.Load() > 0 {
		return 0, nil
	}
	if err := fr.failed(); err != nil {
		return 0, err
	}
	var n int64
	for i := range fr.pending {
		n += max(fr.pending[i].Load(), 0)
	}
	fr.mu.Lock()
	n += int64(len(fr.adds))
	fr.mu.Unlock()
	return int(n), nil
}

// hostGap returns how long a host waits after a pop before its next
// request is popped: its interval under the Guard's Rate, as a hint (the
// Pacer has the last word).
func (f *Fleet) hostGap() time.Duration {
	g := f.guard.Load()
	if g == nil || g.Rate <= 0 || float64(g.Rate) > 1e6 {
		return 0
	}
	return time.Duration(float64(time.Second) / float64(g.Rate))
}

// colly's serialised request, for the fields the fleet reads and writes.
type serialRequest struct {
	URL     string
	Method  string
	Depth   int
	Body    []byte         `json:",omitempty"`
	ID      uint32         `json:",omitempty"`
	Ctx     map[string]any `json:",omitempty"`
	Headers map[string][]string
	Host    string `json:",omitempty"`
}

// ctxLease is the colly Ctx key under which a popped request carries its
// lease ("HOST\nITEM"), so that its end can be told to the fleet;
// ctxReturned marks one given back by a dead member ("1", then "2" once
// it was let go before its host's schedule: see checkLease).
const (
	ctxLease    = "robotsmw.fleet.lease"
	ctxReturned = "robotsmw.fleet.returned"
)

// PriorityKey is the colly Ctx key of a request's priority in the shared
// frontier: 0 (first) to 15 (last), among the requests of its host. A
// request without one has its depth as its priority (15 beyond), so each
// host's requests go breadth first.
const PriorityKey = "robotsmw.priority"

// encode returns the add of serialised request r. Its item starts with
// its level (one hex digit: its priority, or its depth). A plain GET (no
// body, headers, context or host override) is kept compact: "h" or "s"
// (http, https), its depth, a space, and its URL after the host; any
// other request is "j" and its JSON.
func (f *Fleet) encode(r []byte) (add, error) {
	var s serialRequest
	if err := json.Unmarshal(r, &s); err != nil {
		return add{}, fmt.Errorf("redisstore: adding a request: not colly's serialised request: %w", err)
	}
	level := min(max(s.Depth, 0), 15)
	if p, ok := s.Ctx[PriorityKey]; ok {
		n, err := strconv.Atoi(fmt.Sprint(p))
		if err != nil || n < 0 || n > 15 {
			return add{}, fmt.Errorf("redisstore: adding a request: priority %v is not 0 to 15", p)
		}
		level = n
		delete(s.Ctx, PriorityKey)
		if r, err = json.Marshal(s); err != nil {
			return add{}, err
		}
	}
	lv := strconv.FormatInt(int64(level), 16)
	u, err := url.Parse(s.URL)
	if err != nil || u.Host == "" {
		return add{}, fmt.Errorf("redisstore: adding a request: URL %q has no host", s.URL)
	}
	a := add{host: u.Host, id: f.requestID(s.URL, s.Body)}
	a.shard = f.shardOf(a.host)
	lead := u.Scheme + "://" + u.Host
	plain := (s.Method == "" || s.Method == "GET") && len(s.Body) == 0 && len(s.Ctx) == 0 &&
		len(s.Headers) == 0 && s.Host == "" && s.ID == 0 && s.Depth >= 0 &&
		(u.Scheme == "http" || u.Scheme == "https") && strings.HasPrefix(s.URL, lead)
	if plain {
		kind := "h"
		if u.Scheme == "https" {
			kind = "s"
		}
		a.item = lv + kind + strconv.Itoa(s.Depth) + " " + s.URL[len(lead):]
		return a, nil
	}
	a.item = lv + "j" + string(r)
	if !utf8.ValidString(a.item) || !utf8.ValidString(a.host) {
		return add{}, fmt.Errorf("redisstore: adding a request: not valid UTF-8: %q", r)
	}
	return a, nil
}

// decode returns the serialised request of a popped entry ("HOST\nITEM"),
// with the entry in its Ctx (and returned, if a dead member gave it
// back), and records that the member holds it.
func (f *Fleet) decode(entry string, returned bool) ([]byte, error) {
	host, item, ok := strings.Cut(entry, "\n")
	if !ok || len(item) < 2 || host == "" || !utf8.ValidString(entry) || !strings.Contains("0123456789abcdef", item[:1]) {
		return nil, fmt.Errorf("redisstore: damaged queue entry %q", entry)
	}
	item = item[1:] // the level
	var s serialRequest
	switch item[0] {
	case 'h', 's':
		d, rest, ok := strings.Cut(item[1:], " ")
		depth, err := strconv.Atoi(d)
		if !ok || err != nil {
			return nil, fmt.Errorf("redisstore: damaged queue entry %q", entry)
		}
		scheme := "http"
		if item[0] == 's' {
			scheme = "https"
		}
		s = serialRequest{URL: scheme + "://" + host + rest, Method: "GET", Depth: depth}
	case 'j':
		if err := json.Unmarshal([]byte(item[1:]), &s); err != nil {
			return nil, fmt.Errorf("redisstore: damaged queue entry %q: %w", entry, err)
		}
	default:
		return nil, fmt.Errorf("redisstore: damaged queue entry %q", entry)
	}
	if s.Ctx == nil {
		s.Ctx = map[string]any{}
	}
	s.Ctx[ctxLease] = entry
	if returned {
		s.Ctx[ctxReturned] = "1"
	}
	b, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	f.front.hold(entry, f.shardOf(host), f.requestID(s.URL, s.Body))
	if returned {
		// It goes first at its host's gate (see memberPacer.popped), under
		// the URL colly will parse from it.
		if u, err := url.Parse(s.URL); err == nil {
			f.member.popped(u)
		}
	}
	return b, nil
}

// requestID returns colly's id of a request of u with body: FNV-64a of
// the URL as colly's WHATWG parser writes it, then the body (requestHash
// in colly.go), so that colly's visited check and the frontier name a
// request alike. TestRequestIDMatchesColly checks it against colly.
func (f *Fleet) requestID(u string, body []byte) uint64 {
	h := fnv.New64a()
	if p, err := f.urls.Parse(u); err == nil {
		h.Write([]byte(p.String()))
	} else {
		h.Write([]byte(u))
	}
	h.Write(body)
	return h.Sum64()
}
