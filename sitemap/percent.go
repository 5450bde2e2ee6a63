package sitemap

import "strings"

// samePercent returns s, a URL, with its percent-encodings normalized as
// RFC 3986 §6.2.2.1 and §6.2.2.2 say (https://www.rfc-editor.org/rfc/rfc3986#section-6.2.2):
// an octet of an unreserved character (ALPHA, DIGIT, "-", ".", "_", "~")
// is decoded, and the hex digits of every other encoding are upper case.
// The Walker compares pages and sitemaps by it, so that "/%7Euser",
// "/%7euser" and "/~user", one resource for any server that follows the
// RFC, are one page. Other octets are left as they are: "%2F" is not "/",
// and "+" is not "%20". A URL without "%" is returned as it is, with no
// allocation.
func samePercent(s string) string {
	i := strings.IndexByte(s, '%')
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	b.WriteString(s[:i])
	for ; i < len(s); i++ {
		c := s[i]
		if c != '%' || i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
			b.WriteByte(c)
			continue
		}
		d := unhex(s[i+1])<<4 | unhex(s[i+2])
		if unreserved(d) {
			b.WriteByte(d)
		} else {
			b.WriteByte('%')
			b.WriteByte(upperHex(s[i+1]))
			b.WriteByte(upperHex(s[i+2]))
		}
		i += 2
	}
	return b.String()
}

// unreserved reports whether c is an unreserved character of RFC 3986
// §2.3.
func unreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
		c == '-' || c == '.' || c == '_' || c == '~'
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c <= 'F':
		return c - 'A' + 10
	}
	return c - 'a' + 10
}

func upperHex(c byte) byte {
	if 'a' <= c && c <= 'f' {
		return c - 'a' + 'A'
	}
	return c
}
