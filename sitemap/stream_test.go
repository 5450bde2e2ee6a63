package sitemap

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestWalkStreamsPages: the pages of a large sitemap are passed on while
// it is read, a batch at a time: with the file's first 2,500 entries sent
// and the rest held back, the callback has 2,000 of them; the walk ends
// when ctx does.
func TestWalkStreamsPages(t *testing.T) {
	hold := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			fmt.Fprint(w, "Sitemap: /big.xml\n")
		case "/big.xml":
			fmt.Fprint(w, `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`)
			for i := range 2500 {
				fmt.Fprintf(w, "<url><loc>/p%d</loc></url>\n", i)
			}
			w.(http.Flusher).Flush()
			select {
			case <-hold:
			case <-r.Context().Done():
			}
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	defer close(hold)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := &Walker{}
	unpaced(w)
	n := 0
	_, err := w.Walk(ctx, srv.URL, func(e Entry) error {
		n++
		if n == 2*streamBatch {
			cancel() // as Ctrl-C would, while the file is still being read
		}
		return nil
	})
	if n != 2*streamBatch || !errors.Is(err, context.Canceled) {
		t.Errorf("Walk passed %d pages on and returned %v; want %d passed while the file was read, then context.Canceled", n, err, 2*streamBatch)
	}
}

// TestWalkStreamMaxURLs: a sitemap cut by MaxURLs in one of its batches
// is not remembered as read (its validators are not kept), so that a
// later walk reads it again.
func TestWalkStreamMaxURLs(t *testing.T) {
	s := newTestSite(t, map[string]*testFile{
		"/robots.txt": {body: "Sitemap: /big.xml\n"},
		"/big.xml":    {body: urlsetOf(pagePaths(2500)...), etag: `"v1"`},
	})
	w := &Walker{Options: Options{MaxURLs: 1500}}
	_, st, err := walkSite(t, w, s)
	if err != nil || st.URLs != 1500 || st.Dropped.Limit != 1000 || st.Cut&CutURLs == 0 {
		t.Fatalf("Walk = %+v, %v; want 1500 URLs, 1000 dropped at the limit", st, err)
	}
	w.MaxURLs = 0
	_, st, err = walkSite(t, w, s)
	if err != nil || st.NotModified != 0 || st.URLs != 2500 {
		t.Errorf("second Walk = %+v, %v; want the cut sitemap read again in full, not found unchanged", st, err)
	}
}
