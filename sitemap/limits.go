package sitemap

import "io"

// Limits set by the sitemaps.org protocol ("Sitemap file location" and
// "Using Sitemap index files"): a sitemap or sitemap index lists at most
// 50,000 URLs and is at most 50 MiB (52,428,800 bytes) uncompressed.
const (
	DefaultMaxEntries = 50_000
	DefaultMaxSize    = 50 << 20
	// DefaultMaxCompressedSize caps the bytes read from the underlying
	// reader. A gzip file is smaller than its content, so the protocol's
	// 50 MiB serves here as well (docs/sitemaps.md#limits).
	DefaultMaxCompressedSize = 50 << 20
)

// Internal caps that keep memory flat whatever the input
// (docs/sitemaps.md#limits, cases 58, 60). They are far above anything a
// valid sitemap needs.
const (
	maxLoc        = 2048    // characters in a Loc (sitemaps.org XSD tLoc; docs/sitemaps.md, case 97)
	maxValue      = 8 << 10 // bytes kept of one element's text
	maxTag        = 8 << 10 // bytes kept of one tag
	maxDepth      = 256     // open elements (docs/sitemaps.md, case 58)
	maxName       = 256     // bytes of an element name kept to match its end tag
	maxAlternates = 1000    // hreflang links kept per entry
	maxGzipLayers = 2       // transport encoding plus a .gz file (docs/sitemaps.md, case 25)
	bufSize       = 4 << 10 // the Reader's window on the decompressed file
)

// A limitReader reads at most n bytes from r and then returns err if r has
// more, or r's own error (io.EOF) if it has not. Unlike io.LimitReader it
// tells a file that ends exactly at the limit from one that goes past it
// (docs/sitemaps.md#limits: never truncate silently).
type limitReader struct {
	r   io.Reader
	n   int64 // bytes left
	max int64 // n at the start, if set (Reader.Size)
	err error
}

func (l *limitReader) Read(p []byte) (int, error) {
	if l.n <= 0 {
		var one [1]byte
		for {
			n, err := l.r.Read(one[:])
			if n > 0 {
				return 0, l.err
			}
			if err != nil {
				return 0, err
			}
		}
	}
	if int64(len(p)) > l.n {
		p = p[:l.n]
	}
	n, err := l.r.Read(p)
	l.n -= int64(n)
	return n, err
}
