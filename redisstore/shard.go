package redisstore

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// A frontier is a member's side of the shared frontier (frontier.go):
// the crawl's epoch, what it knows of each shard, the requests it holds
// and the links it has yet to push.
type frontier struct {
	f *Fleet

	// mu guards every field below it.
	mu     sync.Mutex
	epoch  string // "" until joined
	joined []bool // the member renewed on the shard before
	// held maps each request this member holds ("HOST\nITEM") to its
	// lease; ids counts the colly ids of those requests, which colly's
	// visited check lets through without asking Redis.
	held map[string]lease
	ids  map[uint64]int
	// adds are links, and acks ends of held requests, waiting for the
	// next commit.
	adds []add
	acks []ack

	// fatal is the error that stops the member: the crawl was lost, or
	// the server is not Redis.
	fatal atomic.Pointer[error]
	// pending is each shard's queued requests as last seen.
	pending []atomic.Int64
	// gen counts the times this member found its requests given to
	// others (its heartbeat was silent too long).
	gen atomic.Int64
	// tended is when (Unix ns) the member last renewed its leases.
	tended atomic.Int64
	// next is the shard the next pop starts with.
	next atomic.Uint32
	// commitMu orders commits, so that a page's links are in Redis before
	// the page's end is; a commit from a colly callback skips when another
	// runs (that one or the next sends what it left).
	commitMu sync.Mutex
	// runCtx is the ctx of the running Run (nil if none).
	runCtx atomic.Pointer[context.Context]
	// flushing is set while a flush of the ends waiting is armed
	// (flushSoon).
	flushing atomic.Bool
}

// commitFlush bounds how long a page's end and links wait for the
// member's next pop before they are sent on their own.
const commitFlush = 50 * time.Millisecond

// flushSoon makes sure the ends and links waiting are sent within
// commitFlush: with the next pop, which carries them, or on their own,
// tried once (while Redis cannot be reached they wait for the next
// commit: the next pop, Run's loop or the heartbeat).
func (fr *frontier) flushSoon() {
	if fr.flushing.Swap(true) {
		return
	}
	time.AfterFunc(commitFlush, func() {
		fr.flushing.Store(false)
		if fr.waiting() {
			_ = fr.commit(fr.ctx(), true)
		}
	})
}

// A lease is one request a member holds.
type lease struct {
	shard int
	gen   int64
	id    uint64
}

// An ack is the end of a held request.
type ack struct {
	entry, outcome string
	shard          int
}

// An add is one request to push.
type add struct {
	shard int
	host  string
	id    uint64
	item  string
	front bool
}

func (fr *frontier) init(f *Fleet) {
	fr.f = f
	n := f.shards()
	fr.joined = make([]bool, n)
	fr.pending = make([]atomic.Int64, n)
	fr.held = map[string]lease{}
	fr.ids = map[uint64]int{}
}

// shards returns the number of shards.
func (f *Fleet) shards() int {
	if f.Shards > 0 {
		return f.Shards
	}
	if _, ok := f.client.(*redis.ClusterClient); ok {
		return 16
	}
	return 1
}

// shardOf returns the shard of host.
func (f *Fleet) shardOf(host string) int {
	n := len(f.front.pending)
	if n == 1 {
		return 0
	}
	h := fnv.New32a()
	h.Write([]byte(host))
	return int(h.Sum32() % uint32(n))
}

// base returns the start of the keys of shard i: every key of a shard
// shares its hash tag.
func (f *Fleet) base(i int) string {
	p := f.prefix()
	return p + ":{" + p + "#" + strconv.Itoa(i) + "}:"
}

// meta returns the key of shard i's meta hash.
func (f *Fleet) meta(i int) string { return f.base(i) + "meta" }

// bucket returns the seen bucket of id: seenBuckets are spread over the
// shards.
func (f *Fleet) bucket(id uint64) string {
	per := uint64(max(seenBuckets/f.shards(), 1))
	return strconv.FormatUint(id>>40%per, 10)
}

