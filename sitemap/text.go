package sitemap

import (
	"bytes"
	"io"
	"strings"
	"unicode/utf8"
)

// sniffText rejects binary data before it is read as a text sitemap: a text
// sitemap is UTF-8 text (sitemaps.org "Text file"), so a control character
// other than white space in its first 512 bytes means it is none
// (docs/sitemaps.md, case 32).
func (r *Reader) sniffText() error {
	b, err := r.br.Peek(512)
	if err != nil && err != io.EOF && len(b) == 0 {
		return r.fail(err)
	}
	for _, c := range b {
		if c < 0x20 && !isSpace(c) || c == 0x7f {
			return notSitemap("binary data")
		}
	}
	return nil
}

// nextLine returns the next URL of a text sitemap: one URL a line
// (sitemaps.org "Text file"). Lines are trimmed; blank lines and lines that
// are no http or https URL are skipped (docs/sitemaps.md, cases 81, 82);
// CRLF line ends and a BOM are accepted (case 81). A file without a single URL
// line is no sitemap (case 29). A line cut by a read error is not returned.
func (r *Reader) nextLine() (Entry, bool, error) {
	for {
		line, over, err := r.readLine()
		if err == nil || err == io.EOF {
			line = bytes.TrimPrefix(bytes.TrimSpace(line), []byte("\uFEFF"))
			if isHTTP(line) {
				if loc, ok := locString(line, false); ok {
					r.sawURL = true
					return Entry{Loc: loc, Priority: -1}, true, nil
				}
			}
			if len(line) > 0 || over {
				r.skipped++
			}
		}
		if err == io.EOF {
			if !r.sawURL {
				return Entry{}, false, notSitemap("text without URL lines")
			}
			return Entry{}, false, io.EOF
		}
		if err != nil {
			return Entry{}, false, r.fail(err)
		}
	}
}

// readLine returns the next line without its "\n"; a line longer than
// maxValue is returned empty, with over set. The last line needs no "\n".
// err is io.EOF when nothing is left, or the read error that cut a line.
func (r *Reader) readLine() (line []byte, over bool, err error) {
	r.line = r.line[:0]
	for {
		buf, err := r.buffered(1)
		if len(buf) == 0 {
			if err == io.EOF && (len(r.line) > 0 || over) {
				err = nil // the last line, without "\n"; EOF comes next time
				if over {
					r.line = r.line[:0]
				}
				return r.line, over, err
			}
			return nil, false, err
		}
		i := bytes.IndexByte(buf, '\n')
		chunk := buf
		if i >= 0 {
			chunk = buf[:i]
		}
		if !over && len(r.line)+len(chunk) <= maxValue {
			r.line = append(r.line, chunk...)
		} else {
			over = true
		}
		if i >= 0 {
			r.discard(i + 1)
			if over {
				r.line = r.line[:0]
			}
			return r.line, over, nil
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

// locString returns b as a Loc: trimmed of Unicode white space
// (docs/sitemaps.md, case 39), with invalid UTF-8 read as ISO-8859-1 if
// latin1 is set (case 35) and replaced by U+FFFD otherwise (case 36), at most maxLoc
// characters (case 97). ok is false when nothing is left or the value is too
// long.
func locString(b []byte, latin1 bool) (string, bool) {
	s := cleanText(b, latin1)
	if s == "" || len(s) > maxLoc && utf8.RuneCountInString(s) > maxLoc {
		return "", false
	}
	return s, true
}

// cleanText returns b trimmed of Unicode white space, with invalid UTF-8
// read as ISO-8859-1 if latin1 is set, and replaced by U+FFFD otherwise.
func cleanText(b []byte, latin1 bool) string {
	b = bytes.TrimSpace(b)
	if utf8.Valid(b) {
		return string(b)
	}
	if !latin1 {
		return string(bytes.ToValidUTF8(b, []byte("\uFFFD")))
	}
	out := make([]rune, len(b))
	for i, c := range b {
		out[i] = rune(c)
	}
	return strings.TrimSpace(string(out))
}
