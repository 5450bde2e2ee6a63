package sitemap

import (
	"bytes"
	"fmt"
	"io"
	"unicode/utf8"
)

// sniffText rejects binary data before it is read as a text sitemap: a text
// sitemap is UTF-8 text (sitemaps.org "Text file"), so a control character
// other than white space in its first 512 bytes means it is none
// (sitemap.md #32).
func (r *Reader) sniffText() error {
	b, err := r.br.Peek(512)
	if err != nil && err != io.EOF && len(b) == 0 {
		return r.fail(err)
	}
	for _, c := range b {
		if c < 0x20 && !isSpace(c) || c == 0x7f {
			return fmt.Errorf("sitemap: binary data: %w", ErrNotSitemap)
		}
	}
	return nil
}

// nextLine returns the next URL of a text sitemap: one URL a line
// (sitemaps.org "Text file"). Lines are trimmed; blank lines and lines that
// are no http or https URL are skipped (sitemap.md #81, #82); CRLF line
// ends and a BOM are accepted (#81). A file without a single URL line is no
// sitemap (#29). A line cut by a read error is not returned.
func (r *Reader) nextLine() (Entry, bool, error) {
	for {
		line, err := r.readLine()
		if err == nil || err == io.EOF {
			line = bytes.TrimPrefix(bytes.TrimSpace(line), []byte("\uFEFF"))
			if isHTTP(line) {
				if loc, ok := locString(line); ok {
					r.xml.sawURL = true
					return Entry{Loc: loc, Priority: -1}, true, nil
				}
			}
		}
		if err == io.EOF {
			if !r.xml.sawURL {
				return Entry{}, false, fmt.Errorf("sitemap: text without URL lines: %w", ErrNotSitemap)
			}
			return Entry{}, false, io.EOF
		}
		if err != nil {
			return Entry{}, false, r.fail(err)
		}
	}
}

// readLine returns the next line without its "\n"; a line longer than
// maxValue is returned empty. The last line needs no "\n". err is io.EOF
// when nothing is left, or the read error that cut a line.
func (r *Reader) readLine() ([]byte, error) {
	s := &r.xml
	s.val = s.val[:0]
	over := false
	for {
		buf, err := r.buffered(1)
		if len(buf) == 0 {
			if err == io.EOF && (len(s.val) > 0 || over) {
				err = nil // the last line, without "\n"; EOF comes next time
				if over {
					s.val = s.val[:0]
				}
				return s.val, err
			}
			return nil, err
		}
		i := bytes.IndexByte(buf, '\n')
		chunk := buf
		if i >= 0 {
			chunk = buf[:i]
		}
		if !over && len(s.val)+len(chunk) <= maxValue {
			s.val = append(s.val, chunk...)
		} else {
			over = true
		}
		if i >= 0 {
			r.discard(i + 1)
			if over {
				s.val = s.val[:0]
			}
			return s.val, nil
		}
		r.discard(len(buf))
	}
}

// isHTTP reports whether b starts with "http://" or "https://", in any case.
func isHTTP(b []byte) bool {
	return hasPrefixFold(b, "http://") || hasPrefixFold(b, "https://")
}

func hasPrefixFold(b []byte, prefix string) bool {
	return len(b) >= len(prefix) && bytes.EqualFold(b[:len(prefix)], []byte(prefix))
}

// locString returns b as a Loc: trimmed of Unicode white space (sitemap.md
// #39), invalid UTF-8 replaced by U+FFFD (#36), at most maxLoc characters
// (#97). ok is false when nothing is left or the value is too long.
func locString(b []byte) (string, bool) {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || len(b) > maxLoc && utf8.RuneCount(b) > maxLoc {
		return "", false
	}
	if !utf8.Valid(b) {
		return string(bytes.ToValidUTF8(b, []byte("\uFFFD"))), true
	}
	return string(b), true
}
