package sitemap

import (
	"bytes"
	"compress/gzip"
	"errors"
	"flag"
	"fmt"
	"github.com/robotsmw/robotsmw/internal/sharedtest"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
)

var update = flag.Bool("update", false, "rewrite testdata/corpus.golden")

// findCorpus returns the directory of the shared sitemap corpus, looked up
// from the package directory upwards (the repository's clone sits next to
// the shared reference material; see internal/sharedtest).
func findCorpus() (string, bool) {
	c := sharedtest.Corpus("sitemaps")
	return c, c != ""
}

// corpusDir returns the corpus directory or skips the test.
func corpusDir(t testing.TB) string {
	t.Helper()
	dir, ok := findCorpus()
	if !ok {
		t.Skip(sharedtest.Missing("sitemaps"))
	}
	return dir
}

func corpusFiles(t testing.TB) []string {
	files, err := filepath.Glob(filepath.Join(corpusDir(t), "*"))
	if err != nil || len(files) == 0 {
		t.Fatalf("corpus: %v, %d files", err, len(files))
	}
	return files
}

// readAll returns every entry of the file and the error that ended it.
func readAll(r io.Reader, setup func(*Reader)) ([]Entry, error) {
	rd := NewReader(r)
	if setup != nil {
		setup(rd)
	}
	var out []Entry
	for range 1 << 20 {
		e, err := rd.Next()
		if err != nil {
			return out, err
		}
		out = append(out, e)
	}
	return out, errors.New("Next never returned an error")
}

func gz(s string) string {
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	w.Write([]byte(s))
	w.Close()
	return b.String()
}

func locs(es []Entry) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.Loc)
	}
	return out
}

// errKind classifies the error that ended a file.
func errKind(err error) string {
	var se *SyntaxError
	switch {
	case err == io.EOF:
		return "EOF"
	case errors.Is(err, ErrTooLarge):
		return "too large"
	case errors.Is(err, ErrNotSitemap):
		return "not sitemap"
	case errors.As(err, &se) && errors.Is(err, io.ErrUnexpectedEOF):
		return "truncated"
	case errors.As(err, &se):
		return "syntax"
	}
	return fmt.Sprintf("other: %v", err)
}

func TestCorpusGolden(t *testing.T) {
	var b strings.Builder
	for _, f := range corpusFiles(t) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		es, err := readAll(bytes.NewReader(data), nil)
		index := 0
		for _, e := range es {
			if e.Index {
				index++
			}
		}
		final := "EOF"
		if err != io.EOF {
			final = err.Error()
		}
		fmt.Fprintf(&b, "%s\t%d\t%d\t%s\n", filepath.Base(f), len(es), index, final)
	}
	golden := filepath.Join("testdata", "corpus.golden")
	if *update {
		if err := os.WriteFile(golden, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -run TestCorpusGolden -update)", err)
	}
	got := strings.Split(b.String(), "\n")
	for i, w := range strings.Split(string(want), "\n") {
		if i >= len(got) || got[i] != w {
			g := "(missing)"
			if i < len(got) {
				g = got[i]
			}
			t.Errorf("corpus line %d:\n\tgot  %q\n\twant %q", i+1, g, w)
		}
	}
	if len(got) > len(strings.Split(string(want), "\n")) {
		t.Errorf("corpus has more files than %s; run with -update", golden)
	}
}

