package main

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/robotsmw/robotsmw/policy"
)

// A checkRequest asks for the verdict of robots.txt on every URL for
// every agent (POST /api/check).
type checkRequest struct {
	Robots string   `json:"robots"` // the robots.txt text
	URLs   []string `json:"urls"`   // absolute http(s) URLs, or paths starting with '/'
	Agents []string `json:"agents"` // product tokens or full User-Agents
}

// A checkResponse holds one verdict per URL and agent, URL by URL, in the
// order asked.
type checkResponse struct {
	Results []verdict `json:"results"`
}

// A verdict is what policy.Robots.Explain says about one URL for one agent.
type verdict struct {
	URL   string `json:"url"`
	Agent string `json:"agent"` // as given
	Token string `json:"token"` // the product token matched (RFC 9309 §2.2.1)
	// Allowed is the verdict; Why says it in words.
	Allowed bool   `json:"allowed"`
	Why     string `json:"why"`
	// Group is "specific", "global" or "none" (no group applies);
	// GroupAgent names the group as first written ("*" for global).
	Group      string    `json:"group"`
	GroupAgent string    `json:"groupAgent,omitempty"`
	Rule       *ruleJSON `json:"rule,omitempty"`   // the deciding rule; absent when none matched
	Exempt     bool      `json:"exempt,omitempty"` // /robots.txt, always allowed
	// Error says why URL could not be checked; the other fields are then
	// empty.
	Error string `json:"error,omitempty"`
}

// ruleJSON is a policy.Rule.
type ruleJSON struct {
	Allow   bool   `json:"allow"`
	Pattern string `json:"pattern"`
	Line    int    `json:"line"`
}

// toRuleJSON returns r for an answer, its pattern cut to maxPatternShown
// bytes (with "…" after them).
func toRuleJSON(r policy.Rule) ruleJSON {
	p := r.Pattern
	if len(p) > maxPatternShown {
		cut := maxPatternShown
		for cut > maxPatternShown-utf8.UTFMax+1 && !utf8.RuneStart(p[cut]) {
			cut-- // not into a run of bytes that are not UTF-8
		}
		p = p[:cut] + "…"
	}
	return ruleJSON{Allow: r.Allow, Pattern: p, Line: r.Line}
}

func (s *server) check(ctx context.Context, req *checkRequest) (*checkResponse, error) {
	if err := checkBody("robots", req.Robots); err != nil {
		return nil, err
	}
	cases, err := newTestCases(req.URLs, req.Agents)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, maxCheckWork)
	defer cancel()
	results, err := cases.verdicts(ctx, policy.Parse([]byte(req.Robots)))
	if err != nil {
		return nil, err
	}
	return &checkResponse{Results: results}, nil
}

// checkBody refuses a robots.txt text longer than the commands read.
func checkBody(field, text string) error {
	if len(text) > maxRead {
		return badRequest("%s: %d bytes, more than the %d read", field, len(text), maxRead)
	}
	return nil
}

// testCases are the URLs and agents a page tests a robots.txt with.
type testCases struct {
	urls   []string
	parsed []*url.URL // nil where the URL is not valid
	errs   []string   // why, where it is not
	agents []string
	tokens []string
}

// newTestCases reads the URL and agent lists of a request; blank entries
// are skipped.
func newTestCases(urls, agents []string) (*testCases, error) {
	tc := &testCases{}
	for _, raw := range urls {
		raw = strings.TrimSpace(raw)
		if raw == "" {
			continue
		}
		u, err := testURL(raw)
		tc.urls = append(tc.urls, raw)
		tc.parsed = append(tc.parsed, u)
		msg := ""
		if err != nil {
			msg = err.Error()
		}
		tc.errs = append(tc.errs, msg)
	}
	for _, a := range agents {
		a = strings.TrimSpace(a)
		if a == "" {
			continue
		}
		tc.agents = append(tc.agents, a)
		tc.tokens = append(tc.tokens, agentToken(a))
	}
	switch {
	case len(tc.urls) > maxURLs:
		return nil, badRequest("%d URLs, more than %d", len(tc.urls), maxURLs)
	case len(tc.agents) > maxAgents:
		return nil, badRequest("%d agents, more than %d", len(tc.agents), maxAgents)
	case len(tc.agents) == 0 && len(tc.urls) > 0:
		return nil, badRequest("no agents: give at least one product token or User-Agent")
	case len(tc.urls)*len(tc.agents) > maxChecks:
		return nil, badRequest("%d URLs times %d agents are %d checks, more than %d", len(tc.urls), len(tc.agents), len(tc.urls)*len(tc.agents), maxChecks)
	}
	return tc, nil
}

