package sitemap

import (
	"io"
)

// A spool is the body of a sitemap's response as a walk reads it. While
// the walk's fn keeps up, the file is read from the network as it is
// parsed. When fn falls behind (a batch of pages would have to wait, see
// walk.stream), take reads the rest of the body into memory at once and
// closes the response, and the file is parsed from there at fn's pace.
//
// So a fetch never keeps its response open while it waits for fn: the
// server's answer is not held up behind a slow crawl, its time counts
// against Options.Timeout only while bytes are read, and a paced
// client's place for the host (a Guard's one request in flight) is given
// back when the body ends — fn's own requests to the same host may need
// that place, and would otherwise wait for the walk while the walk waits
// for them. The memory it costs is the rest of the file as it came over
// the network, at most MaxSize (the size limit of the file) and a chunk,
// and only while fn is behind.
//
// A spool is used by the goroutine that reads the file.
type spool struct {
	body  io.ReadCloser
	limit int64 // bytes of the body read in all at most: the Reader's limit + 1
	read  int64 // bytes read from body so far
	taken bool  // the rest is in chunks
	// chunks hold the rest of the body once taken, in pieces of
	// spoolChunk bytes (no buffer that doubles as it grows).
	chunks [][]byte
	err    error // the body's error, returned once chunks are read
	// onTaken is called once the body was read to its end (or failed)
	// and closed; nil for none.
	onTaken func()
}

// spoolChunk is the size of the pieces a spool holds a body in.
const spoolChunk = 64 << 10

// newSpool returns a spool of body, of which a Reader with the size limit
// limit reads.
func newSpool(body io.ReadCloser, limit int64, onTaken func()) *spool {
	return &spool{body: body, limit: limit + 1, onTaken: onTaken}
}

func (s *spool) Read(p []byte) (int, error) {
	if !s.taken {
		n, err := s.body.Read(p)
		s.read += int64(n)
		return n, err
	}
	for len(s.chunks) > 0 && len(s.chunks[0]) == 0 {
		s.chunks[0] = nil
		s.chunks = s.chunks[1:]
	}
	if len(s.chunks) == 0 {
		if s.err != nil {
			return 0, s.err
		}
		return 0, io.EOF
	}
	n := copy(p, s.chunks[0])
	s.chunks[0] = s.chunks[0][n:]
	return n, nil
}

// take reads what is left of the body into memory, up to the limit (the
// Reader reports a file beyond it), and closes the body. A read error is
// returned by Read once the bytes before it were read.
func (s *spool) take() {
	if s.taken {
		return
	}
	rest := io.LimitReader(s.body, max(s.limit-s.read, 0))
	for {
		chunk := make([]byte, spoolChunk)
		n, err := io.ReadFull(rest, chunk)
		if n > 0 {
			s.chunks = append(s.chunks, chunk[:n:n])
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			break
		}
		if err != nil {
			s.err = err
			break
		}
	}
	s.body.Close()
	s.taken = true
	if s.onTaken != nil {
		s.onTaken()
	}
}

// Close closes the body, unless take did.
func (s *spool) Close() error {
	if s.taken {
		return nil
	}
	return s.body.Close()
}