// ctx returns the ctx of the running Run, or a background one.
func (fr *frontier) ctx() context.Context {
	if p := fr.runCtx.Load(); p != nil {
		return *p
	}
	return context.Background()
}

// failed returns the error that stopped the member, if any.
func (fr *frontier) failed() error {
	if p := fr.fatal.Load(); p != nil {
		return *p
	}
	return nil
}

// fail records err if it stops the member (the crawl lost, not Redis).
func (fr *frontier) fail(err error) {
	if errors.Is(err, ErrCrawlLost) || errors.Is(err, ErrNotRedis) {
		fr.fatal.CompareAndSwap(nil, &err)
	}
}

// A call is one script run on one shard, or on keys if set.
type call struct {
	script *redis.Script
	shard  int
	keys   []string
	args   []any
}

// keysOf returns c's keys.
func (f *Fleet) keysOf(c call) []string {
	if c.keys != nil {
		return c.keys
	}
	return []string{f.meta(c.shard)}
}

// eval runs calls in one round trip (a pipeline when there are several),
// waiting for Redis, and returns each one's reply. A shard whose epoch is
// not the member's ends it with a *CrawlLostError.
func (fr *frontier) eval(ctx context.Context, calls []call) ([][]any, error) {
	return fr.evalOnce(ctx, calls, false)
}

// evalOnce is eval; with once, it tries once.
func (fr *frontier) evalOnce(ctx context.Context, calls []call, once bool) ([][]any, error) {
	f := fr.f
	if err := fr.failed(); err != nil {
		return nil, err
	}
	out := make([][]any, len(calls))
	// Only a pop and a step are sure to be refused by a full Redis (their
	// first write adds data), so only they tell that it takes writes again.
	last := calls[len(calls)-1].script
	write := last == popScript || last == stepScript
	run := func(ctx context.Context, fn func(ctx context.Context) error) error {
		return f.waitAs(ctx, write, fn)
	}
	if once {
		run = func(ctx context.Context, fn func(ctx context.Context) error) error {
			return f.tryAs(ctx, write, fn)
		}
	}
	err := run(ctx, func(ctx context.Context) error {
		// The leases the member's Guard gave back go in the same round
		// trip, before the frontier's calls.
		var rel []pendingRelease
		if m := f.member; m != nil {
			rel = m.pending()
		}
		if len(calls) == 1 && len(rel) == 0 {
			c := calls[0]
			v, err := c.script.Run(ctx, f.client, []string{f.meta(c.shard)}, c.args...).Slice()
			out[0] = v
			return err
		}
		all := calls
		if len(rel) > 0 {
			all = append(f.member.releaseCalls(rel), calls...)
		}
		cmds, err := f.pipe(ctx, all)
		if len(rel) > 0 {
			f.member.releasedAll(rel, cmds, err)
			if err != nil && answered(cmds[len(rel):]) {
				err = nil // a release failed; the frontier's calls did not
			}
		}
		if err != nil {
			return err
		}
		for i, c := range cmds[len(rel):] {
			out[i], _ = c.Slice()
		}
		return nil
	})
	if err != nil {
		fr.fail(err)
		return nil, err
	}
	for i, v := range out {
		if len(v) == 2 {
			if n, ok := v[0].(int64); ok && n == -1 {
				found, _ := v[1].(string)
				err := &CrawlLostError{Prefix: f.prefix(), Shard: calls[i].shard, Joined: fr.epochNow(), Found: found}
				fr.fail(err)
				return nil, err
			}
		}
	}
	return out, nil
}

// answered reports whether every one of cmds has a reply that is not an
// error. (A pipeline that never reached Redis may leave its commands
// without an error of their own.)
func answered(cmds []*redis.Cmd) bool {
	for _, c := range cmds {
		if c.Err() != nil || c.Val() == nil {
			return false
		}
	}
	return true
}

