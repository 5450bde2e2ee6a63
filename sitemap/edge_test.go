package sitemap

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

const (
	head  = `<?xml version="1.0" encoding="UTF-8"?>` + "\n" + `<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`
	tail  = `</urlset>`
	index = `<?xml version="1.0" encoding="UTF-8"?>` + "\n" + `<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`
)

func urls(locs ...string) string {
	var b strings.Builder
	for _, l := range locs {
		fmt.Fprintf(&b, "<url><loc>%s</loc></url>\n", l)
	}
	return b.String()
}

// TestEdgeCases runs the cases of docs/sitemaps.md that concern reading one file;
// each names its number there.
func TestEdgeCases(t *testing.T) {
	five := head + urls("http://a.example/1", "http://a.example/2", "http://a.example/3", "http://a.example/4", "http://a.example/5") + tail
	fiveLocs := []string{"http://a.example/1", "http://a.example/2", "http://a.example/3", "http://a.example/4", "http://a.example/5"}
	tests := []struct {
		name  string
		in    string
		setup func(*Reader)
		want  []string // Locs
		err   string   // errKind of the final error
	}{
		{"case 22 gzip found by magic bytes", gz(five), nil, fiveLocs, "EOF"},
		{"case 23 gzipped text", gz("http://a.example/1\nhttp://a.example/2\n"), nil, []string{"http://a.example/1", "http://a.example/2"}, "EOF"},
		{"case 24 plain XML where gzip is expected", five, nil, fiveLocs, "EOF"},
		{"case 25 gzip over gzip", gz(gz(five)), nil, fiveLocs, "EOF"},
		{"case 25 a third gzip layer", gz(gz(gz(five))), nil, nil, "not sitemap"},
		{"case 26 gzip member followed by a newline", gz(five) + "\n", nil, fiveLocs, "EOF"},
		{"case 26 gzip member followed by junk", gz(five) + "junk\x00\x01", nil, fiveLocs, "EOF"},
		{"case 27 truncated gzip", truncatedGzip(head+urls(fiveLocs[:3]...), urls(fiveLocs[3:]...)+tail), nil, fiveLocs[:3], "truncated"},
		{"case 28 gzip magic then garbage", "\x1f\x8bgarbage garbage garbage", nil, nil, "syntax"},
		{"case 28 empty gzip member", gz(""), nil, nil, "not sitemap"},
		{"case 28 empty body", "", nil, nil, "not sitemap"},
		{"case 28 white space only", " \n\t\r\n", nil, nil, "not sitemap"},
		{"case 29 gzipped text without URLs", gz("Gzipped HOST"), nil, nil, "not sitemap"},
		{"case 29 unknown root", `<?xml version="1.0"?><products><product><loc>http://a.example/</loc></product></products>`, nil, nil, "not sitemap"},
		{"case 31 text whatever the name", "http://a.example/1\nhttp://a.example/2", nil, []string{"http://a.example/1", "http://a.example/2"}, "EOF"},
		{"case 32 bogus text", "this is a bogus sitemap", nil, nil, "not sitemap"},
		{"case 32 binary", "\x00\x01\x02http://a.example/\n", nil, nil, "not sitemap"},
		{"case 32 JSON", `{"urls": ["http://a.example/"]}`, nil, nil, "not sitemap"},
		{"case 33 HTML error page", "<!DOCTYPE html>\n<html><head><title>404</title></head><body><a href=\"http://a.example/\">home</a></body></html>", nil, nil, "not sitemap"},
		{"case 34 BOM and white space before <?xml", "\uFEFF\n \t\r\n" + five, nil, fiveLocs, "EOF"},
		{"case 35 ISO-8859-1 declared: Latin-1 bytes decoded, UTF-8 kept", `<?xml version="1.0" encoding="ISO-8859-1"?><?xml-stylesheet href="s.xsl"?><urlset>` + urls("http://x/caf\xe9", "http://x/caf\u00e9") + tail, nil,
			[]string{"http://x/caf\u00e9", "http://x/caf\u00e9"}, "EOF"},
		{"case 36 invalid UTF-8 in the 2nd of 3 locs", head + urls("http://a.example/1", "http://a.example/caf\xe9", "http://a.example/3") + tail, nil,
			[]string{"http://a.example/1", "http://a.example/caf\uFFFD", "http://a.example/3"}, "EOF"},
		{"case 37 entities decoded", head + urls("http://a.example/?a=1&amp;b=2&lt;&gt;&quot;&apos;&#65;&#x42;") + tail, nil, []string{`http://a.example/?a=1&b=2<>"'AB`}, "EOF"},
		{"case 38 CDATA joined to text", head + `<url><loc>http://x/dyn<![CDATA[?a=1&b=2]]></loc></url>` + tail, nil, []string{"http://x/dyn?a=1&b=2"}, "EOF"},
		{"case 39 Unicode white space trimmed", head + "<url><loc>\n <![CDATA[\u00a0https://a.example/s2.xml ]]> \u2000\n</loc></url>" + tail, nil, []string{"https://a.example/s2.xml"}, "EOF"},
		{"case 40 legacy namespace", `<urlset xmlns="http://www.google.com/schemas/sitemap/0.84">` + urls("http://a.example/") + tail, nil, []string{"http://a.example/"}, "EOF"},
		{"case 41 no namespace, and url xmlns=\"\"", `<urlset><url xmlns=""><loc>http://a.example/1</loc></url>` + urls("http://a.example/2") + tail, nil, []string{"http://a.example/1", "http://a.example/2"}, "EOF"},
		{"case 42 prefixed elements", `<sit:urlset xmlns:sit="http://www.sitemaps.org/schemas/sitemap/0.9"><sit:url><sit:loc>http://a.example/</sit:loc></sit:url></sit:urlset>`, nil, []string{"http://a.example/"}, "EOF"},
		{"case 43 image and video URLs are no pages", head + `<url><loc>http://a.example/p</loc><image:image><image:loc>http://cdn.example/i.jpg</image:loc></image:image>` +
			`<video:video><video:thumbnail_loc>http://cdn.example/t.jpg</video:thumbnail_loc><video:content_loc>http://cdn.example/v.mp4</video:content_loc><video:player_loc>http://cdn.example/p</video:player_loc></video:video></url>` + tail,
			nil, []string{"http://a.example/p"}, "EOF"},
		{"case 45 url without loc, empty and blank loc skipped", head + `<url><lastmod>2020-01-01</lastmod></url><url><loc></loc></url><url><loc>   </loc></url>` + urls("http://a.example/") + tail, nil, []string{"http://a.example/"}, "EOF"},
		{"case 46 url inside loc", head + `<url><loc><url><![CDATA[http://jobs.example/1]]></url></loc><lastmod>2020-01-01</lastmod></url>` + tail, nil, []string{"http://jobs.example/1"}, "EOF"},
		{"case 47 broken nesting: entries kept, damage reported", head + `<url><!-- c --></url><url><loc> http://a.example/</loc></url><!-- missing opening url tag --></url></urlset>`, nil, []string{"http://a.example/"}, "syntax"},
		{"case 48 50 urls without </urlset>", head + urls(seq(50)...), nil, seq(50), "truncated"},
		{"case 48 cut inside the 50th loc", head + urls(seq(49)...) + "<url><loc>http://a.example/5", nil, seq(49), "truncated"},
		{"case 48 cut inside </loc>: the loc is not complete", head + `<url><loc>http://www.example.com/</lo`, nil, nil, "truncated"},
		{"case 49 raw & kept", head + urls("http://x/?a=1&b=2") + `<url><loc>http://x/2</loc><video:description>Q&A</video:description></url>` + tail, nil, []string{"http://x/?a=1&b=2", "http://x/2"}, "EOF"},
		{"case 50 <url does not close", "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n\n<urlset><url does not close</urlset>\n\n\n</url>\n", nil, nil, "syntax"},
		{"case 51 undefined entities kept as written", head + urls("http://x/&nbsp;a", "http://x/&foo;", "http://x/3") + tail, nil, []string{"http://x/&nbsp;a", "http://x/&foo;", "http://x/3"}, "EOF"},
		{"case 52 billion laughs never expanded", `<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;"><!ELEMENT urlset ANY>]>` +
			`<urlset>` + urls("http://x/&lol2;", "http://x/2") + tail, nil, []string{"http://x/&lol2;", "http://x/2"}, "EOF"},
		{"case 53 external entity never read", `<?xml version="1.0"?><!DOCTYPE urlset [<!ENTITY xxe SYSTEM "file:///etc/passwd">]><urlset>` + urls("http://127.0.0.1:8000/&xxe;") + tail, nil, []string{"http://127.0.0.1:8000/&xxe;"}, "EOF"},
		{"case 54 xi:include ignored", head + `<url><loc>http://x/visit-here<xi:include xmlns:xi="http://www.w3.org/2001/XInclude" href="file:///etc/passwd" parse="text"/></loc></url>` + tail, nil, []string{"http://x/visit-here"}, "EOF"},
		{"case 55 comments, stylesheet, trailing comment", `<?xml version="1.0"?><?xml-stylesheet type="text/xsl" href="/s.xsl"?><!-- a --><urlset><url><!-- b --><loc>http://x/<!-- c -->1</loc></url></urlset><!-- d -->junk`, nil, []string{"http://x/1"}, "EOF"},
		{"case 56 <some> root", `<some><url><loc>http://x/</loc></url></some>`, nil, nil, "not sitemap"},
		{"case 57 unknown children ignored", head + `<url><random_tag>http://y/</random_tag><mobile:mobile/><PageMap><DataObject><Attribute name="loc">http://z/</Attribute></DataObject></PageMap><loc>http://x/</loc></url>` + tail, nil, []string{"http://x/"}, "EOF"},
		{"case 58 100,000 nested elements", head + strings.Repeat("<a>", 100000), nil, nil, "syntax"},
		{"case 58 long element names", head + "<url><loc>http://x/1</loc><" + strings.Repeat("n", 5000) + "a>t</" + strings.Repeat("n", 5000) + "a></url>" + urls("http://x/2") + tail, nil, []string{"http://x/1", "http://x/2"}, "EOF"},
		{"case 59 entries past MaxEntries", head + urls(seq(10)...) + tail, func(r *Reader) { r.MaxEntries = 7 }, seq(7), "too large"},
		{"case 59 exactly MaxEntries", head + urls(seq(7)...) + tail, func(r *Reader) { r.MaxEntries = 7 }, seq(7), "EOF"},
		{"case 59 bytes past MaxSize", head + urls(seq(10)...) + strings.Repeat(" ", 1000) + tail, func(r *Reader) { r.MaxSize = 600 }, seq(10), "too large"},
		{"case 59 compressed bytes past MaxCompressedSize", gz(head + urls(seq(10)...) + tail), func(r *Reader) { r.MaxCompressedSize = 50 }, nil, "too large"},
		{"case 60 a loc of 5 MB dropped, parsing goes on", head + urls("http://x/"+strings.Repeat("a", 5<<20), "http://x/2") + tail, nil, []string{"http://x/2"}, "EOF"},
		{"case 69 two locs in one sitemap", index + `<sitemap><loc>http://x/1.xml</loc><loc>http://x/2.xml</loc></sitemap></sitemapindex>`, nil, []string{"http://x/1.xml", "http://x/2.xml"}, "EOF"},
		{"case 70 truncated index", index + `<sitemap><loc>http://www.example.com/sitemap1.xml.gz</loc><las`, nil, []string{"http://www.example.com/sitemap1.xml.gz"}, "truncated"},
		{"case 71 relative loc returned as written", index + `<sitemap><loc>/post-sitemap.xml</loc></sitemap></sitemapindex>`, nil, []string{"/post-sitemap.xml"}, "EOF"},
		{"case 77 &amp; in an index child", index + `<sitemap><loc>https://x/atom.xml?redirect=false&amp;start-index=1</loc></sitemap></sitemapindex>`, nil, []string{"https://x/atom.xml?redirect=false&start-index=1"}, "EOF"},
		{"case 81 BOM, CRLF, blank lines, spaces", "\uFEFFhttp://x/1\r\n\r\n   http://x/2  \r\n\n\thttp://x/3", nil, []string{"http://x/1", "http://x/2", "http://x/3"}, "EOF"},
		{"case 82 lines that are no URLs skipped", "Some other stuff which totally doesn't look like an URL\nwww.example.com/x\nhttp://x/1\nftp://x/2\nHTTPS://x/3\n", nil, []string{"http://x/1", "HTTPS://x/3"}, "EOF"},
		{"case 84 text past MaxEntries", strings.Repeat("http://x/\n", 12), func(r *Reader) { r.MaxEntries = 10 }, slicesRepeat("http://x/", 10), "too large"},
		{"case 85 RSS: link, guid, entity, CDATA; channel link ignored", `<rss version="2.0"><channel><link>https://x/main.html</link>` +
			`<item><link>https://x/1</link><guid isPermaLink="false">7bd204c6</guid></item>` +
			`<item><guid isPermaLink="false">https://x/guid.html</guid></item>` +
			`<item><link>https://x/foo?q=a&amp;l=en</link></item>` +
			`<item><link>https://x/foo<![CDATA[?q=a&l=fr]]></link></item>` +
			`<item><title>no link</title></item></channel></rss>`, nil,
			[]string{"https://x/1", "https://x/guid.html", "https://x/foo?q=a&l=en", "https://x/foo?q=a&l=fr"}, "EOF"},
		{"case 85 <atom:link/> after <link> in an item", `<rss><channel><item><link>https://x/1</link><atom:link href="https://x/feed" rel="self"/></item></channel></rss>`, nil, []string{"https://x/1"}, "EOF"},
		{"case 87 RSS 1.0: items outside the channel", `<?xml version="1.0"?><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://purl.org/rss/1.0/">` +
			`<channel rdf:about="http://x/"><link>http://x/</link></channel><item rdf:about="http://x/1"><title>t</title><link>http://x/1</link></item></rdf:RDF>`, nil, []string{"http://x/1"}, "EOF"},
		{"case 88 Atom: plain link beats rel=edit; feed links ignored", `<feed xmlns="http://www.w3.org/2005/Atom"><link href="http://x/feed" rel="self"/>` +
			`<entry><link rel="edit" href="http://x/1/edit"/><link href="http://x/1"/><link rel="alternate" href="http://x/1.html"/></entry></feed>`, nil, []string{"http://x/1"}, "EOF"},
		{"case 90 relative RSS link returned as written", `<rss><channel><item><link>/blog/1</link></item></channel></rss>`, nil, []string{"/blog/1"}, "EOF"},
		{"case 97 loc over 2,048 characters dropped", head + urls("http://x/"+strings.Repeat("a", 2040), "http://x/"+strings.Repeat("b", 2030)) + tail, nil, []string{"http://x/" + strings.Repeat("b", 2030)}, "EOF"},
	}
	for _, tt := range tests {
		es, err := readAll(strings.NewReader(tt.in), tt.setup)
		if got := locs(es); !reflect.DeepEqual(got, tt.want) || errKind(err) != tt.err {
			t.Errorf("%s: Next() gave %q, then %v (%s); want %q, then %s", tt.name, trunc(got), err, errKind(err), trunc(tt.want), tt.err)
		}
		es1, err1 := readAll(iotest.OneByteReader(strings.NewReader(tt.in)), tt.setup)
		if !reflect.DeepEqual(es1, es) || fmt.Sprint(err1) != fmt.Sprint(err) {
			t.Errorf("%s: one byte per read differs", tt.name)
		}
	}
}

