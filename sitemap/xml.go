package sitemap

import (
	"bytes"
	"fmt"
	"io"
	"time"
)

// Document kinds, from the local name of the root element
// (docs/sitemaps.md#formats).
const (
	modeURLSet = iota + 1 // <urlset>
	modeIndex             // <sitemapindex>
	modeRSS               // <rss> (2.0) or <rdf:RDF> (RSS 1.0)
	modeAtom              // <feed> (Atom 0.3 and 1.0)
)

// Fields whose text is kept.
const (
	fieldLoc = iota + 1
	fieldLastMod
	fieldChangeFreq
	fieldPriority
	fieldNewsName
	fieldNewsLanguage
	fieldNewsDate
	fieldNewsTitle
	fieldLink      // RSS <link>
	fieldGuid      // RSS <guid>
	fieldDate      // RSS <pubDate>, <dc:date>; Atom <updated>, <modified>
	fieldOtherDate // Atom <published>, <issued>, <created>
)

// xmlState is the state of the XML tokenizer and of the entry being built.
type xmlState struct {
	// Tokenizer.
	tag       []byte // the current tag between "<" or "</" and ">"; valid until the next read
	own       []byte // the copy of a tag that spans reads
	name      []byte // its qualified name (in tag)
	attrs     []byte // its attributes (in tag)
	selfClose bool
	seg       []byte // raw text awaiting entity decoding
	segOver   bool
	sink      int
	val       []byte // decoded text of the current field
	valOver   bool
	bare      []byte // decoded direct text of the current <sitemap>
	bareOver  bool
	scratch   []byte

	// Open elements: the qualified name of element i (depth i+1) is
	// names[ends[i-1]:ends[i]].
	names []byte
	ends  []int

	mode     int
	rootDone bool
	entry    int // depth of the open entry element; 0 if none
	field    int // field being read; 0 if none
	fieldAt  int // its depth
	news     int // depth of the open <news:news>; 0 if none
	out      []Entry

	cur        Entry
	hasLoc     bool
	link, guid string    // RSS
	href       string    // Atom: the chosen <link href>
	hrefPlain  bool      // it has no rel, or rel="alternate"
	otherDate  time.Time // Atom <published>/<issued>, used without <updated>
	latin1     bool      // the XML declaration names ISO-8859-1 or windows-1252
}

// nextElement returns the next entry of an XML document.
func (r *Reader) nextElement() (Entry, bool, error) {
	s := &r.xml
	for {
		if len(s.out) > 0 {
			e := s.out[0]
			s.out = append(s.out[:0], s.out[1:]...)
			return e, true, nil
		}
		if s.rootDone {
			// Whatever follows the root (comments, junk, a second
			// document) is not read (docs/sitemaps.md, case 55).
			if r.damage != nil {
				return Entry{}, false, r.damage
			}
			return Entry{}, false, io.EOF
		}
		tok, err := r.token()
		if err != nil {
			if s.mode == 0 && err == io.EOF {
				return Entry{}, false, notSitemap("no root element")
			}
			// A truncated file: the open entry counts if its <loc> was
			// closed (docs/sitemaps.md, cases 48, 70).
			s.field = 0
			if s.entry != 0 {
				s.bareOver = true // the bare text may be cut
				r.closeEntry()
			}
			// The error comes after the queued entry.
			r.n += len(s.out)
			err = r.fail(err)
			r.n -= len(s.out)
			if len(s.out) > 0 {
				e := s.out[0]
				s.out = s.out[:0]
				return e, true, err
			}
			return Entry{}, false, err
		}
		if tok == tokEnd {
			r.endElement()
			continue
		}
		if err := r.startElement(); err != nil {
			return Entry{}, false, err
		}
	}
}