// pipe sends calls in one pipeline (one round trip) and returns their
// commands, whose replies the caller reads: by SHA, or with the scripts'
// source if Redis lacks one.
func (f *Fleet) pipe(ctx context.Context, calls []call) ([]*redis.Cmd, error) {
	cmds, err := f.pipeOnce(ctx, calls, false)
	if err != nil && strings.Contains(err.Error(), "NOSCRIPT") {
		cmds, err = f.pipeOnce(ctx, calls, true)
	}
	return cmds, err
}

// pipeOnce sends calls in one pipeline, by SHA or, if full, with the
// scripts' source.
func (f *Fleet) pipeOnce(ctx context.Context, calls []call, full bool) ([]*redis.Cmd, error) {
	cmds := make([]*redis.Cmd, len(calls))
	_, err := f.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, c := range calls {
			keys := f.keysOf(c)
			if full {
				cmds[i] = c.script.Eval(ctx, p, keys, c.args...)
			} else {
				cmds[i] = c.script.EvalSha(ctx, p, keys, c.args...)
			}
		}
		return nil
	})
	return cmds, err
}

func (fr *frontier) epochNow() string {
	fr.mu.Lock()
	defer fr.mu.Unlock()
	return fr.epoch
}

// join reads the crawl's epoch, starting a crawl if Redis has none: the
// first shard decides, and the others take its epoch. A shard that has
// another one means the crawl changed while it was being joined.
func (fr *frontier) join(ctx context.Context) (string, error) {
	fr.mu.Lock()
	e := fr.epoch
	fr.mu.Unlock()
	if e != "" {
		return e, nil
	}
	f := fr.f
	var b [8]byte
	_, _ = rand.Read(b[:])
	proposed := hex.EncodeToString(b[:])
	var got, shards string
	err := f.wait(ctx, func(ctx context.Context) error {
		v, err := joinScript.Run(ctx, f.client, []string{f.meta(0)}, proposed, crawlKeep.Milliseconds(), f.shards()).StringSlice()
		if err == nil && len(v) == 2 {
			got, shards = v[0], v[1]
		}
		return err
	})
	if err != nil {
		fr.fail(err)
		return "", fmt.Errorf("redisstore: joining the crawl %q: %w", f.prefix(), err)
	}
	if shards != "" && shards != strconv.Itoa(f.shards()) {
		return "", fmt.Errorf("redisstore: joining the crawl %q: it was started with %s shards, this member has %d (Fleet.Shards must be the same in every member)", f.prefix(), shards, f.shards())
	}
	for i := 1; i < f.shards(); i++ {
		var other string
		err := f.wait(ctx, func(ctx context.Context) error {
			v, err := joinScript.Run(ctx, f.client, []string{f.meta(i)}, got, crawlKeep.Milliseconds(), f.shards()).StringSlice()
			if err == nil && len(v) > 0 {
				other = v[0]
			}
			return err
		})
		if err != nil {
			fr.fail(err)
			return "", fmt.Errorf("redisstore: joining the crawl %q: %w", f.prefix(), err)
		}
		if other != got {
			err := &CrawlLostError{Prefix: f.prefix(), Shard: i, Joined: got, Found: other}
			fr.fail(err)
			return "", err
		}
	}
	fr.mu.Lock()
	if fr.epoch == "" {
		fr.epoch = got
	}
	e = fr.epoch
	fr.mu.Unlock()
	return e, nil
}

// Epoch returns the identity of the crawl this member works on, joining
// it (starting it if Redis has none) first.
func (f *Fleet) Epoch(ctx context.Context) (string, error) {
	f.init()
	return f.front.join(ctx)
}

// tendArgs returns the arguments luaTend reads after the epoch, for shard
// i, and marks the member as renewed there.
func (fr *frontier) tendArgs(i int, epoch string) []any {
	f := fr.f
	fr.mu.Lock()
	before := "0"
	if fr.joined[i] {
		before = "1"
	}
	fr.joined[i] = true
	fr.mu.Unlock()
	return []any{f.base(i), epoch, f.memberTTL().Milliseconds(), f.id, before}
}

