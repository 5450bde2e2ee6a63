package main

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"

	robotsmw "github.com/robotsmw/robotsmw/middleware"
)

// A progress line, redrawn in place on a terminal every 200 ms: what the
// Guard counted so far, the requests under way and each busy host's rate.
type progress struct {
	w    io.Writer
	done chan struct{}
	wg   sync.WaitGroup
}

// start draws the line until stop; it returns stop.
func (p *progress) start(g *robotsmw.Guard, rep *report) func() {
	p.done = make(chan struct{})
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		last := map[string]int64{}
		lastAt := time.Now()
		for {
			select {
			case <-p.done:
				fmt.Fprint(p.w, "\r\x1b[K")
				return
			case now := <-tick.C:
				fmt.Fprint(p.w, "\r\x1b[K"+p.line(g, rep, last, now.Sub(lastAt)))
				lastAt = now
			}
		}
	}()
	return p.stop
}

func (p *progress) stop() {
	select {
	case <-p.done:
		return
	default:
	}
	close(p.done)
	p.wg.Wait()
}

// line returns the progress line; last holds each host's count of
// requests sent at the previous line, for its rate.
func (p *progress) line(g *robotsmw.Guard, rep *report, last map[string]int64, since time.Duration) string {
	st := g.Stats()
	t := st.Total
	var rates []string
	for _, h := range st.Busiest {
		if d := h.Sent - last[h.Host]; d > 0 && since > 0 {
			rates = append(rates, fmt.Sprintf("%s %.1f req/s", h.Host, float64(d)/since.Seconds()))
		}
		last[h.Host] = h.Sent
	}
	sort.Strings(rates)
	rep.mu.Lock()
	queued := rep.inFlight
	rep.mu.Unlock()
	// Deferrals as the final report counts them: every attempt sent again
	// later, deferred before it was sent or retried after it failed.
	s := fmt.Sprintf("%5.1fs  pages fetched %d  requests sent %d  blocked %d  deferrals %d  hosts backing off %d  queued %d",
		time.Since(rep.start).Seconds(), t.Pages, t.Sent, t.Blocked, t.Deferred+t.Retried, st.PausedHosts, queued)
	if len(rates) > 0 {
		s += "  " + strings.Join(rates, ", ")
	}
	return s
}
