package policy

import (
	"bufio"
	"bytes"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"math/bits"
	"sort"
	"time"
)

type xcheck struct {
	r     *Robots
	agent string
	u     *url.URL
	tgt   string
}

func loadX(t testing.TB) []xcheck {
	sh := "../../shared"
	data, err := os.ReadFile(filepath.Join(sh, "bench", "robots-workload.tsv"))
	if err != nil {
		t.Skip(err)
	}
	pol := map[string]*Robots{}
	var out []xcheck
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		f := strings.Split(sc.Text(), "\t")
		r := pol[f[0]]
		if r == nil {
			b, err := os.ReadFile(filepath.Join(sh, "corpus", "robots", f[0]))
			if err != nil {
				t.Fatal(err)
			}
			r = Parse(b)
			pol[f[0]] = r
		}
		u, err := url.Parse(f[2])
		if err != nil {
			continue
		}
		out = append(out, xcheck{r: r, agent: f[1], u: u, tgt: strings.Clone(first(targetOf(nil, u)))})
	}
	for _, c := range out {
		c.r.Allowed(c.agent, c.u)
	}
	return out
}

var xsink int

func cycle(cs []xcheck, f func(c *xcheck)) float64 {
	best := time.Duration(1 << 62)
	for r := 0; r < 15; r++ {
		t0 := time.Now()
		for i := range cs {
			f(&cs[i])
		}
		if d := time.Since(t0); d < best {
			best = d
		}
	}
	return float64(best) / float64(len(cs))
}

func touchIdx(x *index) int {
	s := 0
	for _, k := range x.keys {
		s += int(k.hi)
	}
	for _, n := range x.nodes {
		s += int(n.plen)
	}
	for _, r := range x.ranks {
		s += int(r.ord)
	}
	for i := 0; i < len(x.pool); i += 64 {
		s += int(x.pool[i])
	}
	return s
}

func TestExpBranch(t *testing.T) {
	cs := loadX(t)
	type run struct{ lo, hi int }
	var runs []run
	for i := 0; i < len(cs); {
		j := i
		for j < len(cs) && cs[j].r == cs[i].r {
			j++
		}
		runs = append(runs, run{i, j})
		i = j
	}
	var bc, bt, bh time.Duration = 1 << 62, 1 << 62, 1 << 62
	for r := 0; r < 15; r++ {
		var c, tt, h time.Duration
		for _, ru := range runs {
			t0 := time.Now()
			for j := ru.lo; j < ru.hi; j++ {
				if a, _, _ := cs[j].r.decide(cs[j].agent, cs[j].tgt, octetsOf(cs[j].tgt)); a {
					xsink++
				}
			}
			c += time.Since(t0)
		}
		for _, ru := range runs {
			// touch memory only
			for j := ru.lo; j < ru.hi; j++ {
				if g := cs[j].r.group(cs[j].agent); g != nil {
					xsink += touchIdx(&g.idx)
				}
				xsink += len(cs[j].tgt) + int(cs[j].tgt[len(cs[j].tgt)/2])
			}
			t0 := time.Now()
			for j := ru.lo; j < ru.hi; j++ {
				if a, _, _ := cs[j].r.decide(cs[j].agent, cs[j].tgt, octetsOf(cs[j].tgt)); a {
					xsink++
				}
			}
			tt += time.Since(t0)
		}
		for _, ru := range runs {
			for k := 0; k < 3; k++ {
				for j := ru.lo; j < ru.hi; j++ {
					if a, _, _ := cs[j].r.decide(cs[j].agent, cs[j].tgt, octetsOf(cs[j].tgt)); a {
						xsink++
					}
				}
			}
			t0 := time.Now()
			for j := ru.lo; j < ru.hi; j++ {
				if a, _, _ := cs[j].r.decide(cs[j].agent, cs[j].tgt, octetsOf(cs[j].tgt)); a {
					xsink++
				}
			}
			h += time.Since(t0)
		}
		bc, bt, bh = min(bc, c), min(bt, tt), min(bh, h)
	}
	n := float64(len(cs))
	fmt.Printf("decide cycle %.1f  memory-touched %.1f  run-repeated %.1f ns/check\n", float64(bc)/n, float64(bt)/n, float64(bh)/n)
}