// truncatedGzip returns the gzip of a+b cut right after the flushed a.
func truncatedGzip(a, b string) string {
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	w.Write([]byte(a))
	w.Flush()
	n := buf.Len()
	w.Write([]byte(b))
	w.Close()
	return buf.String()[:n]
}

func seq(n int) []string {
	var out []string
	for i := range n {
		out = append(out, fmt.Sprintf("http://a.example/%d", i))
	}
	return out
}

func slicesRepeat(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}

func trunc(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		if len(s) > 60 {
			s = s[:60] + "…"
		}
		out[i] = s
	}
	return out
}

func date(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t
}

// TestFields checks the values of entries, not only their locations.
func TestFields(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []Entry
	}{
		{"case 37 the protocol's example fields", head + `<url><loc>http://www.example.com/</loc><lastmod>2005-01-01</lastmod><changefreq>monthly</changefreq><priority>0.8</priority></url>` +
			`<url><loc>http://www.example.com/catalog?item=12&amp;desc=vacation_hawaii</loc><changefreq>weekly</changefreq></url>` + tail,
			[]Entry{{Loc: "http://www.example.com/", LastMod: date("2005-01-01T00:00:00Z"), ChangeFreq: "monthly", Priority: 0.8},
				{Loc: "http://www.example.com/catalog?item=12&desc=vacation_hawaii", ChangeFreq: "weekly", Priority: -1}}},
		{"case 38 &#43; in a date", head + `<url><loc>http://x/</loc><lastmod>2004-10-01T18:23:17&#43;00:00</lastmod></url>` + tail,
			[]Entry{{Loc: "http://x/", LastMod: date("2004-10-01T18:23:17Z"), Priority: -1}}},
		{"case 44 hreflang alternates; a link without href ignored", head + `<url><loc>http://x/en</loc>` +
			`<xhtml:link rel="alternate" hreflang="de" href="http://x/de"/><xhtml:link rel="alternate" hreflang="fr"/>` +
			`<xhtml:link
			   rel="alternate"
			   hreflang="en" href='http://x/en?a=1&amp;b=2'/></url>` + tail,
			[]Entry{{Loc: "http://x/en", Priority: -1, Alternates: []Alternate{{"de", "http://x/de"}, {"en", "http://x/en?a=1&b=2"}}}}},
		{"case 43 image and video counts", head + `<url><loc>http://x/</loc><image:image><image:loc>http://x/1.jpg</image:loc></image:image><image:image><image:loc>http://x/2.jpg</image:loc></image:image><video:video><video:title>t</video:title></video:video></url>` + tail,
			[]Entry{{Loc: "http://x/", Priority: -1, Images: 2, Videos: 1}}},
		{"case 66 news, with a date or a date-time, and empty", head + `<url><loc>http://x/1</loc><news:news><news:publication><news:name>The Times</news:name><news:language>en</news:language></news:publication>` +
			`<news:publication_date>2008-12-23</news:publication_date><news:title>A &amp; B</news:title></news:news></url>` +
			`<url><loc>http://x/2</loc><news:news><news:publication_date>2025-08-11T15:30:00Z</news:publication_date></news:news></url>` +
			`<url><loc>http://x/3</loc><news:news><news:publication><news:name></news:name></news:publication><news:title/></news:news></url>` + tail,
			[]Entry{{Loc: "http://x/1", Priority: -1, News: &News{Name: "The Times", Language: "en", PublicationDate: date("2008-12-23T00:00:00Z"), Title: "A & B"}},
				{Loc: "http://x/2", Priority: -1, News: &News{PublicationDate: date("2025-08-11T15:30:00Z")}},
				{Loc: "http://x/3", Priority: -1, News: &News{}}}},
		{"case 68 bare text in <sitemap>; Index set", index + "<sitemap>\nhttps://x/s.jss?p=1&amp;l=en\n</sitemap><sitemap><loc>https://x/2.xml</loc><lastmod>2024-02-12T12:34:56+01:00</lastmod></sitemap></sitemapindex>",
			[]Entry{{Loc: "https://x/s.jss?p=1&l=en", Index: true, Priority: -1}, {Loc: "https://x/2.xml", Index: true, Priority: -1, LastMod: date("2024-02-12T12:34:56+01:00")}}},
		{"case 69 loc, lastmod, loc, loc, lastmod: the middle child has no lastmod", index + `<sitemap><loc>http://x/1</loc><lastmod>2020-01-01</lastmod><loc>http://x/2</loc><loc>http://x/3</loc><lastmod>2021-01-01</lastmod></sitemap></sitemapindex>`,
			[]Entry{{Loc: "http://x/1", Index: true, Priority: -1, LastMod: date("2020-01-01T00:00:00Z")}, {Loc: "http://x/2", Index: true, Priority: -1},
				{Loc: "http://x/3", Index: true, Priority: -1, LastMod: date("2021-01-01T00:00:00Z")}}},
		{"case 86 RSS pubDate forms", `<rss><channel><pubDate>Thu, 05 Jan 2017 12:34:50 GMT</pubDate>` +
			`<item><link>http://x/1</link><pubDate>Thu, 05 Jan 2017 13:34:51 +0100</pubDate></item>` +
			`<item><link>http://x/2</link><pubDate>05 Jan 2017 11:34:52 -0100</pubDate></item>` +
			`<item><link>http://x/3</link><pubDate>05 Jan 17 12:34:53 GMT</pubDate></item>` +
			`<item><link>http://x/4</link><pubDate>Thu, 05 Jan 2017 12:34:54</pubDate></item>` +
			`<item><link>http://x/5</link><pubDate></pubDate></item></channel></rss>`,
			[]Entry{{Loc: "http://x/1", Priority: -1, LastMod: date("2017-01-05T12:34:51Z")}, {Loc: "http://x/2", Priority: -1, LastMod: date("2017-01-05T12:34:52Z")},
				{Loc: "http://x/3", Priority: -1, LastMod: date("2017-01-05T12:34:53Z")}, {Loc: "http://x/4", Priority: -1}, {Loc: "http://x/5", Priority: -1}}},
		{"case 89 Atom 0.3 dates", `<feed version="0.3" xmlns="http://purl.org/atom/ns#"><entry><link rel="alternate" type="text/html" href="https://x/1"/><issued>2024-01-01T00:00:00Z</issued></entry>` +
			`<entry><link rel="alternate" href="https://x/2"/><issued>2024-01-01T00:00:00Z</issued><modified>2024-01-02T00:00:00Z</modified></entry></feed>`,
			[]Entry{{Loc: "https://x/1", Priority: -1, LastMod: date("2024-01-01T00:00:00Z")}, {Loc: "https://x/2", Priority: -1, LastMod: date("2024-01-02T00:00:00Z")}}},
	}
	for _, tt := range tests {
		es, err := readAll(strings.NewReader(tt.in), nil)
		if err != io.EOF {
			t.Errorf("%s: Next() ended with %v, want EOF", tt.name, err)
		}
		if len(es) != len(tt.want) {
			t.Errorf("%s: Next() gave %d entries, want %d: %+v", tt.name, len(es), len(tt.want), es)
			continue
		}
		for i := range es {
			if !entryEqual(es[i], tt.want[i]) {
				t.Errorf("%s: Next() entry %d = %+v (news %+v), want %+v (news %+v)", tt.name, i, es[i], es[i].News, tt.want[i], tt.want[i].News)
			}
		}
	}
}

