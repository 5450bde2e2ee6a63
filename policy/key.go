package policy

import "encoding/binary"

// Little-endian words of the lower-case spellings of the four keys, for
// loads of 8 or 4 bytes of a key, and the fold bits that make such a load
// lower case: 0x20 in the byte of each letter. For a letter L,
// b|0x20 == L exactly when b is L in either case; other bytes, such as
// the '-' of "user-agent", are compared as they are.
const (
	wordUserAge  = 0x6567612d72657375 // "user-age"
	foldUserAge  = 0x2020200020202020
	wordErAgent  = 0x746e6567612d7265 // "er-agent", bytes 2 to 9 of "user-agent"
	foldErAgent  = 0x2020202020002020
	wordDisallow = 0x776f6c6c61736964 // "disallow"
	wordAllo     = 0x6f6c6c61         // "allo"
	wordSite     = 0x65746973         // "site"
	wordEmap     = 0x70616d65         // "emap", bytes 3 to 6 of "sitemap"
	fold8        = 0x2020202020202020
	fold4        = 0x20202020
)

// recognise classifies a key by case-insensitive prefix, in Google's order.
// It reports whether the key is one of the accepted misspellings.
//
// Google-specific: the prefix test makes "Disallowed" and "Sitemaps" valid;
// the typos "useragent", "user agent", "dissallow", "dissalow", "disalow",
// "diasllow", "disallaw" and "site-map" are accepted.
//
// The usual spellings are tested first with a load or two of the key's
// bytes; each is the first spelling recogniseSpelled would try for the
// key's first letter, so the order is kept.
func recognise(key []byte) (kind keyKind, typo bool) {
	switch key[0] | 0x20 {
	case 'd':
		if len(key) >= 8 && binary.LittleEndian.Uint64(key)|fold8 == wordDisallow {
			return keyDisallow, false
		}
	case 'u':
		if len(key) >= 10 && binary.LittleEndian.Uint64(key)|foldUserAge == wordUserAge &&
			binary.LittleEndian.Uint64(key[2:])|foldErAgent == wordErAgent {
			return keyUserAgent, false
		}
	case 'a':
		if len(key) >= 5 && binary.LittleEndian.Uint32(key)|fold4 == wordAllo && key[4]|0x20 == 'w' {
			return keyAllow, false
		}
	case 's':
		if len(key) >= 7 && binary.LittleEndian.Uint32(key)|fold4 == wordSite &&
			binary.LittleEndian.Uint32(key[3:])|fold4 == wordEmap {
			return keySitemap, false
		}
	default:
		return keyUnknown, false
	}
	return recogniseSpelled(key)
}

// recogniseSpelled is recognise without the fast path: it tries every
// accepted spelling in Google's order.
func recogniseSpelled(key []byte) (kind keyKind, typo bool) {
	switch lower(key[0]) {
	case 'u':
		switch {
		case hasPrefixFold(key, "user-agent"):
			return keyUserAgent, false
		case hasPrefixFold(key, "useragent"), hasPrefixFold(key, "user agent"):
			return keyUserAgent, true
		}
	case 'a':
		if hasPrefixFold(key, "allow") {
			return keyAllow, false
		}
	case 'd':
		switch {
		case hasPrefixFold(key, "disallow"):
			return keyDisallow, false
		case hasPrefixFold(key, "dissallow"), hasPrefixFold(key, "dissalow"),
			hasPrefixFold(key, "disalow"), hasPrefixFold(key, "diasllow"),
			hasPrefixFold(key, "disallaw"):
			return keyDisallow, true
		}
	case 's':
		switch {
		case hasPrefixFold(key, "sitemap"):
			return keySitemap, false
		case hasPrefixFold(key, "site-map"):
			return keySitemap, true
		}
	}
	return keyUnknown, false
}