func modes(cs []xcheck, f func(c *xcheck)) (cold, warm, rep float64) {
	type run struct{ lo, hi int }
	var runs []run
	for i := 0; i < len(cs); {
		j := i
		for j < len(cs) && cs[j].r == cs[i].r {
			j++
		}
		runs = append(runs, run{i, j})
		i = j
	}
	var bc, bt, bh time.Duration = 1 << 62, 1 << 62, 1 << 62
	for r := 0; r < 11; r++ {
		var c, tt, h time.Duration
		for _, ru := range runs {
			t0 := time.Now()
			for j := ru.lo; j < ru.hi; j++ {
				f(&cs[j])
			}
			c += time.Since(t0)
		}
		for _, ru := range runs {
			for j := ru.lo; j < ru.hi; j++ {
				if g := cs[j].r.group(cs[j].agent); g != nil {
					xsink += touchIdx(&g.idx)
				}
				u := cs[j].u
				xsink += len(cs[j].tgt) + int(cs[j].tgt[len(cs[j].tgt)/2]) + len(u.Path) + len(u.RawQuery)
			}
			t0 := time.Now()
			for j := ru.lo; j < ru.hi; j++ {
				f(&cs[j])
			}
			tt += time.Since(t0)
		}
		for _, ru := range runs {
			for k := 0; k < 3; k++ {
				for j := ru.lo; j < ru.hi; j++ {
					f(&cs[j])
				}
			}
			t0 := time.Now()
			for j := ru.lo; j < ru.hi; j++ {
				f(&cs[j])
			}
			h += time.Since(t0)
		}
		bc, bt, bh = min(bc, c), min(bt, tt), min(bh, h)
	}
	n := float64(len(cs))
	return float64(bc) / n, float64(bt) / n, float64(bh) / n
}

func TestExpParts2(t *testing.T) {
	cs := loadX(t)
	for _, p := range []struct {
		name string
		f    func(c *xcheck)
	}{
		{"allowed", func(c *xcheck) { if c.r.Allowed(c.agent, c.u) { xsink++ } }},
		{"plainTarget", func(c *xcheck) { s, _, ok := plainTarget(c.u); if ok { xsink += len(s) } }},
		{"normalTgt", func(c *xcheck) { if normal(c.tgt, &pathOctets) { xsink++ } }},
		{"decide", func(c *xcheck) { if a, _, _ := c.r.decide(c.agent, c.tgt, octetsOf(c.tgt)); a { xsink++ } }},
		{"group", func(c *xcheck) { if g := c.r.group(c.agent); g != nil { xsink += int(g.id) } }},
		{"find", func(c *xcheck) { if g := c.r.group(c.agent); g != nil { xsink += int(g.idx.find(c.tgt)) } }},
		{"lookup", func(c *xcheck) { if g := c.r.group(c.agent); g != nil { xsink += int(g.idx.lookup(c.tgt, octetsOf(c.tgt))) } }},
		{"octetsOf", func(c *xcheck) { xsink += int(octetsOf(c.tgt)) }},
	} {
		c, w, r := modes(cs, p.f)
		fmt.Printf("%-12s cold %6.1f warm-mem %6.1f repeated %6.1f\n", p.name, c, w, r)
	}
	var q, long, n int
	for _, c := range cs {
		if c.u.RawQuery != "" { q++ }
		n += len(c.tgt)
		if len(c.tgt) > 16 { long++ }
	}
	fmt.Printf("query %.2f avg len %.1f >16 %.2f\n", float64(q)/float64(len(cs)), float64(n)/float64(len(cs)), float64(long)/float64(len(cs)))
	ag := map[string]int{}
	for _, c := range cs { ag[c.agent]++ }
	fmt.Println(ag)
}

