package policy

// NormalizeEscapes returns s, a URL or a part of one, with its
// percent-encodings in the form in which RFC 3986 §6.2.2.1 and §6.2.2.2
// (https://www.rfc-editor.org/rfc/rfc3986#section-6.2.2) make equivalent
// spellings equal: the hex digits of an escape in upper case, and the
// escape of an unreserved character (ALPHA, DIGIT, "-", ".", "_", "~")
// decoded, so that "/%7Euser", "/%7euser" and "/~user" are one. Reserved
// characters stay as they are, escaped or not: "/a%2Fb" is not "/a/b",
// "/a*" is not "/a%2A", and "+" is not "%20". Octets that may not stand
// in a URI (controls, space, non-ASCII) are encoded. This is how a Robots
// normalizes its rules' patterns (RFC 9309 §2.2.2); the URLs it matches
// them against have '*' and '$' encoded besides.
//
// A string with a '%' that starts no valid escape is no URI as RFC 3986
// writes one, and is returned as it is: "/100%" and "/100%25" stay two.
// So is a string that is in that form already, without an allocation.
func NormalizeEscapes(s string) string {
	if normal(s, &patternOctets) || !validEscapes(s) {
		return s
	}
	var buf [256]byte
	b := appendNormal(buf[:0], s, &patternOctets)
	if string(b) == s {
		return s
	}
	return string(b)
}

// validEscapes reports whether every '%' of s starts an escape: two hex
// digits.
func validEscapes(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			continue
		}
		if i+2 >= len(s) {
			return false
		}
		if _, ok := unhex(s[i+1]); !ok {
			return false
		}
		if _, ok := unhex(s[i+2]); !ok {
			return false
		}
		i += 2
	}
	return true
}
