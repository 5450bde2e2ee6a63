package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/robotsmw/robotsmw/sitemap"
)

// maxProgress is the widest progress line drawn, to fit a terminal of 80
// columns without wrapping (which would break the redraw).
const maxProgress = 79

// A progress redraws one line on a terminal while a walk runs. It is
// called from the goroutine that runs the walk's callback only.
type progress struct {
	w                      io.Writer // nil: not a terminal, draw nothing
	sitemaps, failed, urls int
	drawn                  int // runes of the line on screen
}

// newProgress returns a progress that draws on w when w is a terminal.
func newProgress(w io.Writer) *progress {
	if !isTerminal(w) {
		return &progress{}
	}
	return &progress{w: w}
}

// isTerminal reports whether w is a character device, such as a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(interface{ Stat() (os.FileInfo, error) })
	if !ok {
		return false
	}
	info, err := f.Stat()
	return err == nil && info.Mode()&os.ModeCharDevice != 0
}

// sitemap is the walk's OnSitemap.
func (p *progress) sitemap(r sitemap.SitemapReport) {
	if r.Err != nil {
		p.failed++
	} else if !r.Disallowed {
		p.sitemaps++
	}
	p.draw(r.URL)
}

// page counts a page URL passed on.
func (p *progress) page() {
	p.urls++
	if p.urls%1000 == 0 {
		p.draw("")
	}
}

func (p *progress) draw(current string) {
	if p.w == nil {
		return
	}
	line := fmt.Sprintf("walking: %s, %s, %d failed", plural(p.sitemaps, "sitemap"), plural(p.urls, "URL"), p.failed)
	if current != "" {
		line += " " + current
	}
	if utf8.RuneCountInString(line) > maxProgress {
		line = string([]rune(line)[:maxProgress-1]) + "…"
	}
	n := utf8.RuneCountInString(line)
	// Blanks overwrite what is left of a longer line drawn before.
	fmt.Fprint(p.w, "\r"+line+strings.Repeat(" ", max(0, p.drawn-n)))
	p.drawn = n
}

// clear erases the line, so that what follows starts on a clean one.
func (p *progress) clear() {
	if p.w == nil || p.drawn == 0 {
		return
	}
	fmt.Fprint(p.w, "\r"+strings.Repeat(" ", p.drawn)+"\r")
	p.drawn = 0
}