// gone handles a luaTend reply that the member's requests were given to
// others: the member's leases of that time are void.
func (fr *frontier) gone(flag any) {
	if n, _ := flag.(int64); n == 1 {
		fr.gen.Add(1)
	}
}

// A shardState is what stepScript saw of one shard.
type shardState struct {
	pending, held, wait, live int64
}

// step renews the member on every shard, gives back what dead members
// held, and returns what it saw, summed over the shards; wait is the
// shortest, -1 if no shard has queued requests.
func (fr *frontier) step(ctx context.Context) (shardState, error) {
	epoch, err := fr.join(ctx)
	if err != nil {
		return shardState{}, err
	}
	n := fr.f.shards()
	calls := make([]call, n)
	for i := range calls {
		calls[i] = call{script: stepScript, shard: i, args: fr.tendArgs(i, epoch)}
	}
	res, err := fr.eval(ctx, calls)
	if err != nil {
		return shardState{}, err
	}
	fr.tended.Store(time.Now().UnixNano())
	sum := shardState{wait: -1}
	for i, v := range res {
		if len(v) < 5 {
			return shardState{}, fmt.Errorf("redisstore: unexpected reply %v", v)
		}
		p, _ := v[0].(int64)
		h, _ := v[1].(int64)
		w, _ := v[2].(int64)
		l, _ := v[4].(int64)
		fr.gone(v[3])
		fr.pending[i].Store(p)
		sum.pending += p
		sum.held += h
		if w >= 0 && (sum.wait < 0 || w < sum.wait) {
			sum.wait = w
		}
		sum.live = max(sum.live, l)
	}
	fr.f.members.Store(sum.live)
	return sum, nil
}

// popped is what pop found.
type popped struct {
	entry    string // "HOST\nITEM", "" if none
	shard    int
	wait     int64 // ms until a host of the shard is ready; -1 if none queued
	returned bool  // given back by a dead member
}

// pop takes a request from shard i.
func (fr *frontier) pop(ctx context.Context, i int, gap time.Duration) (popped, error) {
	epoch, err := fr.join(ctx)
	if err != nil {
		return popped{}, err
	}
	f := fr.f
	args := append(fr.tendArgs(i, epoch), f.token(), gap.Milliseconds(), crawlKeep.Milliseconds())
	for {
		// The ends and links of the pages done since the last round
		// trip go with the pop, in the same round trip, before it: tried
		// once; if Redis does not answer, they wait for the next commit,
		// and the pop waits for Redis on its own (a pop tried again gets
		// the same request).
		call := []call{{script: popScript, shard: i, args: args}}
		fr.commitMu.Lock()
		res, err := fr.commitWith(ctx, true, call)
		fr.commitMu.Unlock()
		if err != nil && fr.failed() == nil && ctx.Err() == nil {
			res, err = fr.eval(ctx, call)
		}
		if err != nil {
			return popped{}, err
		}
		v := res[0]
		if len(v) < 5 {
			return popped{}, fmt.Errorf("redisstore: unexpected reply %v", v)
		}
		fr.tended.Store(time.Now().UnixNano())
		fr.gone(v[4])
		p, _ := v[2].(int64)
		fr.pending[i].Store(p)
		switch code, _ := v[0].(int64); code {
		case 1:
			e, _ := v[1].(string)
			var back int64
			if len(v) > 5 {
				back, _ = v[5].(int64)
			}
			return popped{entry: e, shard: i, returned: back == 1}, nil
		case 0:
			w, _ := v[3].(int64)
			return popped{shard: i, wait: w}, nil
		}
		args[5] = f.token() // the host's list was gone: a new call
	}
}

// end records that the held request entry ended with the count outcome:
// the member no longer holds it for colly, and its end goes to Redis with
// the next commit. It reports false if the member does not hold entry.
func (fr *frontier) end(entry, outcome string) bool {
	fr.mu.Lock()
	defer fr.mu.Unlock()
	l, ok := fr.held[entry]
	if !ok {
		return false
	}
	delete(fr.held, entry)
	if fr.ids[l.id]--; fr.ids[l.id] <= 0 {
		delete(fr.ids, l.id)
	}
	fr.acks = append(fr.acks, ack{entry: entry, outcome: outcome, shard: l.shard})
	return true
}

