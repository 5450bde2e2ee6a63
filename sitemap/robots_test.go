package sitemap

import (
	"net/url"
	"slices"
	"testing"
)

func TestFromRobots(t *testing.T) {
	base, _ := url.Parse("https://example.com/robots.txt")
	tests := []struct {
		name  string
		lines []string
		want  []string
	}{
		{"absolute, order kept", []string{"https://example.com/b.xml", "https://example.com/a.xml"},
			[]string{"https://example.com/b.xml", "https://example.com/a.xml"}},
		{"other host allowed (RFC 9309 2.2.4, sitemaps.org)", []string{"https://cdn.example.net/s.xml"},
			[]string{"https://cdn.example.net/s.xml"}},
		{"duplicates dropped", []string{"https://example.com/s.xml", "https://example.com/s.xml#x", "https://example.com/s.xml"},
			[]string{"https://example.com/s.xml"}},
		{"relative resolved", []string{"/sitemap.xml", "maps/index.xml"},
			[]string{"https://example.com/sitemap.xml", "https://example.com/maps/index.xml"}},
		{"not http(s) dropped", []string{"ftp://example.com/s.xml", "Sitemap: https://example.com/s.xml", "mailto:x@example.com"}, nil},
		{"non-ASCII kept, percent-encoded", []string{"https://ja.example.org/テスト-サイトマップ.xml"},
			[]string{"https://ja.example.org/%E3%83%86%E3%82%B9%E3%83%88-%E3%82%B5%E3%82%A4%E3%83%88%E3%83%9E%E3%83%83%E3%83%97.xml"}},
		{"unparsable dropped", []string{"https://exa mple.com/%zz"}, nil},
		{"not utf-8 dropped, as Scrapy does", []string{"http://example.com/\xff.xml", "/caf\xe9.xml", "https://example.com/ok.xml"},
			[]string{"https://example.com/ok.xml"}},
	}
	for _, tt := range tests {
		if got := FromRobots(base, tt.lines); !slices.Equal(got, tt.want) {
			t.Errorf("%s: FromRobots(%q, %q) = %q, want %q", tt.name, base, tt.lines, got, tt.want)
		}
	}
	if got := FromRobots(nil, []string{"/rel.xml", "http://example.com/s.xml"}); !slices.Equal(got, []string{"http://example.com/s.xml"}) {
		t.Errorf("FromRobots(nil, …) = %q, want only the absolute URL", got)
	}
}
