package sitemap

import (
	"bytes"
	"compress/gzip"
	"encoding/xml"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"
)

// urlset returns a urlset of n entries with <loc> and <lastmod>; 50,000
// entries, the most sitemaps.org allows in one file, are 7.2 MB here.
func urlset(n int) []byte {
	var s strings.Builder
	s.WriteString(head + "\n")
	for i := range n {
		fmt.Fprintf(&s, "  <url>\n    <loc>https://www.example.com/catalogue/section-%d/item-%07d.html</loc>\n    <lastmod>2024-%02d-%02dT10:%02d:00+00:00</lastmod>\n  </url>\n", i%97, i, i%12+1, i%28+1, i%60)
	}
	s.WriteString(tail + "\n")
	return []byte(s.String())
}

// readEntries reads every entry of data and returns how many there were.
func readEntries(b *testing.B, data []byte) int {
	r := NewReader(bytes.NewReader(data))
	n := 0
	for {
		_, err := r.Next()
		if err == io.EOF {
			return n
		}
		if err != nil {
			b.Fatal(err)
		}
		n++
	}
}

// BenchmarkUrlset50k reads a 50,000-entry urlset with lastmod (the largest
// sitemaps.org allows), plain and gzip-compressed, and, for reference in
// the same run, does the same with encoding/xml (the whole document unmarshalled into structs)
// and decompresses the gzip file alone. MB/s are of the uncompressed
// document throughout, so the gzip ratio is read directly.
func BenchmarkUrlset50k(b *testing.B) {
	const n = 50_000
	plain := urlset(n)
	packed := []byte(gz(string(plain)))
	run := func(name string, f func(b *testing.B)) {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(plain)))
			b.ReportAllocs()
			for b.Loop() {
				f(b)
			}
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "entries/s")
		})
	}
	run("reader/plain", func(b *testing.B) {
		if got := readEntries(b, plain); got != n {
			b.Fatalf("read %d entries, want %d", got, n)
		}
	})
	run("reader/gzip", func(b *testing.B) {
		if got := readEntries(b, packed); got != n {
			b.Fatalf("read %d entries, want %d", got, n)
		}
	})
	run("encoding-xml/plain", func(b *testing.B) {
		var doc struct {
			URLs []struct {
				Loc     string `xml:"loc"`
				LastMod string `xml:"lastmod"`
			} `xml:"url"`
		}
		if err := xml.Unmarshal(plain, &doc); err != nil || len(doc.URLs) != n {
			b.Fatalf("xml.Unmarshal: %d entries, %v", len(doc.URLs), err)
		}
	})
	run("gunzip-only", func(b *testing.B) {
		z, err := gzip.NewReader(bytes.NewReader(packed))
		if err != nil {
			b.Fatal(err)
		}
		if _, err := io.Copy(io.Discard, z); err != nil {
			b.Fatal(err)
		}
	})
}

// BenchmarkPeakHeap reports the live heap a Reader adds while reading
// gzip-compressed urlsets of 1,000 and 50,000 entries: measured after a
// collection at ten points of the file, over the heap before reading (the
// input itself is excluded; entries are dropped as a caller that queues
// them elsewhere would). It must not grow with the file.
func BenchmarkPeakHeap(b *testing.B) {
	for _, n := range []int{1_000, 50_000} {
		data := []byte(gz(string(urlset(n))))
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			var peak uint64
			for b.Loop() {
				var ms runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&ms)
				base := ms.HeapAlloc
				r := NewReader(bytes.NewReader(data))
				for i := 0; ; i++ {
					if _, err := r.Next(); err != nil {
						break
					}
					if i%(n/10) == 0 {
						runtime.GC()
						runtime.ReadMemStats(&ms)
						if ms.HeapAlloc > base {
							peak = max(peak, ms.HeapAlloc-base)
						}
					}
				}
			}
			b.ReportMetric(float64(peak)/1024, "peak-heap-KB")
		})
	}
}