// startElement handles the start tag in s.name.
func (r *Reader) startElement() error {
	s := &r.xml
	name, local := s.name, localName(s.name)
	if len(s.ends) >= maxDepth {
		return &SyntaxError{Entry: r.n, Offset: r.off, Err: fmt.Errorf("elements nested deeper than %d", maxDepth)}
	}
	depth := s.push(name)
	if depth == 1 {
		switch string(local) {
		case "urlset":
			s.mode = modeURLSet
		case "sitemapindex":
			s.mode = modeIndex
		case "rss", "RDF":
			s.mode = modeRSS
		case "feed":
			s.mode = modeAtom
		default:
			return notSitemap(fmt.Sprintf("root element <%s>", name))
		}
		r.endIfEmpty(depth)
		return nil
	}
	if s.field != 0 {
		// An element inside a field's text, as in <loc><url>…</url></loc>
		// (docs/sitemaps.md, case 46), is ignored; its text is kept. A
		// sibling field closes a field whose end tag is missing.
		if !(s.mode == modeURLSet || s.mode == modeIndex) || depth != s.fieldAt+1 || !isSitemapField(local) {
			r.endIfEmpty(depth)
			return nil
		}
		r.popTo(s.fieldAt - 1)
		depth = s.push(name)
	}
	if string(local) == entryName(s.mode) {
		if s.entry != 0 {
			// The previous entry was not closed (crawler-commons
			// auto-closes it too).
			r.popTo(s.entry - 1)
			depth = s.push(name)
		}
		s.entry = depth
		if s.mode == modeIndex {
			s.sink = sinkBare
		}
		r.endIfEmpty(depth)
		return nil
	}
	switch {
	case s.entry == 0:
	case s.news != 0 && depth > s.news:
		r.newsChild(local, depth)
	case depth != s.entry+1:
	case s.mode == modeURLSet || s.mode == modeIndex:
		r.sitemapChild(local, depth)
	default:
		r.feedChild(local, depth)
	}
	r.endIfEmpty(depth)
	return nil
}

// sitemapChild handles a child of <url> or <sitemap> (sitemaps.org XML tag
// definitions; Google's extensions, docs/sitemaps.md#sources). Children are
// matched in any order (the schema's sequence is not relied on;
// docs/sitemaps.md#leniency); the extensions' own <loc> elements are one
// level deeper and so never taken for the page's (case 43).
func (r *Reader) sitemapChild(local []byte, depth int) {
	s := &r.xml
	switch string(local) {
	case "loc":
		if s.hasLoc {
			// A second <loc>: the end tag of the entry is missing
			// (docs/sitemaps.md, case 69). Its other fields stay with the first.
			r.emit()
		}
		s.startField(fieldLoc, depth)
	case "lastmod":
		s.startField(fieldLastMod, depth)
	case "changefreq":
		s.startField(fieldChangeFreq, depth)
	case "priority":
		s.startField(fieldPriority, depth)
	}
	if s.mode != modeURLSet {
		return
	}
	switch string(local) {
	case "image":
		s.cur.Images++
	case "video":
		s.cur.Videos++
	case "news":
		s.news = depth
		if s.cur.News == nil {
			s.cur.News = new(News)
		}
	case "link":
		rel, _ := attr(s.scratch[:0], s.attrs, "rel")
		if !bytes.EqualFold(bytes.TrimSpace(rel), []byte("alternate")) || len(s.cur.Alternates) >= maxAlternates {
			return
		}
		href, _ := attr(s.scratch[:0], s.attrs, "href")
		s.scratch = href[:0]
		loc, ok := locString(href, s.latin1)
		if !ok {
			return // docs/sitemaps.md, case 44: a link without href
		}
		lang, _ := attr(s.scratch[:0], s.attrs, "hreflang")
		s.cur.Alternates = append(s.cur.Alternates, Alternate{Hreflang: string(bytes.TrimSpace(lang)), Href: loc})
	}
}

// newsChild handles an element inside <news:news> (Google News sitemaps).
func (r *Reader) newsChild(local []byte, depth int) {
	s := &r.xml
	switch string(local) {
	case "name":
		s.startField(fieldNewsName, depth)
	case "language":
		s.startField(fieldNewsLanguage, depth)
	case "publication_date":
		s.startField(fieldNewsDate, depth)
	case "title":
		s.startField(fieldNewsTitle, depth)
	}
}

func isSitemapField(local []byte) bool {
	switch string(local) {
	case "loc", "lastmod", "changefreq", "priority":
		return true
	}
	return false
}

func entryName(mode int) string {
	switch mode {
	case modeURLSet:
		return "url"
	case modeIndex:
		return "sitemap"
	case modeRSS:
		return "item"
	}
	return "entry"
}

func (s *xmlState) startField(f, depth int) {
	s.field, s.fieldAt = f, depth
	s.sink = sinkVal
	s.val = s.val[:0]
	s.valOver = false
}

// endElement handles the end tag in s.name: it closes the innermost open
// element of that name and every element inside it. An end tag that matches
// no open element is ignored and counts as damage (docs/sitemaps.md,
// case 47).
func (r *Reader) endElement() {
	s := &r.xml
	for i := len(s.ends) - 1; i >= 0; i-- {
		start := 0
		if i > 0 {
			start = s.ends[i-1]
		}
		if bytes.Equal(s.names[start:s.ends[i]], s.name[:min(len(s.name), maxName)]) {
			r.popTo(i)
			return
		}
	}
	r.damaged(fmt.Errorf("end tag </%s> matches no open element", s.name))
}

