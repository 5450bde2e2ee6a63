package sitemap

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"
)

// This file is a small XML tokenizer over the Reader's bufio.Reader. It does
// not use encoding/xml: it recovers from what that package rejects (a raw
// "&", undefined entities, invalid UTF-8; docs/sitemaps.md#leniency), it
// never interprets a DOCTYPE (no entity expansion, no external access: case 52,
// case 53), and it copies only the text of the elements the Reader keeps.

// Tokens returned by token.
const (
	tokStart = iota + 1
	tokEnd
)

// Where text goes.
const (
	sinkNone = iota
	sinkVal  // the text of the field being read
	sinkBare // the direct text of a <sitemap> without <loc> (docs/sitemaps.md, case 68)
)

// token reads up to and including the next start or end tag and leaves its
// name, attributes and self-closing flag in r.xml. Text before it goes to
// the current sink, entity-decoded; CDATA sections go there as they are
// (docs/sitemaps.md, case 38). Comments, processing instructions and
// declarations such as DOCTYPE are skipped (cases 52-55). err is io.EOF at the
// end of the input between tokens.
func (r *Reader) token() (int, error) {
	s := &r.xml
	for {
		if err := r.scanText(); err != nil {
			return 0, err
		}
		buf, err := r.buffered(2)
		if len(buf) < 2 {
			return 0, unexpected(err)
		}
		switch c := buf[1]; {
		case c == '/':
			r.flushText()
			r.discard(2)
			if err := r.readTag(); err != nil {
				return 0, err
			}
			return tokEnd, nil
		case c == '!':
			buf, _ = r.buffered(9)
			switch {
			case bytes.HasPrefix(buf, []byte("<!--")):
				r.discard(4)
				err = r.skipUntil("-->", false)
			case bytes.HasPrefix(buf, []byte("<![CDATA[")):
				r.flushText()
				r.discard(9)
				err = r.skipUntil("]]>", true)
			default:
				r.discard(2)
				err = r.skipDecl()
			}
			if err != nil {
				return 0, err
			}
		case c == '?':
			if s.mode == 0 {
				r.xmlDecl()
			}
			r.discard(2)
			if err := r.skipUntil("?>", false); err != nil {
				return 0, err
			}
		case !isNameStart(c):
			// A raw "<" in text, as in "a < b": kept as text.
			if s.sink != sinkNone {
				r.appendSeg([]byte{'<'})
			}
			r.discard(1)
		default:
			r.flushText()
			r.discard(1)
			if err := r.readTag(); err != nil {
				return 0, err
			}
			return tokStart, nil
		}
	}
}

// scanText consumes text up to the next "<", copying it to the sink.
func (r *Reader) scanText() error {
	for {
		buf, err := r.buffered(1)
		if len(buf) == 0 {
			return err
		}
		i := bytes.IndexByte(buf, '<')
		n := i
		if i < 0 {
			n = len(buf)
		}
		if r.xml.sink != sinkNone {
			r.appendSeg(buf[:n])
		}
		r.discard(n)
		if i >= 0 {
			return nil
		}
	}
}

// appendSeg adds raw text to the segment awaiting entity decoding.
func (r *Reader) appendSeg(b []byte) {
	s := &r.xml
	if len(s.seg)+len(b) > maxValue {
		s.segOver = true
		return
	}
	s.seg = append(s.seg, b...)
}

// flushText decodes the pending text segment into the sink. Decoding the
// whole segment at once joins entities split across reads (docs/sitemaps.md,
// case 38).
func (r *Reader) flushText() {
	s := &r.xml
	if len(s.seg) > 0 || s.segOver {
		s.appendSink(s.seg, true, s.segOver)
	}
	s.seg = s.seg[:0]
	s.segOver = false
}

// appendSink adds text to the sink, entity-decoded if decode is set; over
// marks text that was too long to keep.
func (s *xmlState) appendSink(b []byte, decode, over bool) {
	dst, dstOver := &s.val, &s.valOver
	switch s.sink {
	case sinkNone:
		return
	case sinkBare:
		dst, dstOver = &s.bare, &s.bareOver
	}
	if over || len(*dst)+len(b) > maxValue {
		*dstOver = true
		return
	}
	if decode {
		*dst = decodeEntities(*dst, b)
	} else {
		*dst = append(*dst, b...)
	}
}

