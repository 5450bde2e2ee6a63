// Package sitemap finds and reads sitemaps (sitemaps.org protocol 0.9) to
// seed a crawl.
//
// [FromRobots] turns the Sitemap lines of a robots.txt file into sitemap
// URLs; a line that is not an http or https URL, or not UTF-8, is skipped
// (policy.Lint reports it), as Scrapy skips it, rather than fetched as
// another URL. A [Reader] reads the entries of one sitemap file as a stream, in
// any of the formats sitemaps.org and Google accept:
//
//   - an XML <urlset> or <sitemapindex>, in the sitemaps.org namespace, a
//     legacy one (google.com/schemas/sitemap/0.84, …), any other or none,
//     with any prefix: elements are matched by local name;
//   - an RSS 2.0, RSS 1.0 (RDF) or Atom 0.3/1.0 feed;
//   - a text file with one URL a line;
//   - any of these gzip-compressed, once or twice.
//
// The format is found from the content, never from the URL or the
// Content-Type, which real servers get wrong both ways (docs/sitemaps.md
// lists the cases the tests and comments cite by number).
//
// Deliberate deviations, all on the lenient side, as crawler-commons and
// ultimate-sitemap-parser do:
//
//   - A malformed value (a raw "&", an undefined entity, invalid UTF-8, a
//     <lastmod> in no known form, a <priority> like "0,5") costs that value
//     only, never the entry or the file. Entities are never defined by a
//     DOCTYPE, so never expanded: no billion laughs, no external entities.
//   - A truncated or broken file yields every complete entry, then a
//     [*SyntaxError]. An end tag that matches no open element or a tag cut
//     by "<" is skipped, and reported as a *SyntaxError in place of io.EOF.
//   - An empty body is an error ([ErrNotSitemap]), not an empty sitemap.
//   - Entries are not deduplicated and relative locations are returned as
//     written: both need more than one file or the file's URL.
//   - Of the encodings an XML declaration may name, only ISO-8859-1 (and
//     windows-1252, read as ISO-8859-1) is decoded, and only in values that
//     are not valid UTF-8; elsewhere bytes that are not UTF-8 become U+FFFD.
//     UTF-16 files are not read.
//
// The limits of sitemaps.org (50,000 entries and 50 MiB uncompressed a
// file) are enforced by default, so that a gzip bomb ends after reading
// 50 MiB with a few hundred kilobytes of memory; see [Reader] for the
// settings and [ErrTooLarge]; a Walker's limit is Options.MaxSize, and
// it reports the files past Options.WarnSize (32 MiB by default).
//
// A [Walker] finds and walks a site's sitemaps over any *http.Client: the
// Sitemap lines of robots.txt (through a policy.Cache, so robots.txt is
// fetched once), indexes to a depth limit with loops ended, each sitemap
// checked against robots.txt before it is fetched, 429 and 503 waited out,
// pages resolved, scoped (sitemaps.org, cross-submission), filtered (a
// per-entry Options.Filter like Scrapy's sitemap_filter, lastmod, path
// patterns) and deduplicated, and every drop counted by reason ([Stats]). It holds a few
// sitemap files' entries at a time, never a site's.
//
// Reader and FromRobots do no I/O; only a Walker fetches. The package never
// imports colly. Its functions are safe for concurrent use; a Reader is
// not.
package sitemap
