package sitemap

import "bytes"

// feedChild handles a child of an RSS <item> or an Atom <entry>
// (sitemaps.org "Syndication feed"; docs/sitemaps.md, cases 85-89). Feed-level
// links are never entries: only children of items and entries are read.
func (r *Reader) feedChild(local []byte, depth int) {
	s := &r.xml
	if s.mode == modeRSS {
		switch string(local) {
		case "link":
			s.startField(fieldLink, depth)
		case "guid":
			s.startField(fieldGuid, depth)
		case "pubDate", "date": // RSS 2.0; RSS 1.0 <dc:date>
			s.startField(fieldDate, depth)
		}
		return
	}
	switch string(local) {
	case "link":
		r.atomLink()
	case "updated", "modified": // Atom 1.0; Atom 0.3
		s.startField(fieldDate, depth)
	case "published", "issued", "created":
		s.startField(fieldOtherDate, depth)
	}
}

// atomLink keeps the entry's first <link href>, replaced by a later one
// without rel (or with rel="alternate") when the kept one has another rel
// such as "edit" (docs/sitemaps.md, case 88; crawler-commons does the same).
func (r *Reader) atomLink() {
	s := &r.xml
	href, _ := attr(s.scratch[:0], s.attrs, "href")
	s.scratch = href[:0]
	loc, ok := locString(href, s.latin1)
	if !ok {
		return
	}
	rel, hasRel := attr(s.scratch[:0], s.attrs, "rel")
	plain := !hasRel || bytes.EqualFold(bytes.TrimSpace(rel), []byte("alternate"))
	if s.href == "" || plain && !s.hrefPlain {
		s.href, s.hrefPlain = loc, plain
	}
}
