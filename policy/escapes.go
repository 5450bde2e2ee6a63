package policy

// NormalizeEscapes returns s, a URL or a part of one, with its
// percent-encodings in the form in which RFC 3986 §6.2.2.1 and §6.2.2.2
// (https://www.rfc-editor.org/rfc/rfc3986#section-6.2.2) make equivalent
// spellings equal: the hex digits of an escape in upper case, and the
// escape of an unreserved character (ALPHA, DIGIT, "-", ".", "_", "~")
// decoded, so that "/%7Euser", "/%7euser" and "/~user" are one. Reserved
// characters stay as they are, escaped or not: "/a%2Fb" is not "/a/b",
// and "+" is not "%20". Octets that may not stand in a URI (controls,
// space, non-ASCII) are encoded, and a '%' that starts no valid escape is
// encoded as "%25". It is the form in which a Robots compares rules and
// URLs (RFC 9309 §2.2.2), '*' and '$' left as they are. A string already
// in that form is returned as it is, without an allocation.
func NormalizeEscapes(s string) string {
	if normal(s, &patternOctets) {
		return s
	}
	return string(appendNormal(make([]byte, 0, len(s)+8), s, &patternOctets))
}