func TestExpFloor(t *testing.T) {
	cs := loadX(t)
	for _, p := range []struct {
		name string
		f    func(c *xcheck)
	}{
		{"allowed", func(c *xcheck) { if c.r.Allowed(c.agent, c.u) { xsink++ } }},
		{"decide", func(c *xcheck) { if a, _, _ := c.r.decide(c.agent, c.tgt, octetsOf(c.tgt)); a { xsink++ } }},
		{"group", func(c *xcheck) { if g := c.r.group(c.agent); g != nil { xsink += int(g.id) } }},
		{"find", func(c *xcheck) { if g := c.r.group(c.agent); g != nil { xsink += int(g.idx.find(c.tgt)) } }},
		{"lookup", func(c *xcheck) { if g := c.r.group(c.agent); g != nil { xsink += int(g.idx.lookup(c.tgt, octetsOf(c.tgt))) } }},
		{"plainTarget", func(c *xcheck) { s, _, ok := plainTarget(c.u); if ok { xsink += len(s) } }},
	} {
		best := time.Duration(1 << 62)
		for r := 0; r < 5; r++ {
			var tot time.Duration
			for i := range cs {
				c := &cs[i]
				for k := 0; k < 20; k++ { p.f(c) }
				t0 := time.Now()
				for k := 0; k < 20; k++ { p.f(c) }
				tot += time.Since(t0)
			}
			best = min(best, tot)
		}
		fmt.Printf("%-12s floor %.1f\n", p.name, float64(best)/float64(20*len(cs)))
	}
}


func first(s string, _ octetSet) string { return s }

func TestExpIsolate(t *testing.T) {
	cs := loadX(t)
	sets := make([]octetSet, len(cs))
	for i := range cs { sets[i] = octetsOf(cs[i].tgt) }
	dec := func(j int) { if a, _, _ := cs[j].r.decide(cs[j].agent, cs[j].tgt, sets[j]); a { xsink++ } }
	// perm: a far check for scrambling
	far := func(j int) int { return (j*7919 + 3331) % len(cs) }
	var empty, cold, warmData, warmBoth time.Duration
	for r := 0; r < 5; r++ {
		var e, c, w, b time.Duration
		for j := range cs {
			// empty
			dec(far(j))
			t0 := time.Now(); t1 := time.Now(); e += t1.Sub(t0)
			// cold: scramble with a far check, then time j (its data is cold-ish: previous checks touched other files)
			dec(far(j + 1))
			t0 = time.Now(); dec(j); c += time.Since(t0)
			// warm data: j's data warmed by running j, then scramble predictor with far check
			dec(j); dec(far(j + 2))
			t0 = time.Now(); dec(j); w += time.Since(t0)
			// warm both: run j twice
			dec(j); dec(j)
			t0 = time.Now(); dec(j); b += time.Since(t0)
		}
		if r == 0 || c < cold { cold, warmData, warmBoth, empty = c, w, b, e }
	}
	n := time.Duration(len(cs))
	fmt.Printf("empty %v cold %v warmData %v warmBoth %v (per check, incl timer)\n", empty/n, cold/n, warmData/n, warmBoth/n)
}

func cycleOnly(cs []xcheck, f func(c *xcheck)) float64 {
	best := time.Duration(1 << 62)
	for r := 0; r < 21; r++ {
		t0 := time.Now()
		for i := range cs {
			f(&cs[i])
		}
		if d := time.Since(t0); d < best {
			best = d
		}
	}
	return float64(best) / float64(len(cs))
}

func TestExpSortFeatures(t *testing.T) {
	cs := loadX(t)
	type feat struct {
		name string
		key  func(c *xcheck) int
	}
	findOf := func(c *xcheck) int {
		g := c.r.group(c.agent)
		if g == nil { return -2 }
		return int(g.idx.find(c.tgt))
	}
	lookOf := func(c *xcheck) int {
		g := c.r.group(c.agent)
		if g == nil { return -2 }
		return int(g.idx.lookup(c.tgt, octetsOf(c.tgt)))
	}
	fs := []feat{
		{"orig", func(c *xcheck) int { return 0 }},
		{"query", func(c *xcheck) int { if c.u.RawQuery != "" { return 1 }; return 0 }},
		{"len", func(c *xcheck) int { return len(c.tgt) }},
		{"len8", func(c *xcheck) int { return len(c.tgt) / 8 }},
		{"agent", func(c *xcheck) int { return len(c.agent)*256 + int(c.agent[0]) }},
		{"second", func(c *xcheck) int { if len(c.tgt) < 2 { return 0 }; return int(c.tgt[1]) }},
		{"find", findOf},
		{"lookup", lookOf},
		{"find+lookup", func(c *xcheck) int { return findOf(c)*100000 + lookOf(c) }},
		{"all", func(c *xcheck) int { return ((findOf(c)*100000+lookOf(c))*4+len(c.agent))*1000 + len(c.tgt) }},
	}
	f := func(c *xcheck) { if c.r.Allowed(c.agent, c.u) { xsink++ } }
	for _, ft := range fs {
		p := make([]xcheck, len(cs))
		copy(p, cs)
		for i := 0; i < len(p); {
			j := i
			for j < len(p) && p[j].r == p[i].r { j++ }
			run := p[i:j]
			sort.SliceStable(run, func(a, b int) bool { return ft.key(&run[a]) < ft.key(&run[b]) })
			i = j
		}
		fmt.Printf("%-12s %.1f\n", ft.name, cycleOnly(p, f))
	}
}

