package sitemap

import (
	"bytes"
	"compress/gzip"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestGzipBomb reads one entry followed by 120 MB of spaces, gzipped to
// about 120 KB (docs/sitemaps.md#limits, case 30): Next returns the entry,
// then an error wrapping ErrTooLarge once 50 MiB are decompressed, and the
// Reader allocates a few hundred KB, not the decompressed size.
func TestGzipBomb(t *testing.T) {
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	w.Write([]byte(head + urls("http://x/1")))
	chunk := bytes.Repeat([]byte(" "), 1<<20)
	for range 120 {
		w.Write(chunk)
	}
	w.Write([]byte(tail))
	w.Close()
	bomb := b.Bytes()

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	es, err := readAll(bytes.NewReader(bomb), nil)
	runtime.ReadMemStats(&after)
	if len(es) != 1 || es[0].Loc != "http://x/1" || !errors.Is(err, ErrTooLarge) {
		t.Fatalf("Next() on a %d-byte bomb gave %q, then %v; want [http://x/1], then ErrTooLarge", len(bomb), locs(es), err)
	}
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("bomb: %d bytes compressed, %d bytes allocated while reading", len(bomb), alloc)
	if alloc > 2<<20 {
		t.Errorf("reading the bomb allocated %d bytes, want under 2 MiB", alloc)
	}

	// The same with gzip over gzip (docs/sitemaps.md, case 25).
	b.Reset()
	w = gzip.NewWriter(&b)
	w.Write(bomb)
	w.Close()
	es, err = readAll(bytes.NewReader(b.Bytes()), nil)
	if len(es) != 1 || !errors.Is(err, ErrTooLarge) {
		t.Errorf("Next() on a bomb in gzip gave %q, then %v; want [http://x/1], then ErrTooLarge", locs(es), err)
	}
}

// TestScrapyBomb reads the corpus's gzip bomb (27,988 bytes that expand to
// 11,511,612) with a 10 MiB limit (docs/sitemaps.md, case 30).
func TestScrapyBomb(t *testing.T) {
	f, err := os.Open(filepath.Join(corpusDir(t), "scrapy__bomb-gzip.bin"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	es, err := readAll(f, func(r *Reader) { r.MaxSize = 10 << 20 })
	if len(es) != 0 || !errors.Is(err, ErrTooLarge) {
		t.Errorf("Next() with MaxSize = 10 MiB gave %d entries, then %v; want 0, then ErrTooLarge", len(es), err)
	}
}

// TestAllocations checks that memory does not grow with the file: reading
// 20,000 entries allocates the entries' strings and a fixed amount, and
// the allocations per entry stay the same for 2,000 and 20,000 entries.
func TestAllocations(t *testing.T) {
	perEntry := func(n int) float64 {
		var sb strings.Builder
		sb.WriteString(head)
		for range n {
			sb.WriteString("<url><loc>http://www.example.com/some/page.html</loc><changefreq>daily</changefreq></url>\n")
		}
		sb.WriteString(tail)
		body := sb.String()
		allocs := testing.AllocsPerRun(3, func() {
			r := NewReader(strings.NewReader(body))
			for {
				if _, err := r.Next(); err != nil {
					break
				}
			}
		})
		return allocs / float64(n)
	}
	small, large := perEntry(2000), perEntry(20000)
	t.Logf("allocations per entry: %.3f (2,000 entries), %.3f (20,000)", small, large)
	if large > 1.1 || large > small {
		t.Errorf("AllocsPerRun per entry = %.3f for 2,000 entries and %.3f for 20,000, want at most 1.1 and not growing", small, large)
	}
}
