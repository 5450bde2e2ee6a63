package browsertest

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/robotsmw/robotsmw/policy"
)

// draft is typed into the editor: line 6 is a lint error (a rule path
// without its leading '/'), line 9 a warning (a misspelt key).
const draft = `# Draft robots.txt for https://shop.example
User-agent: *
Disallow: /cart/
Allow: /cart/help
Disallow: /search
Disallow: tmp/

User-agent: Googlebot
Disalow: /experiments/
Disallow: /search$
Crawl-delay: 4
Sitemap: https://shop.example/sitemap.xml
`

// current is the version the draft is compared with.
const current = `User-agent: *
Disallow: /cart/
Disallow: /search
`

var testURLs = []string{"https://shop.example/cart/checkout", "https://shop.example/cart/help/returns", "https://shop.example/search"}
var testAgents = []string{"Googlebot/2.1", "ExampleBot"}

// chromium returns the path of a Chromium (or Chrome) binary, or skips
// the test when there is none, except in CI, which must have one.
func chromium(t *testing.T) string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "headless-shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("CI is set but no Chromium was found: .ci/run installs Debian's chromium package; the browser test must not be skipped in CI")
	}
	t.Skip("Chromium not found, so the browser test of robotstxt serve is skipped: install it (apt-get install chromium) to run it")
	return ""
}

// startServe builds the robotstxt command, starts "robotstxt serve" on a
// free loopback port and returns the page's URL; the server is stopped
// as Ctrl-C stops it when the test ends.
func startServe(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "robotstxt")
	build := exec.Command("go", "build", "-o", bin, "./cmd/robotstxt")
	build.Dir = "../../.." // the robotsmw module
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/robotstxt: %v\n%s", err, out)
	}
	// Without -allow-private: the live fetch below reaches the loopback
	// test site because it is the site typed into the page.
	cmd := exec.Command(bin, "serve", "-addr", "127.0.0.1:0")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		// Interrupted, as every command: exit status 130.
		if err := cmd.Wait(); cmd.ProcessState.ExitCode() != 130 {
			t.Errorf("robotstxt serve after Ctrl-C: %v; stderr %q", err, stderr.String())
		}
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	const prefix = "robotstxt serve: listening on "
	if err != nil || !strings.HasPrefix(line, prefix+"http://127.0.0.1:") {
		t.Fatalf("robotstxt serve printed %q (%v), stderr %q", line, err, stderr.String())
	}
	return strings.TrimSpace(strings.TrimPrefix(line, prefix))
}