func TestExpSlow(t *testing.T) {
	cs := loadX(t)
	var plain, short, slow int
	reasons := map[string]int{}
	for _, c := range cs {
		u := c.u
		if _, _, ok := plainTarget(u); ok { plain++; continue }
		p, q := u.Path, u.RawQuery
		if u.Opaque == "" && u.RawPath == "" && p != "" && p[0] == '/' && len(p)+len(q) < 128 && (summarize(p, &pathOctets)|summarize(q, &targetOctets))&notPlain == 0 {
			short++
			continue
		}
		slow++
		switch {
		case u.RawPath != "": reasons["rawpath"]++
		case len(p)+len(q) >= 128: reasons["long"]++
		case summarize(p, &pathOctets)&notPlain != 0: reasons["path"]++
		default: reasons["query"]++; if reasons["query"] < 15 { fmt.Println(q) }
		}
	}
	fmt.Println(plain, short, slow, reasons)
}

func (x *index) findLo(target string) int {
	if len(target) < 2 {
		return int(x.short)
	}
	w, b := x.second[target[1]>>6], uint64(1)<<(target[1]&63)
	if w&b == 0 {
		return int(x.short)
	}
	tk := keyOf(target)
	run := int(x.secondBase[target[1]>>6]) + bits.OnesCount64(w&(b-1))
	start, end := int(x.runs[run]), int(x.runs[run+1])
	switch n := x.bottom(); {
	case end-start <= 8:
		return x.countBlock(min(start, n-8), tk)
	case end-start <= 64 && n >= 64:
		i := min(start, n-64)
		k := x.keys[i : i+64 : i+64]
		return x.countBlock(i+8*(k[8].le(tk)+k[16].le(tk)+k[24].le(tk)+k[32].le(tk)+
			k[40].le(tk)+k[48].le(tk)+k[56].le(tk)), tk)
	default:
		return x.upperBound(tk)
	}
}

func (x *index) findFilter(target string) int {
	if len(target) < 2 {
		return int(x.short)
	}
	w, b := x.second[target[1]>>6], uint64(1)<<(target[1]&63)
	if w&b == 0 {
		return int(x.short)
	}
	run := int(x.secondBase[target[1]>>6]) + bits.OnesCount64(w&(b-1))
	return int(x.runs[run])
}

func TestExpFindParts(t *testing.T) {
	cs := loadX(t)
	for _, p := range []struct {
		name string
		f    func(c *xcheck)
	}{
		{"group", func(c *xcheck) { if g := c.r.group(c.agent); g != nil { xsink += int(g.id) } }},
		{"findFilter", func(c *xcheck) { if g := c.r.group(c.agent); g != nil { xsink += g.idx.findFilter(c.tgt) } }},
		{"findLo", func(c *xcheck) { if g := c.r.group(c.agent); g != nil { xsink += g.idx.findLo(c.tgt) } }},
		{"find", func(c *xcheck) { if g := c.r.group(c.agent); g != nil { xsink += int(g.idx.find(c.tgt)) } }},
	} {
		c, w, r := modes(cs, p.f)
		fmt.Printf("%-12s cold %6.1f warm-mem %6.1f repeated %6.1f\n", p.name, c, w, r)
	}
}

