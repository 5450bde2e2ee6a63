package bench

import (
	"fmt"
	"math/rand/v2"
	"net/url"
	"strings"
)

// Synthetic returns a generated corpus and workload of the same shape as
// the shared one, for runs from the repository alone (a fresh clone
// without the shared reference material): n robots.txt files with groups
// for several crawlers, prefix, '*' and '$' rules, comments, Crawl-delay
// and Sitemap lines, and 25 checks per file on paths near its rules. The
// same seed gives the same set. Its numbers are comparable between
// engines, not with those of the real corpus.
func Synthetic(n int, seed uint64) *Set {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	agents := []string{"*", "Googlebot", "bingbot", "ExampleBot", "Baiduspider", "GPTBot"}
	words := []string{"admin", "search", "cart", "private", "api", "wp-admin", "tag", "print", "user", "static", "img", "blog", "shop", "login", "feed"}
	word := func() string { return words[rng.IntN(len(words))] }
	path := func() string {
		var b strings.Builder
		for range 1 + rng.IntN(3) {
			b.WriteString("/" + word())
		}
		switch rng.IntN(6) {
		case 0:
			b.WriteString("/*.php")
		case 1:
			b.WriteString("*?" + word() + "=")
		case 2:
			b.WriteString("$")
		case 3:
			b.WriteString("/")
		}
		return b.String()
	}
	s := &Set{Files: make(map[string][]byte, n)}
	for i := range n {
		name := fmt.Sprintf("synthetic-%03d.txt", i)
		var b strings.Builder
		fmt.Fprintf(&b, "# generated robots.txt %d\n", i)
		var rules []string
		groups := 1 + rng.IntN(4)
		for g := range groups {
			fmt.Fprintf(&b, "User-agent: %s\n", agents[(g+i)%len(agents)])
			if rng.IntN(4) == 0 {
				fmt.Fprintf(&b, "Crawl-delay: %d\n", 1+rng.IntN(10))
			}
			for range 2 + rng.IntN(40) {
				p := path()
				rules = append(rules, p)
				key := "Disallow"
				if rng.IntN(5) == 0 {
					key = "Allow"
				}
				fmt.Fprintf(&b, "%s: %s\n", key, p)
			}
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "Sitemap: https://www.example.com/sitemap-%d.xml\n", i)
		body := []byte(b.String())
		s.Files[name] = body
		s.Bytes += int64(len(body))
		for range 25 {
			p := strings.NewReplacer("*", word(), "$", "").Replace(rules[rng.IntN(len(rules))])
			if rng.IntN(3) == 0 {
				p += word()
			}
			if rng.IntN(4) == 0 {
				p += "?id=" + fmt.Sprint(rng.IntN(100))
			}
			u, err := url.Parse("https://www.example.com" + p)
			if err != nil {
				continue
			}
			c := Check{File: name, Agent: agents[rng.IntN(len(agents))], URL: u, Path: u.EscapedPath()}
			if u.RawQuery != "" {
				c.Path += "?" + u.RawQuery
			}
			s.Checks = append(s.Checks, c)
		}
	}
	s.Names = Names(s.Files)
	return s
}
