package browsertest

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// newBrowser starts a headless Chromium and returns its context, ended
// with the test.
func newBrowser(t *testing.T) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium(t)),
		chromedp.NoSandbox, // containers and CI run as root
		chromedp.DisableGPU,
		chromedp.WindowSize(1400, 1500),
	)
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancel)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(cancel)
	ctx, cancel = context.WithTimeout(ctx, 90*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// TestServeShareLink: "Copy a link to this page" makes a link whose
// fragment (never sent to the server) carries the draft, site, URLs and
// agents; opened in another tab, it fills the page in and the verdicts
// follow. A live fetch the server answers 502 (robots.txt unreachable)
// still shows what it means.
func TestServeShareLink(t *testing.T) {
	base := startServe(t)
	ctx := newBrowser(t)
	const shared = "User-agent: *\nDisallow: /private/\n\nUser-agent: Shared\nDisallow: /\n"
	sharedURLs := "https://example.org/private/a\nhttps://example.org/open"
	sharedAgents := "Shared\nOtherBot"
	idle := func(rows int) chromedp.Action {
		return chromedp.Poll(fmt.Sprintf(
			`document.body.dataset.busy === "false" && document.querySelectorAll("#verdict-rows tr").length === %d`, rows),
			nil, chromedp.WithPollingInterval(50*time.Millisecond))
	}
	set := func(sel, text string) chromedp.Action {
		return chromedp.Evaluate(fmt.Sprintf(`(() => { const e = document.querySelector(%q); e.value = %q; e.dispatchEvent(new Event("input")); })()`, sel, text), nil)
	}
	var link, status string
	if err := chromedp.Run(ctx,
		chromedp.Navigate(base),
		chromedp.WaitVisible("#robots", chromedp.ByQuery),
		idle(10),
		set("#robots", shared),
		set("#urls", sharedURLs),
		set("#agents", sharedAgents),
		set("#site", "https://example.org"),
		idle(4),
		chromedp.Click("#share-button", chromedp.ByQuery),
		chromedp.Poll(`document.getElementById("share-link").value !== ""`, nil, chromedp.WithPollingInterval(50*time.Millisecond)),
		chromedp.Value("#share-link", &link, chromedp.ByQuery),
		chromedp.Text("#share-status", &status, chromedp.ByQuery),
	); err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(link)
	if err != nil {
		t.Fatal(err)
	}
	frag, _ := url.ParseQuery(u.Fragment)
	if u.Scheme+"://"+u.Host+"/" != base || u.Path != "/" || u.RawQuery != "" || frag.Get("draft") != shared ||
		frag.Get("urls") != sharedURLs || frag.Get("agents") != sharedAgents || frag.Get("site") != "https://example.org" {
		t.Errorf("shared link %q: want %s with the draft, site, URLs and agents in its fragment only", link, base)
	}
	if !strings.Contains(status, "never sent to a server") {
		t.Errorf("share status = %q", status)
	}

	// The link opened in another tab: the page as it was shared.
	tab, cancel := chromedp.NewContext(ctx)
	defer cancel()
	var got struct {
		Draft, URLs, Agents, Site, Status string
		Rows                              [][]string
	}
	if err := chromedp.Run(tab,
		chromedp.Navigate(link),
		chromedp.WaitVisible("#robots", chromedp.ByQuery),
		idle(4),
		chromedp.Evaluate(`({
			Draft: document.getElementById("robots").value,
			URLs: document.getElementById("urls").value,
			Agents: document.getElementById("agents").value,
			Site: document.getElementById("site").value,
			Status: document.getElementById("fetch-status").innerText,
			Rows: [...document.querySelectorAll("#verdict-rows tr")].map(tr => [tr.cells[0].innerText, tr.cells[1].innerText.split("\n")[0], tr.cells[2].innerText]),
		})`, &got),
	); err != nil {
		t.Fatal(err)
	}
	wantRows := [][]string{
		{"https://example.org/private/a", "Shared", "DISALLOWED"},
		{"https://example.org/private/a", "OtherBot", "DISALLOWED"},
		{"https://example.org/open", "Shared", "DISALLOWED"},
		{"https://example.org/open", "OtherBot", "ALLOWED"},
	}
	if got.Draft != shared || got.URLs != sharedURLs || got.Agents != sharedAgents || got.Site != "https://example.org" ||
		!reflect.DeepEqual(got.Rows, wantRows) || !strings.Contains(got.Status, "Opened from a link") {
		t.Errorf("the shared link opened: %+v\nwant the shared fields and verdicts %q", got, wantRows)
	}

	// A robots.txt that answers 503: /api/fetch answers 502 with the
	// state, and the page says what it means.
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "down", http.StatusServiceUnavailable)
	}))
	defer down.Close()
	if err := chromedp.Run(tab,
		set("#site", down.URL),
		chromedp.Click("#fetch-button", chromedp.ByQuery),
		chromedp.Poll(`document.getElementById("fetch-status").innerText.includes("503")`, nil, chromedp.WithPollingInterval(50*time.Millisecond)),
		chromedp.Text("#fetch-status", &status, chromedp.ByQuery),
	); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(status, "unreachable") || !strings.Contains(status, "everything is disallowed") {
		t.Errorf("after fetching a robots.txt that answers 503: status %q, want what RFC 9309 makes of it", status)
	}
}