func TestExpShuffleRep(t *testing.T) {
	cs := loadX(t)
	f := func(c *xcheck) { if c.r.Allowed(c.agent, c.u) { xsink++ } }
	type run struct{ lo, hi int }
	var runs []run
	for i := 0; i < len(cs); {
		j := i
		for j < len(cs) && cs[j].r == cs[i].r { j++ }
		runs = append(runs, run{i, j})
		i = j
	}
	rev := func(a []xcheck) { for i, j := 0, len(a)-1; i < j; i, j = i+1, j-1 { a[i], a[j] = a[j], a[i] } }
	var bs, bh, bc time.Duration = 1 << 62, 1 << 62, 1 << 62
	for r := 0; r < 11; r++ {
		var s, h, c time.Duration
		for _, ru := range runs {
			t0 := time.Now()
			for j := ru.lo; j < ru.hi; j++ { f(&cs[j]) }
			c += time.Since(t0)
		}
		for _, ru := range runs {
			for k := 0; k < 3; k++ { for j := ru.lo; j < ru.hi; j++ { f(&cs[j]) } }
			t0 := time.Now()
			for j := ru.lo; j < ru.hi; j++ { f(&cs[j]) }
			h += time.Since(t0)
		}
		for _, ru := range runs {
			// warm by running the run in reverse order 3 times, then time forward
			part := cs[ru.lo:ru.hi]
			rev(part)
			for k := 0; k < 3; k++ { for j := range part { f(&part[j]) } }
			rev(part)
			t0 := time.Now()
			for j := range part { f(&part[j]) }
			s += time.Since(t0)
		}
		bs, bh, bc = min(bs, s), min(bh, h), min(bc, c)
	}
	n := float64(len(cs))
	fmt.Printf("cold %.1f repeated-same-order %.1f repeated-reverse-order %.1f\n", float64(bc)/n, float64(bh)/n, float64(bs)/n)
}

func TestExpWildShapes(t *testing.T) {
	cs := loadX(t)
	shapes := map[string]int{}
	var n int
	for ci := range cs {
		c := &cs[ci]
		g := c.r.group(c.agent)
		if g == nil || isRobotsTxt(c.tgt) { continue }
		x := &g.idx
		n++
		target := c.tgt
		have := octetsOf(target)
		best := int32(-1)
		var bestOrd uint32
		for i := x.find(target); i >= 0; i = x.nodes[i].parent {
			nd := &x.nodes[i]
			for j, end := nd.start, x.nodes[i+1].start; j < end; j++ {
				rk := &x.ranks[j]
				if best >= 0 && rk.ord <= bestOrd { break }
				if !have.admits(rk.need) { continue }
				if rk.rest > restEnd {
					w := x.wild(rk.rest & restOffset)
					kind := "match"
					if rk.rest&restContains != 0 { kind = "contains" } else if rk.rest&restSuffix != 0 { kind = "suffix" }
					m := x.tries(rk, nd.plen, target)
					shapes[fmt.Sprintf("%s plen=%d segs=%d len=%d m=%v", kind, nd.plen, strings.Count(w, "*"), len(w), m)]++
					if !m { continue }
				} else if rk.rest == restEnd && len(target) != int(nd.plen) {
					continue
				}
				best, bestOrd = j, rk.ord
				break
			}
		}
	}
	type kv struct{ k string; v int }
	var out []kv
	for k, v := range shapes { out = append(out, kv{k, v}) }
	sort.Slice(out, func(a, b int) bool { return out[a].v > out[b].v })
	for i, e := range out { if i < 25 { fmt.Printf("%6d %s\n", e.v, e.k) } }
	fmt.Println("checks", n)
}

func TestExpAllocs(t *testing.T) {
	cs := loadX(t)
	bad := 0
	for _, c := range cs {
		if n := testing.AllocsPerRun(3, func() { c.r.Allowed(c.agent, c.u) }); n != 0 {
			bad++
			if bad < 10 { fmt.Printf("%q path=%q raw=%q q=%q allocs %v\n", c.u.String(), c.u.Path, c.u.RawPath, c.u.RawQuery, n) }
		}
	}
	fmt.Println("allocating", bad)
}
