package redisstore

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"hash/fnv"

	"github.com/gocolly/colly/v2"

	robotsmw "github.com/robotsmw/robotsmw/middleware"
)

// What a member holds. A request a member pops from the shared queue is
// kept in the member's held hash, f.key("{crawl}", "held", member), by
// its colly request id, until it ends: its page was scraped, it failed
// for good, or colly refused it as visited. If the member dies (its
// heartbeat expires), the next member to take stock of the fleet puts
// its held requests back in the queue and releases their claims in the
// visited set, so the rest of the fleet fetches them: a killed member
// loses nothing it had taken. The set of members that hold requests,
// f.key("{crawl}", "holders"), lets that be found after the member's
// heartbeat is gone.
//
// The id is colly's own (requestHash in colly.go: FNV-64a of the URL as
// the WHATWG parser writes it, then the body), so that the visited set,
// which colly fills through Storage, and the held hash name a request
// alike. TestRequestIDMatchesColly checks it against colly.

// ctxHeld is the colly Ctx key under which a popped request carries its
// id, so that its end can be told to the fleet.
const ctxHeld = "robotsmw.fleet.held"

// requestID returns colly's id of a GET of u with body.
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

// queued is a request as colly serialises it, for the fields the fleet
// reads.
type queued struct {
	URL  string
	Body []byte
}

// item returns the queue item of serialised request r: its id, 8 bytes,
// then r. A request that is not colly's JSON is named by a hash of it.
func (f *Fleet) item(r []byte) []byte {
	var q queued
	var id uint64
	if err := json.Unmarshal(r, &q); err == nil && q.URL != "" {
		id = f.requestID(q.URL, q.Body)
	} else {
		h := fnv.New64a()
		h.Write(r)
		id = h.Sum64()
	}
	out := make([]byte, 8, 8+len(r))
	binary.BigEndian.PutUint64(out, id)
	return append(out, r...)
}

// marked returns request r, popped with id, with the id in its Ctx, so
// that the member can tell the fleet when it ends. A request that is not
// colly's JSON is returned as it is.
func marked(r []byte, id string) []byte {
	var m map[string]json.RawMessage
	if json.Unmarshal(r, &m) != nil {
		return r
	}
	ctx := map[string]any{}
	if raw, ok := m["Ctx"]; ok && string(raw) != "null" {
		if json.Unmarshal(raw, &ctx) != nil {
			return r
		}
	}
	ctx[ctxHeld] = hex.EncodeToString([]byte(id))
	b, err := json.Marshal(ctx)
	if err != nil {
		return r
	}
	m["Ctx"] = b
	out, err := json.Marshal(m)
	if err != nil {
		return r
	}
	return out
}

// release tells the fleet that the popped request r has ended: the
// member no longer holds it. One try; an entry left behind is dropped
// when the member leaves the fleet.
func (f *Fleet) release(r *colly.Request) {
	if r == nil || r.Ctx == nil {
		return
	}
	id, err := hex.DecodeString(r.Ctx.Get(ctxHeld))
	if err != nil || len(id) != 8 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), beatTimeout)
	defer cancel()
	err = f.client.HDel(ctx, f.heldKey(f.id), string(id)).Err()
	f.seen(err)
}

// heldKey returns the key of the held hash of member.
func (f *Fleet) heldKey(member string) string { return f.crawlKey("held:" + member) }

// watchEnds makes the ends of c's requests release them, once per
// collector.
func (f *Fleet) watchEnds(c *colly.Collector) {
	f.endsMu.Lock()
	defer f.endsMu.Unlock()
	if f.ends == nil {
		f.ends = map[*colly.Collector]bool{}
	}
	if f.ends[c] {
		return
	}
	f.ends[c] = true
	c.OnScraped(func(r *colly.Response) { f.release(r.Request) })
	c.OnError(func(r *colly.Response, err error) {
		if robotsmw.IsFinal(err) {
			f.release(r.Request)
		}
	})
}
