package bench

import (
	"net/url"

	"github.com/robotsmw/robotsmw/policy"
	"github.com/temoto/robotstxt"
)

// An Engine is one robots.txt implementation under test: it compiles a body
// once and then answers checks.
type Engine struct {
	Name string
	// Parse compiles a body; a nil result means the engine rejected it.
	Parse func(body []byte) any
	// Allowed answers one check against a compiled body, looking the
	// agent's group up on every call.
	Allowed func(compiled any, c *Check) bool
}

// ParseReady parses body with robotsmw and then checks "/" once for each
// agent, which builds the lookup index of every group those agents use:
// Parse itself leaves that to each group's first check.
func ParseReady(body []byte, agents []string) {
	r := policy.Parse(body)
	root := &url.URL{Path: "/"}
	for _, a := range agents {
		r.Allowed(a, root)
	}
}

// Engines are the implementations measured, ours first.
var Engines = []Engine{
	{
		Name:  "robotsmw/policy",
		Parse: func(b []byte) any { return policy.Parse(b) },
		Allowed: func(r any, c *Check) bool {
			return r.(*policy.Robots).Allowed(c.Agent, c.URL)
		},
	},
	{
		// temoto/robotstxt v1.1.2 is the engine colly v2.3.0 uses.
		Name: "temoto/robotstxt",
		Parse: func(b []byte) any {
			r, err := robotstxt.FromBytes(b)
			if err != nil {
				return nil
			}
			return r
		},
		Allowed: func(r any, c *Check) bool {
			return r.(*robotstxt.RobotsData).FindGroup(c.Agent).Test(c.Path)
		},
	},
}