func entryEqual(a, b Entry) bool {
	if !a.LastMod.Equal(b.LastMod) || (a.News == nil) != (b.News == nil) {
		return false
	}
	if a.News != nil {
		an, bn := *a.News, *b.News
		if !an.PublicationDate.Equal(bn.PublicationDate) {
			return false
		}
		an.PublicationDate, bn.PublicationDate = time.Time{}, time.Time{}
		if an != bn {
			return false
		}
	}
	a.LastMod, b.LastMod, a.News, b.News = time.Time{}, time.Time{}, nil, nil
	if len(a.Alternates) == 0 && len(b.Alternates) == 0 {
		a.Alternates, b.Alternates = nil, nil
	}
	return reflect.DeepEqual(a, b)
}

func TestParseTime(t *testing.T) {
	tests := []struct {
		in   string
		want string // RFC 3339, or "" for none
	}{
		// docs/sitemaps.md, case 62: the six W3C Datetime forms.
		{"1997", "1997-01-01T00:00:00Z"},
		{"1997-07", "1997-07-01T00:00:00Z"},
		{"1997-07-16", "1997-07-16T00:00:00Z"},
		{"1997-07-16T19:20+01:00", "1997-07-16T19:20:00+01:00"},
		{"1997-07-16T19:20:30+01:00", "1997-07-16T19:20:30+01:00"},
		{"1997-07-16T19:20:30.45+01:00", "1997-07-16T19:20:30.45+01:00"},
		{"2004-12-23T18:00:15+00:00", "2004-12-23T18:00:15Z"},
		{"1994-11-05T13:15:30Z", "1994-11-05T08:15:30-05:00"},
		// docs/sitemaps.md, case 63: deviations.
		{"2024-01-01 10:00:00", "2024-01-01T10:00:00Z"},
		{"2024-01-01T10:00:00", "2024-01-01T10:00:00Z"},
		{"2024-01-01T10:00:00+0100", "2024-01-01T10:00:00+01:00"},
		{" 2023-06-15 ", "2023-06-15T00:00:00Z"},
		{"2024/01/01", "2024-01-01T00:00:00Z"},
		{"", ""},
		{"blah", ""},
		{"2024-13-45", ""},
		// docs/sitemaps.md, case 86: RSS.
		{"Thu, 05 Jan 2017 12:34:50 GMT", "2017-01-05T12:34:50Z"},
		{"Thu, 5 Jan 2017 13:34:51 +0100", "2017-01-05T12:34:51Z"},
		{"incorrect", ""},
	}
	for _, tt := range tests {
		got, ok := parseTime(tt.in)
		if tt.want == "" {
			if ok {
				t.Errorf("parseTime(%q) = %v, true; want false", tt.in, got)
			}
			continue
		}
		if want := date(tt.want); !ok || !got.Equal(want) {
			t.Errorf("parseTime(%q) = %v, %v; want %v, true", tt.in, got, ok, want)
		}
	}
}