// agentToken is the product token robots.txt is matched with for an
// agent given as a token or a full User-Agent.
func agentToken(agent string) string {
	return policy.ProductToken(agent)
}

// testURL parses a URL to test: an absolute http or https URL with a
// host, or a path (with its query) of the site the robots.txt is for.
func testURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, badRequest("not a valid URL")
	}
	switch {
	case (u.Scheme == "http" || u.Scheme == "https") && u.Opaque == "" && u.Hostname() != "":
		return u, nil
	case u.Scheme == "" && u.Host == "" && strings.HasPrefix(raw, "/") && !strings.HasPrefix(raw, "//"):
		return u, nil
	}
	return nil, badRequest("not an absolute http or https URL, nor a path starting with /")
}

// verdicts returns the verdict of r for every URL and agent. It stops
// when ctx ends (the client went away, or maxCheckWork ran out) with an
// error that says how far it got.
func (tc *testCases) verdicts(ctx context.Context, r *policy.Robots) ([]verdict, error) {
	out := make([]verdict, 0, len(tc.urls)*len(tc.agents))
	for i, raw := range tc.urls {
		for j, agent := range tc.agents {
			if err := ctx.Err(); err != nil {
				if errors.Is(err, context.DeadlineExceeded) {
					return nil, badRequest("the checks took more than %v (%d of %d done): ask for fewer URLs or agents, or shorter ones",
						maxCheckWork, len(out), len(tc.urls)*len(tc.agents))
				}
				return nil, err
			}
			v := verdict{URL: raw, Agent: agent, Token: tc.tokens[j]}
			if tc.parsed[i] == nil {
				v.Error = tc.errs[i]
			} else {
				v.fill(r.Explain(tc.tokens[j], tc.parsed[i]))
			}
			out = append(out, v)
		}
	}
	return out, nil
}

// fill sets the verdict from a policy.Decision.
func (v *verdict) fill(d policy.Decision) {
	v.Allowed = d.Allowed
	v.Why = d.String()
	v.Group = d.Group.String()
	v.GroupAgent = d.Agent
	v.Exempt = d.Exempt
	if d.Rule != nil {
		rj := toRuleJSON(*d.Rule)
		v.Rule = &rj
	}
}

// A diffRequest compares two versions of a robots.txt on the same URLs
// and agents (POST /api/diff).
type diffRequest struct {
	Current string   `json:"current"`
	Draft   string   `json:"draft"`
	URLs    []string `json:"urls"`
	Agents  []string `json:"agents"`
}

// A diffResponse lists the URL and agent pairs whose verdict differs,
// and how many pairs were compared.
type diffResponse struct {
	Compared int          `json:"compared"`
	Changes  []diffChange `json:"changes"`
}

type diffChange struct {
	URL    string  `json:"url"`
	Agent  string  `json:"agent"`
	Before verdict `json:"before"` // under current
	After  verdict `json:"after"`  // under draft
}

func (s *server) diff(ctx context.Context, req *diffRequest) (*diffResponse, error) {
	if err := checkBody("current", req.Current); err != nil {
		return nil, err
	}
	if err := checkBody("draft", req.Draft); err != nil {
		return nil, err
	}
	cases, err := newTestCases(req.URLs, req.Agents)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, maxCheckWork)
	defer cancel()
	before, err := cases.verdicts(ctx, policy.Parse([]byte(req.Current)))
	if err != nil {
		return nil, err
	}
	after, err := cases.verdicts(ctx, policy.Parse([]byte(req.Draft)))
	if err != nil {
		return nil, err
	}
	resp := &diffResponse{Changes: []diffChange{}}
	for i := range before {
		if before[i].Error != "" {
			continue
		}
		resp.Compared++
		if before[i].Allowed != after[i].Allowed {
			resp.Changes = append(resp.Changes, diffChange{URL: before[i].URL, Agent: before[i].Agent, Before: before[i], After: after[i]})
		}
	}
	return resp, nil
}