// TestCorpusByHand checks a few counts of the golden file against counts
// made with grep -c '<loc>', grep -c '<item>' and by reading the files, so
// that the golden file is not only what the code says.
func TestCorpusByHand(t *testing.T) {
	dir := corpusDir(t)
	tests := []struct {
		file  string
		n     int
		first string
	}{
		// docs/sitemaps.md, case 43: 74 pages; counting every *:loc gives 168.
		{"crawler-commons__hebdenbridgetimes-articles-sitemap.xml", 74, "http://www.hebdenbridgetimes.co.uk/news/local/video-tour-de-yorkshire-in-calderdale-1-7242580"},
		{"cyberbivash-sitemap__sitemap.xml", 32, "https://cyberbivash.blogspot.com/"},                          // grep -c '<loc>': 32
		{"go-sitemap__sitemap.xml", 13, "http://HOST/"},                                                        // grep -c '<loc>': 13
		{"crawler-commons__xmlRss_pubDate.xml", 7, "http://www.example.com/article_1"},                         // grep -c '<item>': 7 (case 86)
		{"go-sitemap-parser__sitemapindex-1.xml.gz", 3, "http://HOST/sitemap-01.xml.gz"},                       // zcat | grep -c '<loc>': 3 (case 80)
		{"crawler-commons__sitemap.txt.gz", 5, "http://www.example.com/"},                                      // zcat | grep -c '^http': 5 (case 23)
		{"crawler-commons__sitemap.index.xml", 15, "https://example.com/sitemap.jss?portalCode=10260&lang=en"}, // case 68
		{"advertools__regular_sitemap.xml.gz", 5, "http://www.example.com/"},                                   // case 24: plain XML named .gz
		{"0install-web-site__sitemap.txt", 4, "https://0install.net/index.html"},                               // case 83
		{"crawler-commons__atom.xml", 1, "http://example.org/2003/12/13/atom03"},                               // case 88
	}
	for _, tt := range tests {
		f, err := os.Open(filepath.Join(dir, tt.file))
		if err != nil {
			t.Fatal(err)
		}
		es, err := readAll(f, nil)
		f.Close()
		if len(es) != tt.n || err != io.EOF || es[0].Loc != tt.first {
			t.Errorf("%s: Next() gave %d entries (first %q), then %v; want %d (first %q), then EOF", tt.file, len(es), locs(es[:min(1, len(es))]), err, tt.n, tt.first)
		}
	}
}

// TestCorpusOneByte checks that every corpus file gives the same entries
// and the same final error when read one byte at a time.
func TestCorpusOneByte(t *testing.T) {
	for _, f := range corpusFiles(t) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		want, wantErr := readAll(bytes.NewReader(data), nil)
		got, gotErr := readAll(iotest.OneByteReader(bytes.NewReader(data)), nil)
		if !reflect.DeepEqual(got, want) || fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
			t.Errorf("%s: one byte per read: Next() gave %d entries, then %v; whole buffer: %d, then %v", filepath.Base(f), len(got), gotErr, len(want), wantErr)
		}
	}
}

// attr stops on a vertical tab or form feed between attributes (the fuzzer
// found attr looping for ever on "\v" in an XML declaration).
func TestAttrOddSpace(t *testing.T) {
	for _, attrs := range []string{"\vencoding=\"x\"", "a\f=\"1\" \vencoding='x'", "\v", "\f\f"} {
		v, ok := attr(nil, []byte(attrs), "encoding")
		want := strings.Contains(attrs, "encoding")
		if ok != want || ok && string(v) != "x" {
			t.Errorf("attr(%q, \"encoding\") = %q, %v, want \"x\", %v", attrs, v, ok, want)
		}
	}
}

func TestReaderSkipped(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		entries    int
		skipped    int
	}{
		{"urlset", "<urlset><url><loc>http://a/1</loc></url><url><loc> </loc></url><url><priority>1</priority></url></urlset>", 1, 2},
		{"index", "<sitemapindex><sitemap><loc>http://a/s.xml</loc></sitemap><sitemap></sitemap></sitemapindex>", 1, 1},
		{"text", "http://a/1\n\n  \n/relative\nmailto:x@y\nhttp://a/2\n", 2, 2},
		{"text long line", "http://a/" + strings.Repeat("x", 10<<10) + "\nhttp://a/2\n", 1, 1},
	} {
		rd := NewReader(strings.NewReader(tc.body))
		n := 0
		for {
			_, err := rd.Next()
			if err != nil {
				if err != io.EOF {
					t.Errorf("%s: Next = %v", tc.name, err)
				}
				break
			}
			n++
		}
		if n != tc.entries || rd.Skipped() != tc.skipped {
			t.Errorf("%s: Next gave %d entries, Skipped() = %d; want %d and %d", tc.name, n, rd.Skipped(), tc.entries, tc.skipped)
		}
	}
}
