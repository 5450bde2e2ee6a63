package directives

import (
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
)

func TestParseDirectives(t *testing.T) {
	utc := func(s string) time.Time {
		tm, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return tm
	}
	tests := []struct {
		name    string
		agent   string
		headers []string // X-Robots-Tag fields
		head    string   // the page's <head> content
		want    Page
	}{
		{name: "nothing", want: noDirectives},
		{name: "meta robots", head: `<meta name="robots" content="noindex, nofollow">`,
			want: Page{NoIndex: true, NoFollow: true, MaxSnippet: -1, MaxVideoPreview: -1}},
		{name: "none", head: `<meta name="ROBOTS" content="NONE">`,
			want: Page{NoIndex: true, NoFollow: true, MaxSnippet: -1, MaxVideoPreview: -1}},
		{name: "meta for the agent", agent: "ExampleBot/1.0", head: `<meta name="examplebot" content="nofollow"><meta name="otherbot" content="noindex">`,
			want: Page{NoFollow: true, MaxSnippet: -1, MaxVideoPreview: -1}},
		{name: "tags combine", agent: "ExampleBot", head: `<meta name="robots" content="max-snippet:50, noarchive"><meta name="ExampleBot" content="max-snippet:20, max-image-preview:large"><meta name="robots" content="max-image-preview:standard">`,
			want: Page{NoArchive: true, MaxSnippet: 20, MaxImagePreview: "standard", MaxVideoPreview: -1}},
		{name: "header list", headers: []string{"noindex, nosnippet", "noimageindex"},
			want: Page{NoIndex: true, NoSnippet: true, NoImageIndex: true, MaxSnippet: -1, MaxVideoPreview: -1}},
		{name: "header for another agent", agent: "ExampleBot", headers: []string{"googlebot: noindex, nofollow", "examplebot: noarchive"},
			want: Page{NoArchive: true, MaxSnippet: -1, MaxVideoPreview: -1}},
		{name: "header for the agent, case", agent: "examplebot", headers: []string{"ExampleBot: NoFollow"},
			want: Page{NoFollow: true, MaxSnippet: -1, MaxVideoPreview: -1}},
		{name: "header and meta", headers: []string{"max-snippet: 10"}, head: `<meta name="robots" content="max-snippet:-1, max-video-preview:0, notranslate">`,
			want: Page{NoTranslate: true, MaxSnippet: 10, MaxVideoPreview: 0}},
		{name: "unavailable_after RFC 850 with a comma", headers: []string{"unavailable_after: Friday, 25-Jun-10 15:00:00 GMT, noarchive"},
			want: Page{NoArchive: true, UnavailableAfter: utc("2010-06-25T15:00:00Z"), MaxSnippet: -1, MaxVideoPreview: -1}},
		{name: "unavailable_after Google's form", head: `<meta name="robots" content="unavailable_after: 25 Jun 2010 15:00:00 PST">`,
			want: Page{UnavailableAfter: utc("2010-06-25T23:00:00Z"), MaxSnippet: -1, MaxVideoPreview: -1}},
		{name: "unavailable_after ISO 8601, earliest wins", headers: []string{"unavailable_after: 2030-01-02", "unavailable_after: 2029-05-01T10:00:00Z"},
			want: Page{UnavailableAfter: utc("2029-05-01T10:00:00Z"), MaxSnippet: -1, MaxVideoPreview: -1}},
		{name: "malformed values ignored, unknown kept", headers: []string{"max-snippet: lots, unavailable_after: someday, indexifembedded, , foo:bar"},
			want: Page{MaxSnippet: -1, MaxVideoPreview: -1, Other: []string{"indexifembedded", "foo:bar"}}},
		{name: "spaces and semicolons", head: `<meta name="robots" content="noindex nofollow"><meta name="robots" content="noarchive; nosnippet">`,
			want: Page{NoIndex: true, NoFollow: true, NoArchive: true, NoSnippet: true, MaxSnippet: -1, MaxVideoPreview: -1}},
		{name: "one-digit day", headers: []string{"unavailable_after: Fri, 5 Jun 2010 15:00:00 GMT"},
			want: Page{UnavailableAfter: utc("2010-06-05T15:00:00Z"), MaxSnippet: -1, MaxVideoPreview: -1}},
		{name: "unparseable date costs only itself", headers: []string{"unavailable_after: Fri, someday, nofollow"},
			want: Page{NoFollow: true, MaxSnippet: -1, MaxVideoPreview: -1}},
		{name: "a directive name is no agent", agent: "noindex", headers: []string{"noindex: x, nofollow"},
			want: Page{NoIndex: true, NoFollow: true, MaxSnippet: -1, MaxVideoPreview: -1}},
		{name: "all and index are defaults", head: `<meta name="robots" content="all, index, follow">`, want: noDirectives},
		{name: "meta without content or name", head: `<meta name="robots"><meta content="noindex">`, want: noDirectives},
	}
	for _, tc := range tests {
		h := http.Header{}
		for _, f := range tc.headers {
			h.Add("X-Robots-Tag", f)
		}
		doc, err := goquery.NewDocumentFromReader(strings.NewReader("<html><head>" + tc.head + "</head><body></body></html>"))
		if err != nil {
			t.Fatal(err)
		}
		got := Parse(tc.agent, h, doc.Selection)
		if !got.UnavailableAfter.Equal(tc.want.UnavailableAfter) {
			t.Errorf("%s: Parse(%q).UnavailableAfter = %v, want %v", tc.name, tc.agent, got.UnavailableAfter, tc.want.UnavailableAfter)
		}
		got.UnavailableAfter, tc.want.UnavailableAfter = time.Time{}, time.Time{}
		if !slices.Equal(got.Other, tc.want.Other) {
			t.Errorf("%s: Parse(%q).Other = %q, want %q", tc.name, tc.agent, got.Other, tc.want.Other)
		}
		got.Other, tc.want.Other = nil, nil
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: Parse(%q) = %+v, want %+v", tc.name, tc.agent, got, tc.want)
		}
	}
}

func TestNoIndexAt(t *testing.T) {
	d := Page{UnavailableAfter: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	if d.NoIndexAt(time.Date(2025, 12, 31, 0, 0, 0, 0, time.UTC)) || !d.NoIndexAt(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("NoIndexAt around unavailable_after is wrong")
	}
}
