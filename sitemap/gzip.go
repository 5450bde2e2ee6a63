package sitemap

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"io"
)

// gunzip removes up to maxGzipLayers gzip layers from src, recognised by the
// magic bytes 1F 8B, not by a name or a Content-Type (docs/sitemaps.md,
// cases 22-25): a .xml.gz that is plain XML is read as it is (case 24), and a
// gzip file sent with Content-Encoding: gzip and not decoded by the client
// has two layers (case 25). A member followed by other bytes ends at the member
// (case 26). Each decompressed layer is capped at maxSize bytes, reported with
// tooLarge, so that a bomb stops early (case 30).
func gunzip(src io.Reader, maxSize int64, tooLarge error) (io.Reader, error) {
	for layer := 0; ; layer++ {
		b := bufio.NewReaderSize(src, 512)
		magic, err := b.Peek(2)
		if err != nil || magic[0] != 0x1f || magic[1] != 0x8b {
			// Read errors surface again on the first real read.
			return b, nil
		}
		if layer == maxGzipLayers {
			return nil, notSitemap(fmt.Sprintf("more than %d gzip layers", maxGzipLayers))
		}
		z, err := gzip.NewReader(b)
		if err != nil {
			return nil, err // docs/sitemaps.md, case 28: corrupted header
		}
		z.Multistream(false)
		src = &limitReader{r: z, n: maxSize, err: tooLarge}
	}
}
