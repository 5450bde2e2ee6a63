package policy

import (
	"fmt"
	"net/url"
	"reflect"
	"slices"
	"testing"
	"time"
)

func TestGroups(t *testing.T) {
	body := "# comment\n" +
		"User-agent: *\n" + // 2
		"Disallow: /private\n" + // 3
		"Crawl-delay: 2\n" + // 4
		"\n" +
		"User-agent: FooBot/1.0\n" + // 6
		"user-agent: BarBot\n" + // 7
		"Allow: /a\n" + // 8
		"Disallow: no-slash\n" + // 9: never matches, left out
		"Disallow:\n" + // 10: no path, left out
		"\n" +
		"User-agent: foobot\n" + // 12: merged into FooBot
		"Disallow: /b\n" + // 13
		"User-agent: * extra\n" + // 14: merged into '*'
		"Allow: /c\n" // 15
	got := Parse([]byte(body)).Groups()
	want := []Group{
		{Agent: "*", Lines: []int{2, 14}, Rules: []Rule{{false, "/private", 3}, {true, "/c", 15}},
			CrawlDelay: 2 * time.Second, HasCrawlDelay: true},
		{Agent: "FooBot", Lines: []int{6, 12}, Rules: []Rule{{true, "/a", 8}, {false, "/b", 13}}},
		{Agent: "BarBot", Lines: []int{7}, Rules: []Rule{{true, "/a", 8}}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Groups() =\n%+v\nwant\n%+v", got, want)
	}
	if g := Parse([]byte("Disallow: /\n")).Groups(); g != nil {
		t.Errorf("Groups() of a file without User-agent lines = %+v, want nil", g)
	}
	var nilRobots *Robots
	if g := nilRobots.Groups(); g != nil {
		t.Errorf("(*Robots)(nil).Groups() = %+v, want nil", g)
	}
}

// TestGroupsAgreeWithExplain checks, on the real-world corpus, that every
// group Groups lists is the one Explain picks for its agent, with the same
// Crawl-delay, and that every deciding rule is one of its rules.
func TestGroupsAgreeWithExplain(t *testing.T) {
	names, bodies := corpusFiles(t)
	for i, name := range names {
		r := Parse(bodies[i])
		_, urls := fuzzProbes(bodies[i])
		for _, g := range r.Groups() {
			agent := g.Agent
			if agent == "*" {
				agent = "NoGroupNamesThisAgent"
			}
			if d, ok := r.CrawlDelay(agent); d != g.CrawlDelay || ok != g.HasCrawlDelay {
				t.Errorf("%s: CrawlDelay(%q) = %v, %v; Groups says %v, %v", name, agent, d, ok, g.CrawlDelay, g.HasCrawlDelay)
			}
			for _, u := range append(urls, &url.URL{Path: "/"}) {
				d := r.Explain(agent, u)
				if d.Agent != g.Agent {
					t.Errorf("%s: Explain(%q, %q).Agent = %q, want %q", name, agent, u, d.Agent, g.Agent)
				}
				if d.Rule != nil && !slices.Contains(g.Rules, *d.Rule) {
					t.Errorf("%s: Explain(%q, %q) decided by %v, not among the group's rules", name, agent, u, d.Rule)
				}
			}
		}
	}
}

// FuzzGroups holds Groups to Explain and CrawlDelay on any body: each
// group is the one its agent gets, every deciding rule is among its rules,
// its lines are User-agent lines in file order, and nothing panics.
func FuzzGroups(f *testing.F) {
	f.Add([]byte("User-agent: *\nDisallow: /a\n\nUser-agent: B\nuser-agent: c/1\nAllow: /\nCrawl-delay: 3\n"))
	f.Add([]byte("\xef\xbb\xbfUser-agent:*\rDisallow:/x\r\nUser-agent: *  x\nAllow: /*$"))
	f.Fuzz(func(t *testing.T, body []byte) {
		r := Parse(body)
		_, urls := fuzzProbes(body)
		for _, g := range r.Groups() {
			if len(g.Lines) == 0 || !slices.IsSorted(g.Lines) {
				t.Fatalf("Groups(): group %q has User-agent lines %v", g.Agent, g.Lines)
			}
			agent := g.Agent
			if agent == "*" {
				agent = "NoGroupNamesThisAgent"
			}
			if d, ok := r.CrawlDelay(agent); d != g.CrawlDelay || ok != g.HasCrawlDelay {
				t.Fatalf("CrawlDelay(%q) = %v, %v; Groups says %v, %v", agent, d, ok, g.CrawlDelay, g.HasCrawlDelay)
			}
			for _, u := range urls {
				d := r.Explain(agent, u)
				if d.Agent != g.Agent {
					t.Fatalf("Explain(%q, %q).Agent = %q, Groups says %q", agent, u, d.Agent, g.Agent)
				}
				if d.Rule != nil && !slices.Contains(g.Rules, *d.Rule) {
					t.Fatalf("Explain(%q, %q) decided by %v, not among the group's rules %v", agent, u, d.Rule, g.Rules)
				}
			}
		}
	})
}

func ExampleRobots_Groups() {
	r := Parse([]byte("User-agent: *\nDisallow: /private\n\nUser-agent: ExampleBot\nCrawl-delay: 5\nAllow: /\n"))
	for _, g := range r.Groups() {
		fmt.Println(g.Agent, g.Lines, g.Rules, g.CrawlDelay)
	}
	// Output:
	// * [1] [line 2: disallow: /private] 0s
	// ExampleBot [4] [line 6: allow: /] 5s
}