// commit sends the ends and the links waiting, in one round trip: one
// script per shard concerned (more when a shard has several ends). It
// waits for Redis, or with once tries once and leaves them waiting if
// Redis cannot be reached: a colly callback never waits for Redis.
func (fr *frontier) commit(ctx context.Context, once bool) error {
	if once {
		if !fr.commitMu.TryLock() {
			return nil // the commit under way, or the next, sends them
		}
	} else {
		fr.commitMu.Lock()
	}
	defer fr.commitMu.Unlock()
	_, err := fr.commitWith(ctx, once, nil)
	return err
}

// commitWith sends the ends and the links waiting, and then tail, in one
// round trip, and returns tail's replies; fr.commitMu must be held.
func (fr *frontier) commitWith(ctx context.Context, once bool, tail []call) ([][]any, error) {
	fr.mu.Lock()
	adds, acks := fr.adds, fr.acks
	fr.adds, fr.acks = nil, nil
	fr.mu.Unlock()
	if len(adds) == 0 && len(acks) == 0 {
		if len(tail) == 0 {
			return nil, nil
		}
		return fr.evalOnce(ctx, tail, once)
	}
	restore := func() {
		fr.mu.Lock()
		fr.adds = append(adds, fr.adds...)
		fr.acks = append(acks, fr.acks...)
		fr.mu.Unlock()
	}
	epoch, err := fr.join(ctx)
	if err != nil {
		restore()
		return nil, err
	}
	f := fr.f
	limit := f.MaxQueue
	if limit <= 0 {
		limit = defaultMaxQueue
	}
	n := f.shards()
	perShard := (limit + n - 1) / n
	var calls []call
	first := map[int]int{} // shard → its first call
	newCall := func(i int) int {
		calls = append(calls, call{script: commitScript, shard: i,
			args: []any{f.base(i), epoch, f.id, crawlKeep.Milliseconds(), perShard, "", ""}})
		return len(calls) - 1
	}
	for _, a := range acks {
		k, ok := first[a.shard]
		if !ok {
			k = newCall(a.shard)
			first[a.shard] = k
		} else if calls[k].args[5] != "" {
			k = newCall(a.shard)
		}
		calls[k].args[5], calls[k].args[6] = a.entry, a.outcome
	}
	for _, a := range adds {
		k, ok := first[a.shard]
		if !ok {
			k = newCall(a.shard)
			first[a.shard] = k
		}
		var id [8]byte
		binary.BigEndian.PutUint64(id[:], a.id)
		front := "0"
		if a.front {
			front = "1"
		}
		calls[k].args = append(calls[k].args, a.host, f.bucket(a.id), string(id[:]), a.item, front)
	}
	nc := len(calls)
	res, err := fr.evalOnce(ctx, append(calls, tail...), once)
	if err != nil {
		if !errors.Is(err, ErrCrawlLost) && !errors.Is(err, ErrNotRedis) {
			restore() // for the next try
		}
		return nil, err
	}
	for i, c := range calls {
		if len(res[i]) > 1 {
			if p, ok := res[i][1].(int64); ok {
				fr.pending[c.shard].Store(p)
			}
		}
	}
	return res[nc:], nil
}

// waiting reports whether links or ends wait for the next commit.
func (fr *frontier) waiting() bool {
	fr.mu.Lock()
	defer fr.mu.Unlock()
	return len(fr.adds) > 0 || len(fr.acks) > 0
}

// hold records that the member holds entry (popped from shard i) for
// colly's request id.
func (fr *frontier) hold(entry string, i int, id uint64) {
	fr.mu.Lock()
	defer fr.mu.Unlock()
	fr.held[entry] = lease{shard: i, gen: fr.gen.Load(), id: id}
	fr.ids[id]++
}