// readTag reads a tag after its "<" or "</" up to and including its ">". A
// "<" inside a tag ends it there and counts as damage, so that one broken
// tag does not swallow the file (docs/sitemaps.md, case 50). A quote opens
// a value only after "=", for the same reason.
func (r *Reader) readTag() error {
	s := &r.xml
	s.own = s.own[:0]
	var quote byte
	for {
		buf, err := r.buffered(1)
		if len(buf) == 0 {
			return unexpected(err)
		}
		for i := 0; i < len(buf); i++ {
			c := buf[i]
			if quote != 0 {
				if j := bytes.IndexByte(buf[i:], quote); j >= 0 && bytes.IndexByte(buf[i:i+j], '<') < 0 {
					i += j
					quote = 0
					continue
				}
				if j := bytes.IndexByte(buf[i:], '<'); j >= 0 {
					return r.brokenTag(buf[:i+j])
				}
				break
			}
			switch c {
			case '>':
				if len(s.own) == 0 {
					// The whole tag is in the buffer: no copy. It
					// stays valid until the next read.
					s.tag = buf[:i]
				} else {
					s.appendTag(buf[:i])
				}
				r.discard(i + 1)
				s.parseTag()
				return nil
			case '<':
				return r.brokenTag(buf[:i])
			case '"', '\'':
				if s.afterEquals(buf[:i]) {
					quote = c
				}
			}
		}
		s.appendTag(buf)
		r.discard(len(buf))
	}
}

// afterEquals reports whether the last byte before a quote, white space
// aside, is "=": only then does the quote open a value. b is the part of
// the tag in the buffer; the part before it is in s.own.
func (s *xmlState) afterEquals(b []byte) bool {
	for _, part := range [2][]byte{b, s.own} {
		for i := len(part) - 1; i >= 0; i-- {
			if !isSpace(part[i]) {
				return part[i] == '='
			}
		}
	}
	return false
}

func (r *Reader) brokenTag(b []byte) error {
	r.xml.appendTag(b)
	r.discard(len(b))
	r.damaged(fmt.Errorf("tag <%s> not closed", r.xml.tagName()))
	r.xml.parseTag()
	return nil
}

// appendTag adds b to the copy of a tag that spans reads.
func (s *xmlState) appendTag(b []byte) {
	if n := maxTag - len(s.own); n < len(b) {
		b = b[:max(n, 0)]
	}
	s.own = append(s.own, b...)
	s.tag = s.own
}

func (s *xmlState) tagName() []byte {
	i := 0
	for i < len(s.tag) && !isSpace(s.tag[i]) && s.tag[i] != '/' {
		i++
	}
	return s.tag[:i]
}

// parseTag splits the tag into name and attributes.
func (s *xmlState) parseTag() {
	s.name = s.tagName()
	rest := bytes.TrimRight(s.tag[len(s.name):], " \t\r\n")
	s.selfClose = bytes.HasSuffix(rest, []byte("/"))
	s.attrs = bytes.TrimSuffix(rest, []byte("/"))
}

// xmlDecl looks at the XML declaration, if the buffer starts with one, for
// an encoding that means ISO-8859-1 bytes (docs/sitemaps.md, case 35);
// windows-1252 is read as ISO-8859-1 too. Other encodings are read as UTF-8.
func (r *Reader) xmlDecl() {
	buf, _ := r.buffered(256)
	if !bytes.HasPrefix(buf, []byte("<?xml")) || len(buf) < 6 || !isSpace(buf[5]) {
		return
	}
	if i := bytes.Index(buf, []byte("?>")); i >= 0 {
		buf = buf[:i]
	}
	enc, _ := attr(nil, buf[len("<?xml"):], "encoding")
	switch string(bytes.ToLower(bytes.TrimSpace(enc))) {
	case "iso-8859-1", "iso8859-1", "latin1", "latin-1", "windows-1252", "cp1252", "us-ascii":
		r.xml.latin1 = true
	}
}

// skipUntil consumes input up to and including delim; with keep, what it
// consumes before delim goes to the sink (a CDATA section).
func (r *Reader) skipUntil(delim string, keep bool) error {
	d := []byte(delim)
	for {
		buf, err := r.buffered(len(d))
		if i := bytes.Index(buf, d); i >= 0 {
			if keep {
				r.xml.appendSink(buf[:i], false, false)
			}
			r.discard(i + len(d))
			return nil
		}
		if err != nil {
			return unexpected(err)
		}
		n := len(buf) - (len(d) - 1)
		if keep {
			r.xml.appendSink(buf[:n], false, false)
		}
		r.discard(n)
	}
}

