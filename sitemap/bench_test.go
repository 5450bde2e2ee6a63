package sitemap

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// benchFiles returns the inputs both benchmarks can read: the plain XML
// urlsets and sitemap indexes of the corpus ("corpus"), and a generated
// urlset of 50,000 entries ("50k").
func benchFiles(b *testing.B) map[string][][]byte {
	var corpus [][]byte
	for _, f := range corpusFiles(b) {
		data, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		if strings.HasSuffix(filepath.Base(f), ".gz") || !bytes.Contains(data, []byte("<urlset")) && !bytes.Contains(data, []byte("<sitemapindex")) {
			continue
		}
		corpus = append(corpus, data)
	}
	var big strings.Builder
	big.WriteString(head)
	for i := range DefaultMaxEntries {
		fmt.Fprintf(&big, "<url>\n  <loc>https://www.example.com/section-%d/page-%d.html</loc>\n  <lastmod>2024-05-%02dT10:00:00+00:00</lastmod>\n  <changefreq>weekly</changefreq>\n  <priority>0.%d</priority>\n</url>\n", i%97, i, i%28+1, i%10)
	}
	big.WriteString(tail)
	return map[string][][]byte{"corpus": corpus, "50k": {[]byte(big.String())}}
}

func totalSize(files [][]byte) int64 {
	var n int64
	for _, f := range files {
		n += int64(len(f))
	}
	return n
}

// BenchmarkReader reads every entry with Reader.Next.
func BenchmarkReader(b *testing.B) {
	for _, name := range []string{"corpus", "50k"} {
		files := benchFiles(b)[name]
		b.Run(name, func(b *testing.B) {
			b.SetBytes(totalSize(files))
			b.ReportAllocs()
			for b.Loop() {
				for _, data := range files {
					r := NewReader(bytes.NewReader(data))
					for {
						if _, err := r.Next(); err != nil {
							break
						}
					}
				}
			}
		})
	}
}

// xmlEntry is what BenchmarkEncodingXML decodes each <url> or <sitemap> into.
type xmlEntry struct {
	Loc        string `xml:"loc"`
	LastMod    string `xml:"lastmod"`
	ChangeFreq string `xml:"changefreq"`
	Priority   string `xml:"priority"`
}

// BenchmarkEncodingXML does the same work with encoding/xml: a Decoder in
// non-strict mode (strict mode stops at the corpus's raw "&"), each <url>
// or <sitemap> decoded into a struct with DecodeElement. It is the
// reference for the speed of Reader.
func BenchmarkEncodingXML(b *testing.B) {
	for _, name := range []string{"corpus", "50k"} {
		files := benchFiles(b)[name]
		b.Run(name, func(b *testing.B) {
			b.SetBytes(totalSize(files))
			b.ReportAllocs()
			for b.Loop() {
				for _, data := range files {
					d := xml.NewDecoder(bytes.NewReader(data))
					d.Strict = false
					for {
						tok, err := d.Token()
						if err == io.EOF || err != nil {
							break
						}
						if se, ok := tok.(xml.StartElement); ok && (se.Name.Local == "url" || se.Name.Local == "sitemap") {
							var e xmlEntry
							if err := d.DecodeElement(&e, &se); err != nil {
								break
							}
						}
					}
				}
			}
		})
	}
}
