package sitemap

import (
	"bufio"
	"errors"
	"fmt"
	"io"
)

// A Reader reads the entries of one sitemap file from a stream, in any of
// the formats of sitemaps.org (docs/sitemaps.md#formats): an XML urlset or sitemap
// index, RSS 2.0, RSS 1.0 (RDF), Atom 0.3 or 1.0, or plain text with one URL
// a line, each optionally gzip-compressed. The format is found from the
// content, never from a URL or a Content-Type (docs/sitemaps.md#formats, cases 22-34).
//
// The Reader streams: it holds a fixed-size buffer and one entry at a time,
// never the file, so its memory does not grow with the file's size.
//
// The limit fields may be set after NewReader and before the first call to
// Next. A Reader is not safe for concurrent use.
type Reader struct {
	// MaxEntries is the number of entries Next returns at most; past it,
	// Next returns an error matching ErrTooLarge (errors.Is). Zero means
	// DefaultMaxEntries (50,000, sitemaps.org).
	MaxEntries int

	// MaxSize is the number of bytes of the file, after decompression,
	// that are read at most; a file with more makes Next return an error
	// matching ErrTooLarge. Zero means DefaultMaxSize (50 MiB, sitemaps.org).
	MaxSize int64

	// MaxCompressedSize is the number of bytes read at most from the
	// underlying reader, compressed or not; past it, Next returns an error
	// matching ErrTooLarge. Zero means DefaultMaxCompressedSize (50 MiB).
	MaxCompressedSize int64

	src     io.Reader
	br      *bufio.Reader
	dec     *limitReader // the decompressed file, under MaxSize (see Size)
	off     int64        // bytes of the decompressed file consumed
	n       int          // entries returned
	started bool
	text    bool   // plain-text sitemap
	err     error  // sticky: returned by every later call to Next
	damage  error  // first structural damage, returned instead of io.EOF
	line    []byte // text: the current line
	sawURL  bool   // text: a URL line was seen
	skipped int    // entries left out for want of a usable URL (Skipped)

	xml xmlState
}

// NewReader returns a Reader that reads one sitemap file from r.
func NewReader(r io.Reader) *Reader {
	rd := &Reader{src: r}
	rd.xml.cur.Priority = -1
	return rd
}

// Skipped returns the number of entries read so far that Next left out
// for want of a usable URL: an XML entry (<url>, <sitemap>, an RSS item,
// an Atom entry) whose <loc> (or link) is missing, empty or longer than
// 2,048 characters (docs/sitemaps.md, case 97), and a line of a text
// sitemap that is not blank and no such http or https URL.
func (r *Reader) Skipped() int {
	return r.skipped
}

// index reports whether the file is a sitemap index, as far as it was
// read.
func (r *Reader) index() bool {
	return !r.text && r.xml.mode == modeIndex
}

// Next returns the next entry. At the clean end of a file it returns
// io.EOF. Otherwise the error is sticky and is one of:
//
//   - an error matching ErrTooLarge (errors.Is): a limit was reached
//     (docs/sitemaps.md, cases 30, 59, 84, 103);
//   - an error matching ErrNotSitemap: the body is empty or no sitemap
//     (case 29, case 32, case 33, case 56); no entries were returned;
//   - a *SyntaxError: the file is truncated or broken (case 27, case 28, case 47, case 48,
//     case 50, case 70). Every complete entry before the break was returned; for an
//     XML entry that means its <loc> was closed.
//
// A malformed value (a raw "&", an undefined entity, invalid UTF-8, an
// unparseable date or priority) costs at most that value (case 36, case 49, case 51,
// case 63, case 64).
func (r *Reader) Next() (Entry, error) {
	if r.err != nil {
		return Entry{}, r.err
	}
	if !r.started {
		r.started = true
		if err := r.start(); err != nil {
			r.err = err
			return Entry{}, err
		}
	}
	var (
		e   Entry
		ok  bool
		err error
	)
	if r.text {
		e, ok, err = r.nextLine()
	} else {
		e, ok, err = r.nextElement()
	}
	if err != nil {
		r.err = err
	}
	if !ok {
		return Entry{}, err
	}
	max := r.MaxEntries
	if max <= 0 {
		max = DefaultMaxEntries
	}
	if r.n >= max {
		r.err = tooLarge(fmt.Sprintf("more than %d entries", r.n))
		return Entry{}, r.err
	}
	r.n++
	return e, nil
}

// start unwraps gzip layers, skips byte order marks and white space and
// chooses the format from the first byte (docs/sitemaps.md#formats,
// cases 22-34).
func (r *Reader) start() error {
	maxSize := r.MaxSize
	if maxSize <= 0 {
		maxSize = DefaultMaxSize
	}
	maxComp := r.MaxCompressedSize
	if maxComp <= 0 {
		maxComp = DefaultMaxCompressedSize
	}
	sizeErr := tooLarge(fmt.Sprintf("more than %d bytes after decompression", maxSize))
	var src io.Reader = &limitReader{r: r.src, n: maxComp,
		err: tooLarge(fmt.Sprintf("more than %d bytes read", maxComp))}
	src, err := gunzip(src, maxSize, sizeErr)
	if err != nil {
		return r.fail(err)
	}
	r.dec = &limitReader{r: src, n: maxSize, max: maxSize, err: sizeErr}
	r.br = bufio.NewReaderSize(r.dec, bufSize)

	for {
		buf, err := r.buffered(3)
		i := 0
		for i < len(buf) {
			if len(buf)-i >= 3 && buf[i] == 0xEF && buf[i+1] == 0xBB && buf[i+2] == 0xBF {
				i += 3
				continue
			}
			if !isSpace(buf[i]) {
				break
			}
			i++
		}
		r.discard(i)
		if i < len(buf) {
			if buf[i] == 0xEF && len(buf)-i < 3 && err == nil {
				continue // perhaps a BOM split across reads
			}
			break
		}
		if err == io.EOF {
			return notSitemap("empty body")
		}
		if err != nil {
			return r.fail(err)
		}
	}
	b, _ := r.br.Peek(1)
	if b[0] == '<' {
		return nil
	}
	r.text = true
	return r.sniffText()
}

// Size returns the number of bytes of the file, after decompression, read
// so far: at the end of the file (io.EOF) its size; at a limit, MaxSize.
// The Reader reads ahead a few kilobytes, so before the end Size may be
// somewhat past the entries returned.
func (r *Reader) Size() int64 {
	if r.dec == nil {
		return 0
	}
	return r.dec.max - r.dec.n
}

// buffered returns the buffered bytes, reading when fewer than min are
// buffered. err is the read error when fewer than min bytes are available.
func (r *Reader) buffered(min int) ([]byte, error) {
	n := r.br.Buffered()
	if n >= min {
		b, _ := r.br.Peek(n)
		return b, nil
	}
	return r.br.Peek(min)
}

func (r *Reader) discard(n int) {
	r.br.Discard(n)
	r.off += int64(n)
}

// fail turns a read error into the error Next returns: limit errors as
// they are, everything else (io.EOF included, as io.ErrUnexpectedEOF) as a
// *SyntaxError saying where the file ended.
func (r *Reader) fail(err error) error {
	if errors.Is(err, ErrTooLarge) || errors.Is(err, ErrNotSitemap) {
		return err
	}
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return &SyntaxError{Entry: r.n, Offset: r.off, Err: err}
}

// isSpace reports whether c is XML white space or a form feed or vertical
// tab (docs/sitemaps.md, case 34).
func isSpace(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\r', '\v', '\f':
		return true
	}
	return false
}