// skipDecl consumes a declaration after its "<!" (DOCTYPE, with an internal
// subset in brackets) up to and including its ">". Nothing in it is
// interpreted: entities are never defined, so never expanded
// (docs/sitemaps.md, cases 52, 53).
func (r *Reader) skipDecl() error {
	depth := 0
	for {
		buf, err := r.buffered(1)
		if len(buf) == 0 {
			return unexpected(err)
		}
		for i, c := range buf {
			switch c {
			case '[':
				depth++
			case ']':
				depth = max(depth-1, 0)
			case '>':
				if depth == 0 {
					r.discard(i + 1)
					return nil
				}
			}
		}
		r.discard(len(buf))
	}
}

// unexpected turns io.EOF inside a construct into io.ErrUnexpectedEOF.
func unexpected(err error) error {
	if err == io.EOF || err == nil {
		return io.ErrUnexpectedEOF
	}
	return err
}

// damaged records the first structural damage; it is returned at the end
// instead of io.EOF.
func (r *Reader) damaged(err error) {
	if r.damage == nil {
		r.damage = &SyntaxError{Entry: r.n, Offset: r.off, Err: err}
	}
}

func isNameStart(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '_' || c == ':' || c >= 0x80
}

// localName returns name without its namespace prefix: elements are matched
// by local name, so any prefix and any or no namespace work
// (docs/sitemaps.md, cases 40-42).
func localName(name []byte) []byte {
	if i := bytes.LastIndexByte(name, ':'); i >= 0 {
		return name[i+1:]
	}
	return name
}

// decodeEntities appends b to dst with the five predefined entities and
// character references decoded. Anything else after "&" (a raw "&", an
// undefined entity such as &nbsp;) is kept as it is (docs/sitemaps.md,
// cases 49, 51).
func decodeEntities(dst, b []byte) []byte {
	for len(b) > 0 {
		i := bytes.IndexByte(b, '&')
		if i < 0 {
			return append(dst, b...)
		}
		dst = append(dst, b[:i]...)
		b = b[i:]
		if j := bytes.IndexByte(b[:min(len(b), 12)], ';'); j > 1 {
			if c, ok := entity(b[1:j]); ok {
				dst = utf8.AppendRune(dst, c)
				b = b[j+1:]
				continue
			}
		}
		dst = append(dst, '&')
		b = b[1:]
	}
	return dst
}

// entity returns the character the entity or character reference name
// stands for.
func entity(name []byte) (rune, bool) {
	switch string(name) {
	case "amp":
		return '&', true
	case "lt":
		return '<', true
	case "gt":
		return '>', true
	case "quot":
		return '"', true
	case "apos":
		return '\'', true
	}
	if name[0] != '#' || len(name) < 2 {
		return 0, false
	}
	base, digits := 10, name[1:]
	if digits[0] == 'x' || digits[0] == 'X' {
		base, digits = 16, digits[1:]
	}
	n, err := strconv.ParseUint(string(digits), base, 32)
	if err != nil || n == 0 || !utf8.ValidRune(rune(n)) {
		return 0, false
	}
	return rune(n), true
}

// trimSpace drops the leading bytes of b that isSpace accepts. attr must
// trim exactly what its name scan stops at, or a stray \v or \f would stop
// both and attr would loop for ever.
func trimSpace(b []byte) []byte {
	for len(b) > 0 && isSpace(b[0]) {
		b = b[1:]
	}
	return b
}

// attr returns the value of the attribute key (matched by local name) in
// the attributes of a tag, entity-decoded and appended to dst.
func attr(dst, attrs []byte, key string) ([]byte, bool) {
	b := attrs
	for len(b) > 0 {
		b = trimSpace(b)
		i := 0
		for i < len(b) && b[i] != '=' && !isSpace(b[i]) {
			i++
		}
		name := b[:i]
		b = trimSpace(b[i:])
		if len(b) == 0 || b[0] != '=' {
			continue // an attribute without value
		}
		b = trimSpace(b[1:])
		var v []byte
		if len(b) > 0 && (b[0] == '"' || b[0] == '\'') {
			if j := bytes.IndexByte(b[1:], b[0]); j >= 0 {
				v, b = b[1:1+j], b[2+j:]
			} else {
				v, b = b[1:], nil
			}
		} else {
			j := 0
			for j < len(b) && !isSpace(b[j]) {
				j++
			}
			v, b = b[:j], b[j:]
		}
		if string(localName(name)) == key {
			return decodeEntities(dst, v), true
		}
	}
	return dst, false
}
