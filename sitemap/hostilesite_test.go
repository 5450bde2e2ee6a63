package sitemap

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/robotsmw/robotsmw/internal/privatetest"
	"github.com/robotsmw/robotsmw/netguard"
)

// A hostile site: one robots.txt lists ten sitemaps, each an
// attack on the walk.
//
//	/bomb.xml.gz        a gzip bomb: 60 MiB of white space in 60 KB
//	/cycle-a.xml        an index cycle: a → b → a, a → a
//	:D/deep/0.xml       indexes nested ever deeper, on another port
//	/index50k.xml       an index of 50,000 children, each 50,000 URLs
//	/four-million.xml   an index of 80 children of 50,000 URLs: 4 M URLs
//	/ports.txt          pages on 100 ports of the site's own host
//	http://127.0.0.2:P/ another loopback address (the machine's Redis)
//	http://169.254.169.254/latest/meta-data/   cloud metadata
//	http://10.0.0.1/sitemap.xml                the private network
//	http://[::ffff:192.168.1.1]/s.xml          an IPv4-mapped private address
//
// With the Walker's defaults and netguard's Dialer (the site's own address
// allowed), the walk passes DefaultMaxURLs pages on, connects to no other
// non-public address, ends with every bound named in Stats.Cut, and its
// peak heap stays under hostileHeapBound.
type hostileSite struct {
	srv   *httptest.Server
	deep  *httptest.Server    // the nested indexes, on another port
	inner *privatetest.Server // the machine's Redis, on 127.0.0.2
	bomb  []byte
}

// hostileHeapBound is the documented bound of the walk's peak live heap
// (the README's security section; measured: 32-38 MB, and 58-67 MB with
// the garbage GOGC=100 lets accumulate): the fingerprints of a million URLs
// (12 MB), the queue of 50,000 sitemaps (10 MB), and one sitemap of 50,000
// entries at a time per host (8 MB).
const hostileHeapBound = 64 << 20

func newHostileSite(tb testing.TB) *hostileSite {
	tb.Helper()
	h := &hostileSite{}
	var z bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&z, gzip.BestCompression)
	zw.Write([]byte(`<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`))
	spaces := bytes.Repeat([]byte(" "), 1<<20)
	for range 60 {
		zw.Write(spaces)
	}
	zw.Write([]byte(`</urlset>`))
	zw.Close()
	h.bomb = z.Bytes()

	h.inner = privatetest.New(tb, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, "http://127.0.0.2/admin/delete?all=1")
	}))
	h.srv = httptest.NewServer(http.HandlerFunc(h.serve))
	tb.Cleanup(h.srv.Close)
	h.deep = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/deep/"), ".xml"))
		if err != nil {
			http.NotFound(w, r)
			return
		}
		fmt.Fprint(w, indexOf(fmt.Sprintf("%s/deep/%d.xml", h.deep.URL, n+1)))
	}))
	tb.Cleanup(h.deep.Close)
	return h
}

func (h *hostileSite) serve(w http.ResponseWriter, r *http.Request) {
	base := h.srv.URL
	p := r.URL.Path
	switch {
	case p == "/robots.txt":
		inner := h.inner.URL
		for _, s := range []string{"/bomb.xml.gz", "/cycle-a.xml", h.deep.URL + "/deep/0.xml", "/index50k.xml",
			"/four-million.xml", "/ports.txt", inner + "/s.txt", "http://169.254.169.254/latest/meta-data/",
			"http://10.0.0.1/sitemap.xml", "http://[::ffff:192.168.1.1]/s.xml"} {
			fmt.Fprintf(w, "Sitemap: %s\n", s)
		}
	case p == "/bomb.xml.gz":
		w.Header().Set("Content-Type", "application/gzip")
		w.Write(h.bomb)
	case p == "/cycle-a.xml":
		fmt.Fprint(w, indexOf(base+"/cycle-b.xml", base+"/cycle-a.xml"))
	case p == "/cycle-b.xml":
		fmt.Fprint(w, indexOf(base+"/cycle-a.xml"))
	case p == "/index50k.xml":
		writeIndex(w, base+"/c/", 50_000)
	case p == "/four-million.xml":
		writeIndex(w, base+"/m/", 80)
	case strings.HasPrefix(p, "/c/"), strings.HasPrefix(p, "/m/"):
		// 50,000 page URLs a file, as a text sitemap, streamed.
		bw := bufio.NewWriter(w)
		for i := range 50_000 {
			fmt.Fprintf(bw, "%s/p%s/%d\n", base, strings.TrimSuffix(p, ".txt"), i)
		}
		bw.Flush()
	case p == "/ports.txt":
		host := strings.TrimPrefix(base, "http://")
		host = host[:strings.LastIndexByte(host, ':')]
		for port := 1; port <= 100; port++ {
			fmt.Fprintf(w, "http://%s:%d/probe\n", host, port)
		}
	default:
		http.NotFound(w, r)
	}
}

func writeIndex(w http.ResponseWriter, prefix string, n int) {
	bw := bufio.NewWriter(w)
	bw.WriteString(`<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`)
	for i := range n {
		fmt.Fprintf(bw, "<sitemap><loc>%s%d.txt</loc></sitemap>", prefix, i)
	}
	bw.WriteString("</sitemapindex>")
	bw.Flush()
}

