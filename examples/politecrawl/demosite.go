package main

import (
	"bytes"
	"compress/gzip"
	"embed"
	"net/http"
	"strings"
	"sync"
)

// The demo site's files: robots.txt (a group for PoliteCrawl and one for
// everyone else, Crawl-delay, wildcard and '$' rules, Sitemap lines), a
// sitemap index with a gzip child, and pages that link into disallowed
// areas, directly and through a redirect, a rel="nofollow" link and a
// forum page whose robots meta tag says noindex, nofollow. A page file
// whose first line is a <meta> tag has it in its <head>. "{{site}}" in a file becomes the
// site's base URL.
//
//go:embed site
var siteFiles embed.FS

// shopBusy is how many of the first requests to /shop/ answer 503 with
// Retry-After: 1, as a shop under maintenance would.
const shopBusy = 2

// demoSite serves the demo site at base.
type demoSite struct {
	base string

	mu       sync.Mutex // guards shopLeft
	shopLeft int
}

func newDemoSite() *demoSite { return &demoSite{shopLeft: shopBusy} }

// pageFile maps a page path to its HTML file; "" for none.
func pageFile(path string) string {
	switch {
	case path == "/":
		return "index.html"
	case path == "/about":
		return "about.html"
	case path == "/forum/":
		return "forum.html"
	case path == "/blog/":
		return "blog.html"
	case strings.HasPrefix(path, "/blog/"):
		return "post.html"
	case path == "/shop/":
		return "shop.html"
	case strings.HasPrefix(path, "/shop/item-"):
		return "item.html"
	case strings.HasPrefix(path, "/private/"):
		return "press.html" // only /private/press/ is allowed
	}
	return ""
}

func (d *demoSite) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := r.URL.Path
	if strings.HasPrefix(path, "/shop/") {
		d.mu.Lock()
		busy := d.shopLeft > 0
		if busy {
			d.shopLeft--
		}
		d.mu.Unlock()
		if busy {
			w.Header().Set("Retry-After", "1")
			http.Error(w, "the shop is being restocked", http.StatusServiceUnavailable)
			return
		}
	}
	switch path {
	case "/robots.txt":
		d.file(w, "site/robots.txt", "text/plain", false)
	case "/sitemap_index.xml", "/sitemap-blog.xml":
		d.file(w, "site"+path, "application/xml", false)
	case "/sitemap-pages.xml.gz":
		d.file(w, "site/sitemap-pages.xml", "application/gzip", true)
	case "/old-team":
		http.Redirect(w, r, "/private/team", http.StatusMovedPermanently)
	default:
		name := pageFile(path)
		if name == "" {
			http.NotFound(w, r)
			return
		}
		body, _ := siteFiles.ReadFile("site/pages/" + name)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		head, rest, ok := bytes.Cut(body, []byte("\n"))
		if !ok || !bytes.HasPrefix(head, []byte("<meta")) {
			head, rest = nil, body
		}
		w.Write([]byte("<!doctype html><html><head>"))
		w.Write(head)
		w.Write([]byte("</head><body>"))
		w.Write(rest)
		w.Write([]byte("</body></html>"))
	}
}

// file serves an embedded file with "{{site}}" replaced, gzipped if asked.
func (d *demoSite) file(w http.ResponseWriter, name, contentType string, gz bool) {
	body, err := siteFiles.ReadFile(name)
	if err != nil {
		http.NotFound(w, nil)
		return
	}
	body = bytes.ReplaceAll(body, []byte("{{site}}"), []byte(d.base))
	if gz {
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		zw.Write(body)
		zw.Close()
		body = b.Bytes()
	}
	w.Header().Set("Content-Type", contentType)
	w.Write(body)
}