// TestServePage loads the page in headless Chromium, types a robots.txt,
// URLs and agents, and checks the verdict table against policy, the
// highlighted deciding line (by mouse and by keyboard), the lint markers
// and the diff; it saves a screenshot.
func TestServePage(t *testing.T) {
	execPath := chromium(t)
	base := startServe(t)

	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(execPath),
		chromedp.NoSandbox, // containers and CI run as root
		chromedp.DisableGPU,
		chromedp.WindowSize(1400, 1500),
		chromedp.Flag("lang", "en-US"),
	)
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancel()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancel = context.WithTimeout(ctx, 90*time.Second)
	defer cancel()

	// Script errors and console errors (a Content-Security-Policy
	// violation is one) fail the test.
	var pageErrors []string
	chromedp.ListenTarget(ctx, func(ev any) {
		switch ev := ev.(type) {
		case *runtime.EventExceptionThrown:
			pageErrors = append(pageErrors, "exception: "+ev.ExceptionDetails.Error())
		case *cdplog.EventEntryAdded:
			// Content-Security-Policy violations and failed loads land here.
			if ev.Entry.Level == cdplog.LevelError {
				pageErrors = append(pageErrors, fmt.Sprintf("%s: %s %s", ev.Entry.Source, ev.Entry.Text, ev.Entry.URL))
			}
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.APITypeError {
				var args []string
				for _, a := range ev.Args {
					args = append(args, string(a.Value)+a.Description)
				}
				pageErrors = append(pageErrors, "console error: "+strings.Join(args, " "))
			}
		}
	})

	// idle waits until the page has shown the answers to what was typed.
	idle := func(rows int) chromedp.Action {
		return chromedp.Poll(fmt.Sprintf(
			`document.body.dataset.busy === "false" && document.querySelectorAll("#verdict-rows tr").length === %d`, rows),
			nil, chromedp.WithPollingInterval(50*time.Millisecond))
	}
	// typeInto empties a text area and types text into it, key by key.
	typeInto := func(sel, text string) chromedp.Action {
		return chromedp.Tasks{
			chromedp.Evaluate(fmt.Sprintf(`document.querySelector(%q).value = ""`, sel), nil),
			chromedp.SendKeys(sel, text, chromedp.ByQuery),
		}
	}
	var canonicals []string
	if err := chromedp.Run(ctx,
		cdplog.Enable(),
		chromedp.Navigate(base),
		chromedp.WaitVisible("#robots", chromedp.ByQuery),
		idle(10), // the example the page opens with
		chromedp.Evaluate(`[...document.querySelectorAll("#clean-params li.canonical")].map(li => li.innerText)`, &canonicals),
		typeInto("#robots", draft),
		typeInto("#urls", strings.Join(testURLs, "\n")),
		typeInto("#agents", strings.Join(testAgents, "\n")),
		idle(len(testURLs)*len(testAgents)),
	); err != nil {
		t.Fatal(err)
	}

	// The example's Clean-param line and its test URL's canonical form,
	// as policy.Robots.Canonical gives it.
	if want := []string{"https://example.com/search?q=robots&utm_source=news → https://example.com/search?q=robots"}; !reflect.DeepEqual(canonicals, want) {
		t.Errorf("canonical forms of the example's URLs = %q, want %q", canonicals, want)
	}

	// The typed text arrived as typed (line breaks included).
	var typed string
	if err := chromedp.Run(ctx, chromedp.Value("#robots", &typed, chromedp.ByQuery)); err != nil {
		t.Fatal(err)
	}
	if typed != draft {
		t.Fatalf("the editor holds %q, want %q", typed, draft)
	}

	// The verdict table says what policy says, with the deciding line.
	var rows [][]string
	if err := chromedp.Run(ctx, chromedp.Evaluate(
		`[...document.querySelectorAll("#verdict-rows tr")].map(tr => [...tr.cells].map(td => td.innerText.trim()))`, &rows)); err != nil {
		t.Fatal(err)
	}
	r := policy.Parse([]byte(draft))
	var want [][]string
	for _, raw := range testURLs {
		for _, agent := range testAgents {
			token := policy.ProductToken(agent)
			d := r.Explain(token, mustURL(t, raw))
			verdict := "DISALLOWED"
			if d.Allowed {
				verdict = "ALLOWED"
			}
			group := d.Agent
			if group == "*" {
				group = "* (global)"
			}
			rule := "no rule matched"
			if d.Rule != nil {
				rule = d.Rule.String() // "line 3: disallow: /cart/"
			}
			agentCell := agent
			if token != agent {
				agentCell += "\ntoken " + token
			}
			want = append(want, []string{raw, agentCell, verdict, group, rule})
		}
	}
	if !reflect.DeepEqual(rows, want) {
		t.Errorf("verdict table =\n%q\nwant (policy's)\n%q", rows, want)
	}
	// Spot checks that do not rest on the test's own reading of policy.
	if got := rows[1]; got[2] != "DISALLOWED" || got[4] != "line 3: disallow: /cart/" {
		t.Errorf("row 2 (cart checkout, ExampleBot) = %q, want DISALLOWED by line 3", got)
	}
	if got := rows[4]; got[2] != "DISALLOWED" || got[3] != "Googlebot" || got[4] != "line 10: disallow: /search$" {
		t.Errorf("row 5 (search, Googlebot) = %q, want DISALLOWED by line 10 of group Googlebot", got)
	}

	var lineInfo string
	// highlighted returns the editor's highlighted line, in the backdrop
	// and the gutter, the selected row and where keyboard focus is.
	type highlight struct {
		Backdrop, Gutter []string
		Selected         int
		Focus            string
		Selection        string
	}
	highlighted := func() highlight {
		t.Helper()
		var h highlight
		if err := chromedp.Run(ctx, chromedp.Evaluate(`({
			Backdrop: [...document.querySelectorAll("#backdrop-inner .bl.hl")].map(e => e.dataset.line),
			Gutter: [...document.querySelectorAll("#gutter-inner .ln.hl")].map(e => e.dataset.line),
			Selected: [...document.querySelectorAll("#verdict-rows tr")].findIndex(tr => tr.classList.contains("selected")),
			Focus: document.activeElement.id,
			Selection: document.activeElement.id === "robots" ?
				document.activeElement.value.substring(document.activeElement.selectionStart, document.activeElement.selectionEnd) : "",
		})`, &h)); err != nil {
			t.Fatal(err)
		}
		return h
	}

	// Clicking row 5 highlights line 10 in the editor and jumps there.
	if err := chromedp.Run(ctx, chromedp.Click("#verdict-rows tr:nth-child(5)", chromedp.ByQuery)); err != nil {
		t.Fatal(err)
	}
	if h := highlighted(); !reflect.DeepEqual(h, highlight{[]string{"10"}, []string{"10"}, 4, "robots", "Disallow: /search$"}) {
		t.Errorf("after a click on row 5: %+v, want line 10 highlighted, selected and focused", h)
	}
	if err := chromedp.Run(ctx, chromedp.Text("#line-info", &lineInfo, chromedp.ByQuery)); err != nil {
		t.Fatal(err)
	}
	if lineInfo != "Line 10 decides 1 verdict of the table." {
		t.Errorf("under the editor after a click on row 5: %q", lineInfo)
	}
	// The keyboard does the same: focus row 2, Enter.
	if err := chromedp.Run(ctx,
		chromedp.Focus("#verdict-rows tr:nth-child(1)", chromedp.ByQuery),
		chromedp.KeyEvent(kb.ArrowDown),
		// A browser sends no character for a key whose keydown the page
		// handled (preventDefault); KeyEvent would send one.
		input.DispatchKeyEvent(input.KeyRawDown).WithKey("Enter").WithCode("Enter").WithWindowsVirtualKeyCode(13),
		input.DispatchKeyEvent(input.KeyUp).WithKey("Enter").WithCode("Enter").WithWindowsVirtualKeyCode(13),
	); err != nil {
		t.Fatal(err)
	}
	if h := highlighted(); !reflect.DeepEqual(h, highlight{[]string{"3"}, []string{"3"}, 1, "robots", "Disallow: /cart/"}) {
		t.Errorf("after ArrowDown and Enter on row 1: %+v, want line 3 highlighted, selected and focused", h)
	}

	// Lint: a marker at each line Lint reports, with its severity, and the
	// list with message, hint and counts.
	var marks map[string]string
	var items []string
	var counts string
	if err := chromedp.Run(ctx,
		chromedp.Evaluate(`Object.fromEntries([...document.querySelectorAll("#gutter-inner .mark.error, #gutter-inner .mark.warning")]
			.map(m => [m.parentElement.dataset.line, m.classList.contains("error") ? "error" : "warning"]))`, &marks),
		chromedp.Evaluate(`[...document.querySelectorAll("#lint-list li")].map(li => li.innerText)`, &items),
		chromedp.Text("#lint-counts", &counts, chromedp.ByQuery),
	); err != nil {
		t.Fatal(err)
	}
	wantMarks := map[string]string{}
	var errs, warnings int
	for _, d := range policy.Lint([]byte(draft)) {
		wantMarks[fmt.Sprint(d.Line)] = d.Severity.String()
		if d.Severity == policy.SeverityError {
			errs++
		} else {
			warnings++
		}
	}
	if !reflect.DeepEqual(marks, wantMarks) || marks["6"] != "error" || marks["9"] != "warning" {
		t.Errorf("lint markers in the gutter = %v, want %v (line 6 an error, line 9 a warning)", marks, wantMarks)
	}
	if len(items) != errs+warnings || !strings.Contains(items[0], "line 6") || !strings.Contains(items[0], `disallow path "tmp/"`) ||
		!strings.Contains(items[0], "Fix: start the path with '/'") {
		t.Errorf("lint list = %q", items)
	}
	if want := fmt.Sprintf("Lint: %d error, %d warning.", errs, warnings); counts != want {
		t.Errorf("lint counts = %q, want %q", counts, want)
	}

	// The lint list's "line 6" jumps to the line, and under the editor the
	// caret's line shows its diagnostic with the fix.
	if err := chromedp.Run(ctx,
		chromedp.Click(`#lint-list li.error button[data-line="6"]`, chromedp.ByQuery),
		chromedp.Text("#line-info", &lineInfo, chromedp.ByQuery),
	); err != nil {
		t.Fatal(err)
	}
	if h := highlighted(); h.Focus != "robots" || h.Selection != "Disallow: tmp/" ||
		!strings.Contains(lineInfo, `Line 6: ERROR disallow path "tmp/"`) || !strings.Contains(lineInfo, "Fix: start the path with '/'") {
		t.Errorf("after a click on the lint list's line 6: %+v, under the editor %q", h, lineInfo)
	}

	// Diff: the current version typed in, the URLs whose verdict changes.
	var diffRows [][]string
	if err := chromedp.Run(ctx,
		typeInto("#current", current),
		chromedp.Poll(`document.body.dataset.busy === "false" && document.querySelectorAll("#diff-rows tr").length > 0`, nil,
			chromedp.WithPollingInterval(50*time.Millisecond)),
		chromedp.Evaluate(`[...document.querySelectorAll("#diff-rows tr")].map(tr => [...tr.cells].map(td => td.innerText.split("\n")[0]))`, &diffRows),
	); err != nil {
		t.Fatal(err)
	}
	// Googlebot leaves the '*' group for its own, where /cart/ is not
	// disallowed; /cart/help opens to everyone.
	wantDiff := [][]string{
		{"https://shop.example/cart/checkout", "Googlebot/2.1", "DISALLOWED", "ALLOWED"},
		{"https://shop.example/cart/help/returns", "Googlebot/2.1", "DISALLOWED", "ALLOWED"},
		{"https://shop.example/cart/help/returns", "ExampleBot", "DISALLOWED", "ALLOWED"},
	}
	if !reflect.DeepEqual(diffRows, wantDiff) {
		t.Errorf("diff rows = %q, want %q", diffRows, wantDiff)
	}

	// Accessibility basics: every form control has a label.
	var unlabelled []string
	if err := chromedp.Run(ctx, chromedp.Evaluate(
		`[...document.querySelectorAll("input, textarea, select, button")].filter(e =>
			!(e.labels && e.labels.length) && !e.getAttribute("aria-label") && !e.innerText.trim()).map(e => e.id || e.outerHTML)`,
		&unlabelled)); err != nil {
		t.Fatal(err)
	}
	if len(unlabelled) > 0 {
		t.Errorf("controls without a label: %q", unlabelled)
	}
	// Readable contrast: every visible text against the background it
	// stands on, at least 4.5:1 (WCAG 2 AA for normal text).
	var lowContrast []string
	if err := chromedp.Run(ctx, chromedp.Evaluate(contrastScript, &lowContrast)); err != nil {
		t.Fatal(err)
	}
	if len(lowContrast) > 0 {
		t.Errorf("text with a contrast below 4.5:1: %q", lowContrast)
	}

	// Back to row 5 for the screenshot, scrolled to the top.
	var png []byte
	if err := chromedp.Run(ctx,
		chromedp.Click("#verdict-rows tr:nth-child(5)", chromedp.ByQuery),
		chromedp.Evaluate(`window.scrollTo(0, 0)`, nil),
		chromedp.FullScreenshot(&png, 100),
	); err != nil {
		t.Fatal(err)
	}
	shot := os.Getenv("BROWSERTEST_SCREENSHOT")
	if shot == "" {
		shot = filepath.Join(os.TempDir(), "robotstxt-serve.png")
	}
	if err := os.WriteFile(shot, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot of the page: %s", shot)

	// A long file pasted (set, then an input event, as a paste does): the
	// deciding line far down is highlighted and scrolled to; the editor
	// draws only the lines in view.
	var long strings.Builder
	long.WriteString("User-agent: *\n")
	for k := range 1000 {
		fmt.Fprintf(&long, "Disallow: /d%d\n", k)
	}
	var far struct {
		Backdrop []string
		Drawn    int
		Scrolled bool
	}
	if err := chromedp.Run(ctx,
		chromedp.Evaluate(fmt.Sprintf(`(() => { const ta = document.getElementById("robots"); ta.value = %q; ta.dispatchEvent(new Event("input")); })()`, long.String()), nil),
		typeInto("#urls", "/d900x"),
		idle(len(testAgents)),
		chromedp.Click("#verdict-rows tr:nth-child(2)", chromedp.ByQuery),
		chromedp.Evaluate(`({
			Backdrop: [...document.querySelectorAll("#backdrop-inner .bl.hl")].map(e => e.dataset.line),
			Drawn: document.querySelectorAll("#backdrop-inner .bl").length,
			Scrolled: document.getElementById("robots").scrollTop > 0,
		})`, &far),
	); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(far.Backdrop, []string{"902"}) || !far.Scrolled || far.Drawn > 200 {
		t.Errorf("a 1,001-line file, /d900x: highlighted %q, scrolled %v, %d lines drawn; want line 902, scrolled, at most 200 drawn",
			far.Backdrop, far.Scrolled, far.Drawn)
	}

	// Load a file: upload, then a live fetch from a (loopback) site.
	upload := filepath.Join(t.TempDir(), "robots.txt")
	if err := os.WriteFile(upload, []byte("User-agent: *\nDisallow: /uploaded\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var editor, status string
	if err := chromedp.Run(ctx,
		chromedp.SetUploadFiles("#upload", []string{upload}, chromedp.ByQuery),
		chromedp.Poll(`document.getElementById("robots").value.includes("/uploaded")`, nil, chromedp.WithPollingInterval(50*time.Millisecond)),
		chromedp.Value("#robots", &editor, chromedp.ByQuery),
		chromedp.Text("#fetch-status", &status, chromedp.ByQuery),
	); err != nil {
		t.Fatal(err)
	}
	if editor != "User-agent: *\nDisallow: /uploaded\n" || !strings.Contains(status, "Loaded robots.txt") {
		t.Errorf("after the upload: editor %q, status %q", editor, status)
	}
	live := "User-agent: *\nDisallow: /live\nSitemap: /sitemap.xml\n"
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			fmt.Fprint(w, live)
		case "/sitemap.xml":
			fmt.Fprintf(w, "http://%[1]s/a\nhttp://%[1]s/b\nhttp://%[1]s/live/c\n", r.Host)
		default:
			http.NotFound(w, r)
		}
	}))
	defer site.Close()
	var currentText string
	if err := chromedp.Run(ctx,
		typeInto("#site", site.URL),
		chromedp.Click("#fetch-button", chromedp.ByQuery),
		chromedp.Poll(`document.getElementById("fetch-status").innerText.includes("200 OK")`, nil, chromedp.WithPollingInterval(50*time.Millisecond)),
		chromedp.Value("#robots", &editor, chromedp.ByQuery),
		chromedp.Value("#current", &currentText, chromedp.ByQuery),
		chromedp.Text("#fetch-status", &status, chromedp.ByQuery),
	); err != nil {
		t.Fatal(err)
	}
	if editor != live || currentText != live || !strings.Contains(status, site.URL+"/robots.txt (HTTP 200): answered 200 OK: its rules apply") {
		t.Errorf("after the live fetch: editor %q, current version %q, status %q", editor, currentText, status)
	}
	// The sitemaps it lists, fetched and counted: /live/c is disallowed.
	var sitemapStatus string
	if err := chromedp.Run(ctx,
		chromedp.Click("#sitemaps-button", chromedp.ByQuery),
		chromedp.Poll(`document.getElementById("sitemaps-status").innerText.includes("read")`, nil, chromedp.WithPollingInterval(50*time.Millisecond)),
		chromedp.Text("#sitemaps-status", &sitemapStatus, chromedp.ByQuery),
	); err != nil {
		t.Fatal(err)
	}
	if want := "1 sitemap file read (0 indexes), 2 page URLs, 0 failed; dropped: robots 1"; sitemapStatus != want {
		t.Errorf("sitemaps counted: %q, want %q", sitemapStatus, want)
	}

	if len(pageErrors) > 0 {
		t.Errorf("the page reported errors:\n%s", strings.Join(pageErrors, "\n"))
	}
}

