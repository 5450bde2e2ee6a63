package policy

import "time"

// A Group is one group of a robots.txt as [Robots] applies it: every record
// naming one product token merged, or every "User-agent: *" record merged
// (RFC 9309 §2.2.1). Tools show it to say which agents a file treats how.
type Group struct {
	// Agent is the product token as first written, or "*" for the global
	// group; it is the Decision.Agent of the checks the group decides.
	Agent string
	// Lines are the 1-based numbers of the User-agent lines naming the
	// group, in file order.
	Lines []int
	// Rules are the group's Allow and Disallow lines that take part in
	// matching, in file order (rules without a path, or whose path starts
	// with neither '/' nor '*', are left out: [Lint] reports them).
	Rules []Rule
	// CrawlDelay is the group's Crawl-delay, when HasCrawlDelay is set
	// (see [Robots.CrawlDelay]).
	CrawlDelay    time.Duration
	HasCrawlDelay bool
}

// Groups returns the file's groups in the order their first User-agent
// line appears. Each call builds a new slice, reading the file again: it
// is for tools that describe a file, not for the crawl's hot path, and
// costs Parse nothing.
func (r *Robots) Groups() []Group {
	if r == nil || len(r.groups) == 0 {
		return nil
	}
	c := groupCollector{r: r, out: make([]Group, len(r.groups))}
	for i, g := range r.groups {
		c.out[i] = Group{Agent: g.agent, CrawlDelay: g.delay, HasCrawlDelay: g.hasDelay}
	}
	// Every group refers to the whole prepared body; the records are
	// read from it again as Parse read them (RFC 9309 §2.1).
	tokenize([]byte(r.groups[0].text), &c)
	return c.out
}

// A groupCollector is the handler that gives each group of a parsed
// Robots its User-agent lines and rules, with the record logic of builder.
type groupCollector struct {
	r       *Robots
	out     []Group
	members []int32 // ids of the groups the current record adds to
	inRules bool
}

func (c *groupCollector) userAgent(ln lineInfo, value []byte) {
	if c.inRules {
		c.members = c.members[:0]
		c.inRules = false
	}
	var g *group
	if isGlobalAgent(value) {
		g = c.r.groups[c.r.global-1]
	} else {
		g = c.r.group(string(tokenPrefix(value)))
	}
	c.out[g.id].Lines = append(c.out[g.id].Lines, ln.num)
	for _, id := range c.members {
		if id == g.id {
			return
		}
	}
	c.members = append(c.members, g.id)
}

func (c *groupCollector) rule(ln lineInfo, allow bool, value []byte) {
	if len(c.members) == 0 {
		return
	}
	c.inRules = true
	if len(value) == 0 || value[0] != '/' && value[0] != '*' {
		return
	}
	for _, id := range c.members {
		c.out[id].Rules = append(c.out[id].Rules, Rule{Allow: allow, Pattern: string(value), Line: ln.num})
	}
}

func (c *groupCollector) sitemap(lineInfo, []byte)       {}
func (c *groupCollector) other(lineInfo, []byte, []byte) {}
func (c *groupCollector) invalid(lineInfo, []byte)       {}
