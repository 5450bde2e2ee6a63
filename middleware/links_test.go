package robotsmw

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/gocolly/colly/v2"
	"golang.org/x/time/rate"
)

// linkSite serves pages whose links test FollowLinks: /x/… pages must
// never be requested.
func linkSite(t *testing.T) *site {
	pages := map[string]string{
		"/": `<head><title>home</title></head><body>
<a href="/a">a</a> <a href="/x/rel" rel="nofollow">nofollow link</a>
<a href="/ugc" rel="UGC external">ugc</a> <a href="/meta">meta nofollow page</a>
<a href="/header">header nofollow page</a> <a href="/other-agent">other agent</a>
<a href="/noindex">noindex</a> <map><area href="/area"></map>
<a href="javascript:void(0)">js</a> <a href="mailto:a@example.com">mail</a> <a href="/a#top">anchor</a></body>`,
		"/a":           `<body>a</body>`,
		"/ugc":         `<body>ugc</body>`,
		"/area":        `<body>area</body>`,
		"/meta":        `<head><META NAME="robots" CONTENT="NOFOLLOW"></head><body><a href="/x/meta">m</a></body>`,
		"/header":      `<body><a href="/x/header">h</a></body>`,
		"/other-agent": `<head><meta name="otherbot" content="nofollow"><base href="/base/"></head><body><a href="rel">r</a></body>`,
		"/base/rel":    `<body>resolved against base href</body>`,
		"/noindex":     `<head><meta name="robots" content="noindex"></head><body>n</body>`,
	}
	return newSite(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/robots.txt" {
			return
		}
		body, ok := pages[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		if r.URL.Path == "/header" {
			w.Header().Set("X-Robots-Tag", "examplebot: nofollow")
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, "<html>%s</html>", body)
	})
}

// notFollowedLog records the *NotFollowedErrors an ErrorHandler gets.
type notFollowedLog struct {
	mu  sync.Mutex // guards got
	got []string   // "path: reason"
}

func (l *notFollowedLog) handler(_ *colly.Request, err error) {
	var nf *NotFollowedError
	if errors.As(err, &nf) {
		l.mu.Lock()
		l.got = append(l.got, nf.URL.Path+": "+nf.Reason)
		l.mu.Unlock()
	}
}

// sorted returns what l recorded, sorted.
func (l *notFollowedLog) sorted() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Sorted(slices.Values(l.got))
}

func TestFollowLinks(t *testing.T) {
	s := linkSite(t)
	var nfl notFollowedLog
	g := &Guard{Rate: rate.Inf, ErrorHandler: nfl.handler}
	var mu sync.Mutex
	c := colly.NewCollector(colly.UserAgent("ExampleBot/1.0"), g.Attach, colly.Async())
	g.FollowLinks(c)
	noindex := map[string]bool{}
	c.OnResponse(func(r *colly.Response) {
		d := g.Directives(r)
		mu.Lock()
		noindex[r.Request.URL.Path] = d.NoIndex
		mu.Unlock()
	})
	c.Visit(s.URL + "/")
	c.Wait()

	var fetched []string
	for _, h := range s.log() {
		if h.path != "/robots.txt" {
			fetched = append(fetched, h.path)
		}
	}
	slices.Sort(fetched)
	want := []string{"/", "/a", "/area", "/base/rel", "/header", "/meta", "/noindex", "/other-agent", "/ugc"}
	if !slices.Equal(fetched, want) {
		t.Errorf("fetched %q, want %q (nothing under /x/)", fetched, want)
	}
	notFollowed := nfl.sorted()
	wantNF := []string{
		"/x/header: page says nofollow (X-Robots-Tag)",
		"/x/meta: page says nofollow (meta robots)",
		`/x/rel: rel="nofollow"`,
	}
	if !slices.Equal(notFollowed, wantNF) {
		t.Errorf("ErrorHandler got %q, want %q", notFollowed, wantNF)
	}
	if st := g.Stats().Total; st.NotFollowed != 3 || st.GaveUp != 0 {
		t.Errorf("Stats().Total NotFollowed = %d, GaveUp = %d; want 3 and 0 (javascript: and mailto: links are skipped)", st.NotFollowed, st.GaveUp)
	}
	if !noindex["/noindex"] || noindex["/a"] {
		t.Errorf("Directives(r).NoIndex in OnResponse = %v, want true for /noindex only", noindex)
	}
}