func mustURL(t *testing.T, raw string) *url.URL {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// contrastScript returns the visible texts of the page whose colour
// contrasts less than 4.5:1 with the first opaque background behind them
// (WCAG 2 relative luminance; the page's colours are all opaque).
const contrastScript = `(() => {
	const lum = (css) => {
		const p = css.match(/rgba?\(([^)]+)\)/)[1].split(",").map(Number);
		const [r, g, b] = p.slice(0, 3).map((v) => {
			v /= 255;
			return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
		});
		return { l: 0.2126 * r + 0.7152 * g + 0.0722 * b, a: p.length > 3 ? p[3] : 1 };
	};
	const background = (e) => {
		for (; e; e = e.parentElement) {
			const c = lum(getComputedStyle(e).backgroundColor);
			if (c.a > 0) return c.l;
		}
		return 1; // the canvas: white
	};
	const low = [];
	const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
	for (let n; (n = walk.nextNode()); ) {
		const e = n.parentElement;
		if (!n.textContent.trim() || e.getClientRects().length === 0 || e.closest(".skip")) continue;
		const fg = lum(getComputedStyle(e).color).l;
		const bg = background(e);
		const ratio = (Math.max(fg, bg) + 0.05) / (Math.min(fg, bg) + 0.05);
		if (ratio < 4.5) low.push(e.tagName + "." + e.className + " " + JSON.stringify(n.textContent.trim().slice(0, 40)) + " " + ratio.toFixed(2));
	}
	return low;
})()`