// A recordingDialer dials through netguard and records every connection
// that was made, by address.
type recordingDialer struct {
	d      netguard.Dialer
	mu     sync.Mutex // guards made
	made   map[netip.Addr]int
	refuse atomic.Int64
}

func (r *recordingDialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	c, err := r.d.DialContext(ctx, network, addr)
	if err != nil {
		r.refuse.Add(1)
		return nil, err
	}
	ap, _ := netip.ParseAddrPort(c.RemoteAddr().String())
	r.mu.Lock()
	r.made[ap.Addr().Unmap()]++
	r.mu.Unlock()
	return c, nil
}

// A heapPeak is the most heap a walk used: Live, the live heap each
// garbage collection found (/gc/heap/live:bytes), and Objects, the heap
// objects sampled every 2 ms, garbage not yet collected included, which
// GOGC lets grow to about twice Live.
type heapPeak struct{ Live, Objects uint64 }

// peakHeap samples the heap until stop is called, and returns the peaks.
func peakHeap() (stop func() heapPeak) {
	samples := []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/memory/classes/heap/objects:bytes"}}
	var peak heapPeak
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(2 * time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(samples)
			peak.Live = max(peak.Live, samples[0].Value.Uint64())
			peak.Objects = max(peak.Objects, samples[1].Value.Uint64())
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() heapPeak {
		close(done)
		<-finished
		runtime.GC() // the live heap at the walk's end
		metrics.Read(samples)
		peak.Live = max(peak.Live, samples[0].Value.Uint64())
		return peak
	}
}

// walkHostile walks the hostile site with the Walker's defaults through
// netguard, and returns what it did.
func walkHostile(tb testing.TB, h *hostileSite) (Stats, *recordingDialer, heapPeak, error) {
	rd := &recordingDialer{made: make(map[netip.Addr]int)}
	rd.d.AllowAddrPorts, _ = netguard.AllowSite(context.Background(), h.srv.URL)
	// The nested indexes are on another port of the site's address, which
	// netguard refuses unless allowed: allowed, so the walk meets its
	// depth bound.
	deep, _ := netguard.AllowSite(context.Background(), h.deep.URL)
	rd.d.AllowAddrPorts = append(rd.d.AllowAddrPorts, deep...)
	tr := netguard.Transport(nil)
	tr.DialContext = rd.DialContext
	defer tr.CloseIdleConnections()
	w := &Walker{Client: &http.Client{Transport: tr}, Options: Options{Interval: -1}} // bounds, not pacing (pacing_test.go)
	runtime.GC()
	stop := peakHeap()
	n := 0
	st, err := w.Walk(context.Background(), h.srv.URL, func(Entry) error { n++; return nil })
	peak := stop()
	if n != st.URLs {
		tb.Errorf("Walk passed %d pages on, Stats.URLs = %d", n, st.URLs)
	}
	return st, rd, peak, err
}

func TestHostileSite(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("walks a million URLs: not with -short or -race")
	}
	h := newHostileSite(t)
	st, rd, peak, err := walkHostile(t, h)
	t.Logf("Stats %+v; peak live heap %.1f MB, heap objects %.1f MB; dials refused %d; err %v",
		st, float64(peak.Live)/(1<<20), float64(peak.Objects)/(1<<20), rd.refuse.Load(), err)
	if st.URLs != DefaultMaxURLs {
		t.Errorf("Walk passed %d pages on, want DefaultMaxURLs (%d)", st.URLs, DefaultMaxURLs)
	}
	want := CutURLs | CutSitemaps | CutDepth | CutSize | CutHosts
	if st.Cut != want {
		t.Errorf("Walk Stats.Cut = %q, want %q", st.Cut, want)
	}
	for a, n := range rd.made {
		if a != netip.MustParseAddr("127.0.0.1") {
			t.Errorf("Walk made %d connections to %v, want none but to the site's own address", n, a)
		}
	}
	if n := h.inner.Conns(); n != 0 {
		t.Errorf("the server on 127.0.0.2 accepted %d connections, want 0", n)
	}
	if rd.refuse.Load() < 4 {
		t.Errorf("%d dials refused, want at least the 4 private sitemaps'", rd.refuse.Load())
	}
	if peak.Live > hostileHeapBound {
		t.Errorf("peak live heap %d MB, want under %d MB", peak.Live>>20, hostileHeapBound>>20)
	}
}

// BenchmarkHostileSite walks the hostile site once per iteration and
// reports the peak heap.
func BenchmarkHostileSite(b *testing.B) {
	h := newHostileSite(b)
	var peak heapPeak
	for b.Loop() {
		_, _, p, _ := walkHostile(b, h)
		peak.Live, peak.Objects = max(peak.Live, p.Live), max(peak.Objects, p.Objects)
	}
	b.ReportMetric(float64(peak.Live)/(1<<20), "peak-live-MB")
	b.ReportMetric(float64(peak.Objects)/(1<<20), "peak-heap-MB")
}
