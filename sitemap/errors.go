package sitemap

import (
	"errors"
	"fmt"
)

// ErrTooLarge is wrapped by the error [Reader.Next] returns when a file
// passes one of the Reader's limits: more entries than MaxEntries, more bytes
// after decompression than MaxSize, or more bytes read than
// MaxCompressedSize. The entries before the limit have been returned.
var ErrTooLarge = errors.New("sitemap: limit reached")

// ErrNotSitemap is wrapped by the error [Reader.Next] returns when the body is
// no sitemap: an empty body, an HTML error page, JSON, binary data, an XML
// document with another root element, or text without a single URL line
// (sitemap.md #29, #32, #33, #56). No entries are returned before it.
var ErrNotSitemap = errors.New("sitemap: not a sitemap")

// A SyntaxError reports where a truncated or broken file ended, or where the
// first structural damage of a file was found (a broken tag, an end tag
// that matches no open element). It wraps the cause: io.ErrUnexpectedEOF for
// a truncated file, a compress/gzip error for a broken gzip stream, or an
// error describing the damage.
type SyntaxError struct {
	Entry  int   // entries returned before the error
	Offset int64 // byte offset in the decompressed file
	Err    error
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("sitemap: broken file after %d entries at byte %d: %v", e.Entry, e.Offset, e.Err)
}

func (e *SyntaxError) Unwrap() error { return e.Err }