func TestPriorityAndChangeFreq(t *testing.T) {
	// docs/sitemaps.md, case 64.
	for in, want := range map[string]float64{"0.8": 0.8, "1": 1, "1.00": 1, " 0.8 ": 0.8, "0": 0, "0.0": 0,
		"1.1": -1, "-1": -1, "NaN": -1, "Infinity": -1, "-Infinity": -1, "BAD VALUE": -1, "0,5": -1, "": -1} {
		if got := priority(in); got != want {
			t.Errorf("priority(%q) = %v, want %v", in, got, want)
		}
	}
	// docs/sitemaps.md, case 65.
	for in, want := range map[string]string{"Daily": "daily", "  daily ": "daily", "DAILY": "daily", "never": "never", "sometimes": "", "": ""} {
		if got := changeFreq(in); got != want {
			t.Errorf("changeFreq(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestSyntaxError checks where a truncated file is reported to end.
func TestSyntaxError(t *testing.T) {
	in := head + urls("http://x/1", "http://x/2") + "<url><loc>http://x/3"
	es, err := readAll(strings.NewReader(in), nil)
	var se *SyntaxError
	if len(es) != 2 || !errors.As(err, &se) || se.Entry != 2 || se.Offset != int64(len(in)) || !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("Next() gave %d entries, then %#v; want 2, then *SyntaxError{Entry: 2, Offset: %d, Err: io.ErrUnexpectedEOF}", len(es), err, len(in))
	}
	if !strings.HasPrefix(err.Error(), "sitemap: ") {
		t.Errorf("Error() = %q, want the prefix \"sitemap: \"", err)
	}
	// The error is sticky.
	r := NewReader(strings.NewReader(""))
	_, err1 := r.Next()
	_, err2 := r.Next()
	if err1 == nil || err1 != err2 {
		t.Errorf("Next() after %v = %v, want the same error", err1, err2)
	}
}

// TestLargePlain reads 60 MB of plain XML (docs/sitemaps.md, case 103): the
// read stops at 50 MiB with ErrTooLarge after the entries before it.
func TestLargePlain(t *testing.T) {
	body := io.MultiReader(strings.NewReader(head+urls("http://x/1")), &spaces{n: 60 << 20}, strings.NewReader(tail))
	es, err := readAll(body, nil)
	if len(es) != 1 || !errors.Is(err, ErrTooLarge) {
		t.Errorf("Next() gave %d entries, then %v; want 1, then ErrTooLarge", len(es), err)
	}
	// docs/sitemaps.md, case 59 with the default limit: 50,001 entries.
	var b bytes.Buffer
	b.WriteString(head)
	for range DefaultMaxEntries + 1 {
		b.WriteString("<url><loc>http://x/</loc></url>")
	}
	b.WriteString(tail)
	es, err = readAll(&b, nil)
	if len(es) != DefaultMaxEntries || !errors.Is(err, ErrTooLarge) {
		t.Errorf("Next() gave %d entries, then %v; want %d, then ErrTooLarge", len(es), err, DefaultMaxEntries)
	}
}

// spaces reads as n spaces.
type spaces struct{ n int }

func (s *spaces) Read(p []byte) (int, error) {
	if s.n == 0 {
		return 0, io.EOF
	}
	n := min(len(p), s.n)
	for i := range p[:n] {
		p[i] = ' '
	}
	s.n -= n
	return n, nil
}