// forget forgets the held request entry without telling Redis: it was
// given to other members.
func (fr *frontier) forget(entry string) {
	fr.mu.Lock()
	defer fr.mu.Unlock()
	l, ok := fr.held[entry]
	if !ok {
		return
	}
	delete(fr.held, entry)
	if fr.ids[l.id]--; fr.ids[l.id] <= 0 {
		delete(fr.ids, l.id)
	}
}

// holdsID reports whether the member holds a request with colly id id:
// one popped from the frontier, deduplicated when it was queued.
func (fr *frontier) holdsID(id uint64) bool {
	fr.mu.Lock()
	defer fr.mu.Unlock()
	return fr.ids[id] > 0
}

// stale reports whether entry was given to other members since this
// member popped it: its heartbeat was silent too long.
func (fr *frontier) stale(entry string) bool {
	fr.mu.Lock()
	defer fr.mu.Unlock()
	l, ok := fr.held[entry]
	return ok && l.gen < fr.gen.Load()
}

// stillHeld reports whether Redis has entry, which stale called stale, as
// held by this member: popped after its registration was renewed, by a
// pop whose reply came before the one that found the member gone. If so
// it is this generation's again. If Redis cannot say, it is kept too:
// sent twice at worst, rather than held for ever with no one to end it.
func (fr *frontier) stillHeld(entry string) bool {
	fr.mu.Lock()
	l, ok := fr.held[entry]
	fr.mu.Unlock()
	if !ok {
		return false
	}
	f := fr.f
	ctx, cancel := context.WithTimeout(fr.ctx(), beatTimeout)
	defer cancel()
	_, err := f.client.ZScore(ctx, f.base(l.shard)+"hz:"+f.id, entry).Result()
	f.seen(err)
	if errors.Is(err, redis.Nil) {
		return false
	}
	fr.mu.Lock()
	defer fr.mu.Unlock()
	if l, ok := fr.held[entry]; ok {
		l.gen = fr.gen.Load()
		fr.held[entry] = l
	}
	return true
}

// heldEntries returns the requests the member holds.
func (fr *frontier) heldEntries() []string {
	fr.mu.Lock()
	defer fr.mu.Unlock()
	out := make([]string, 0, len(fr.held))
	for e := range fr.held {
		out = append(out, e)
	}
	return out
}

// deferHost moves host's ready time to d from now, so that members stop
// taking its requests while it is paused or its slots are far. It is
// tried once, and not at all while Redis is known to be down: it is a
// hint, and runs in a colly callback.
func (fr *frontier) deferHost(ctx context.Context, host string, d time.Duration) error {
	f := fr.f
	fr.mu.Lock()
	epoch := fr.epoch
	fr.mu.Unlock()
	if epoch == "" || f.down.Load() {
		return nil
	}
	i := f.shardOf(host)
	_, err := fr.evalOnce(ctx, []call{{script: deferScript, shard: i,
		args: []any{f.base(i), epoch, host, d.Milliseconds()}}}, true)
	return err
}

// leave gives back what the member still holds and removes it from every
// shard, trying once.
func (fr *frontier) leave() {
	f := fr.f
	fr.mu.Lock()
	epoch := fr.epoch
	fr.mu.Unlock()
	if epoch == "" || fr.failed() != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), beatTimeout)
	defer cancel()
	_ = fr.commit(ctx, true) // ends not told yet would be given back
	n := f.shards()
	cmds := make([]*redis.Cmd, n)
	_, err := f.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i := range cmds {
			cmds[i] = leaveScript.Eval(ctx, p, []string{f.meta(i)}, f.base(i), epoch, f.id)
		}
		return nil
	})
	f.seen(err)
	fr.mu.Lock()
	for i := range fr.joined {
		fr.joined[i] = false
	}
	fr.held = map[string]lease{}
	fr.ids = map[uint64]int{}
	fr.acks = nil
	fr.mu.Unlock()
}