func TestFollowLinksOptions(t *testing.T) {
	for _, tc := range []struct {
		links Links
		want  []string
	}{
		{Links{SkipUGC: true}, []string{"/", "/a", "/area", "/base/rel", "/header", "/meta", "/noindex", "/other-agent"}},
	} {
		s := linkSite(t)
		g := &Guard{Rate: rate.Inf, Links: tc.links}
		c := colly.NewCollector(colly.UserAgent("ExampleBot/1.0"), g.Attach)
		g.FollowLinks(c)
		c.Visit(s.URL + "/")
		var fetched []string
		for _, h := range s.log() {
			if h.path != "/robots.txt" {
				fetched = append(fetched, h.path)
			}
		}
		slices.Sort(fetched)
		if !slices.Equal(fetched, tc.want) {
			t.Errorf("FollowLinks with %+v fetched %q, want %q", tc.links, fetched, tc.want)
		}
	}
}

func TestHeadOf(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`<html><head><meta name=robots content=noindex></head><body>x</body>`, `<html><head><meta name=robots content=noindex>`},
		{`<HTML><HEAD><TITLE>t</TITLE><BODY>`, `<HTML><HEAD><TITLE>t</TITLE>`},
		{`no tags at all`, `no tags at all`},
		{`<head><!-- no <body> here --><meta name=robots content=noindex></head><body>`, `<head><!-- no <body> here --><meta name=robots content=noindex>`},
		{`<head><script>var s="<body>";</script><meta name=robots content=noindex><p>text`, `<head><script>var s="<body>";</script><meta name=robots content=noindex>`},
	} {
		if got := string(headOf([]byte(tc.in))); got != tc.want {
			t.Errorf("headOf(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestFollowLinksRefusedByColly(t *testing.T) {
	// colly refuses links once MaxRequests is reached: they are not
	// followed, and say so, rather than vanish; one to a page visited
	// already is no loss (colly checks MaxRequests first).
	for _, async := range []bool{false, true} {
		s := newSite(t, robots("", func(w http.ResponseWriter, r *http.Request) bool {
			w.Header().Set("Content-Type", "text/html")
			if r.URL.Path == "/" {
				fmt.Fprint(w, `<html><body><a href="/a">a</a><a href="/b">b</a><a href="/c">c</a></body></html>`)
			} else {
				fmt.Fprint(w, `<html><body><a href="/">home, visited already</a></body></html>`)
			}
			return true
		}))
		var nfl notFollowedLog
		g := &Guard{Rate: rate.Inf, ErrorHandler: nfl.handler}
		c := colly.NewCollector(g.Attach, colly.Async(async), colly.MaxRequests(2))
		g.FollowLinks(c)
		c.Visit(s.URL + "/")
		c.Wait()
		reasons := nfl.sorted()
		if !async {
			want := []string{"/b: colly refused it: Max Requests limit reached", "/c: colly refused it: Max Requests limit reached"}
			if !slices.Equal(reasons, want) {
				t.Errorf("NotFollowedErrors with MaxRequests(2) = %q, want %q", reasons, want)
			}
		}
		// An asynchronous collector counts its requests when they start,
		// so it may send more than MaxRequests (colly's own way): each
		// link is fetched or reported.
		fetched := 0
		for _, h := range s.log() {
			if h.path == "/a" || h.path == "/b" || h.path == "/c" {
				fetched++
			}
		}
		if fetched+len(reasons) != 3 || g.Stats().Total.NotFollowed != int64(len(reasons)) {
			t.Errorf("async=%v: %d links fetched, %d reported (%q), Stats.NotFollowed %d; want every link of three fetched or reported, and counted",
				async, fetched, len(reasons), reasons, g.Stats().Total.NotFollowed)
		}
	}
}

func TestFollowLinksOutcomeIsNoRefusal(t *testing.T) {
	// A synchronous collector's Visit returns the outcome of the request
	// it sent: a link followed whose retry colly refused (MaxRequests) was
	// followed, and its outcome went to OnError; it is no link not
	// followed.
	s := newSite(t, robots("", func(w http.ResponseWriter, r *http.Request) bool {
		w.Header().Set("Content-Type", "text/html")
		switch r.URL.Path {
		case "/":
			fmt.Fprint(w, `<html><body><a href="/a">a</a></body></html>`)
		case "/a":
			w.WriteHeader(http.StatusInternalServerError)
		}
		return true
	}))
	var nfl notFollowedLog
	g := &Guard{Rate: rate.Inf, Backoff: time.Millisecond, ErrorHandler: nfl.handler}
	c := colly.NewCollector(g.Attach, colly.MaxRequests(3))
	g.FollowLinks(c)
	var final error
	c.OnError(func(_ *colly.Response, err error) {
		if IsFinal(err) {
			final = err
		}
	})
	c.Visit(s.URL + "/")
	if nf := nfl.sorted(); final == nil || len(nf) != 0 || g.Stats().Total.NotFollowed != 0 {
		t.Errorf("a followed link given up: final OnError %v, NotFollowedErrors %q, Stats.NotFollowed %d; want a final outcome and no link not followed",
			final, nf, g.Stats().Total.NotFollowed)
	}
}
