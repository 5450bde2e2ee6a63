package sitemap

import (
	"errors"
	"fmt"
)

// ErrTooLarge is matched (errors.Is) by the error [Reader.Next] returns
// when a file passes one of the Reader's limits: more entries than
// MaxEntries, more bytes after decompression than MaxSize, or more bytes
// read than MaxCompressedSize. The entries before the limit have been
// returned.
var ErrTooLarge = errors.New("sitemap: limit reached")

// ErrNotSitemap is matched (errors.Is) by the error [Reader.Next] returns
// when the body is no sitemap: an empty body, an HTML error page, JSON,
// binary data, an XML document with another root element, or text without
// a single URL line (docs/sitemaps.md, cases 29, 32, 33, 56). No entries are
// returned before it.
var ErrNotSitemap = errors.New("sitemap: not a sitemap")

// tooLarge is an error that says which limit was reached; it matches
// ErrTooLarge.
type tooLarge string

func (e tooLarge) Error() string        { return "sitemap: limit reached: " + string(e) }
func (e tooLarge) Is(target error) bool { return target == ErrTooLarge }

// notSitemap is an error that says why a body is no sitemap; it matches
// ErrNotSitemap.
type notSitemap string

func (e notSitemap) Error() string        { return "sitemap: not a sitemap: " + string(e) }
func (e notSitemap) Is(target error) bool { return target == ErrNotSitemap }

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

// Error implements error.
func (e *SyntaxError) Error() string {
	return fmt.Sprintf("sitemap: broken file after %d entries at byte %d: %v", e.Entry, e.Offset, e.Err)
}

// Unwrap returns the underlying error, for errors.Is and errors.As.
func (e *SyntaxError) Unwrap() error { return e.Err }