// endIfEmpty closes a self-closing element at depth.
func (r *Reader) endIfEmpty(depth int) {
	if r.xml.selfClose {
		r.popTo(depth - 1)
	}
}

// push opens an element and returns its depth. Of a long name, the first
// maxName bytes are kept, and matched, so that the stack stays small.
func (s *xmlState) push(name []byte) int {
	s.names = append(s.names, name[:min(len(name), maxName)]...)
	s.ends = append(s.ends, len(s.names))
	return len(s.ends)
}

// popTo closes the open elements deeper than depth, finishing the field,
// the news element and the entry they belong to.
func (r *Reader) popTo(depth int) {
	s := &r.xml
	if depth >= len(s.ends) {
		return
	}
	s.ends = s.ends[:depth]
	s.names = s.names[:0]
	if depth > 0 {
		s.names = s.names[:s.ends[depth-1]]
	}
	if s.field != 0 && s.fieldAt > depth {
		r.finishField()
	}
	if s.news > depth {
		s.news = 0
	}
	if s.entry > depth {
		r.closeEntry()
	}
	if depth == 0 {
		s.rootDone = true
	}
}

// finishField stores the text of the field that ends.
func (r *Reader) finishField() {
	s := &r.xml
	r.flushText()
	f := s.field
	s.field = 0
	s.sink = sinkNone
	if s.entry != 0 && s.mode == modeIndex {
		s.sink = sinkBare
	}
	if s.valOver {
		return // docs/sitemaps.md, case 60: a value too long to keep is dropped
	}
	v := s.val
	switch f {
	case fieldLoc:
		if loc, ok := locString(v, s.latin1); ok {
			s.cur.Loc, s.hasLoc = loc, true
		}
	case fieldLastMod, fieldDate:
		if t, ok := parseTime(string(v)); ok {
			s.cur.LastMod = t
		}
	case fieldOtherDate:
		if t, ok := parseTime(string(v)); ok {
			s.otherDate = t
		}
	case fieldChangeFreq:
		s.cur.ChangeFreq = changeFreq(string(v))
	case fieldPriority:
		s.cur.Priority = priority(string(v))
	case fieldLink:
		if loc, ok := locString(v, s.latin1); ok && s.link == "" {
			s.link = loc // the first non-empty one: <atom:link/> may follow
		}
	case fieldGuid:
		if loc, ok := locString(v, s.latin1); ok && s.guid == "" {
			s.guid = loc
		}
	}
	if n := s.cur.News; n != nil {
		switch f {
		case fieldNewsName:
			n.Name = cleanText(v, s.latin1)
		case fieldNewsLanguage:
			n.Language = cleanText(v, s.latin1)
		case fieldNewsDate:
			n.PublicationDate, _ = parseTime(string(v))
		case fieldNewsTitle:
			n.Title = cleanText(v, s.latin1)
		}
	}
}

// closeEntry ends the open entry and queues it if it has a location.
func (r *Reader) closeEntry() {
	r.emit()
	s := &r.xml
	s.entry, s.news = 0, 0
	s.sink = sinkNone
}

// emit queues the entry being built, if it has a location, and starts a
// new one.
func (r *Reader) emit() {
	s := &r.xml
	if s.field != 0 {
		r.finishField()
	} else {
		r.flushText()
	}
	e := s.cur
	switch s.mode {
	case modeIndex:
		e.Index = true
		if !s.hasLoc && !s.bareOver {
			// docs/sitemaps.md, case 68: <sitemap> with the URL as bare text.
			e.Loc, s.hasLoc = locString(s.bare, s.latin1)
		}
	case modeRSS:
		// docs/sitemaps.md, case 85: <link>, or else a <guid> holding a URL.
		e.Loc, s.hasLoc = s.link, s.link != ""
		if !s.hasLoc && isHTTP([]byte(s.guid)) {
			e.Loc, s.hasLoc = s.guid, true
		}
	case modeAtom:
		e.Loc, s.hasLoc = s.href, s.href != ""
		if e.LastMod.IsZero() {
			e.LastMod = s.otherDate
		}
	}
	if s.hasLoc {
		s.out = append(s.out, e)
	} else {
		r.skipped++
	}
	s.cur = Entry{Priority: -1}
	s.hasLoc = false
	s.link, s.guid, s.href, s.hrefPlain = "", "", "", false
	s.otherDate = time.Time{}
	s.bare, s.bareOver = s.bare[:0], false
}
