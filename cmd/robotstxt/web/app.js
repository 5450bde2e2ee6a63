// robotstxt serve: the page. Every verdict, diagnostic and summary comes
// from the JSON API (the policy package on the server); this script only
// sends the texts and shows the answers. No framework, no build step.
'use strict';

(() => {
  const $ = (id) => document.getElementById(id);
  const robots = $('robots');
  const urls = $('urls');
  const agents = $('agents');
  const current = $('current');
  const site = $('site');
  const LINE_HEIGHT = 20; // px, as --lh in style.css
  const DEBOUNCE_MS = 300;
  const MAX_LISTED = 300; // diagnostics and groups listed; the rest are counted
  const MAX_RULES = 50; // rules listed per group

  const exampleRobots = [
    '# Draft robots.txt for https://example.com',
    'User-agent: *',
    'Disallow: /private/',
    'Allow: /private/press/',
    'Disallow: /search',
    'Crawl-delay: 2',
    '',
    'User-agent: Googlebot',
    'Disallow: /drafts/',
    'Disalow: /tmp/',
    'Disallow: cgi-bin/',
    '',
    'Clean-param: utm_source&utm_medium /',
    'Sitemap: https://example.com/sitemap.xml',
    'Sitemap: /news-sitemap.xml',
    '',
  ].join('\n');
  const exampleURLs = [
    'https://example.com/',
    'https://example.com/private/report.pdf',
    'https://example.com/private/press/launch.html',
    'https://example.com/search?q=robots&utm_source=news',
    'https://example.com/drafts/new.html',
  ].join('\n');
  const exampleAgents = ['Googlebot', 'ExampleBot/2.1 (+https://example.org/bot)'].join('\n');

  // State of the page, all in memory.
  let diagsByLine = new Map(); // line -> diagnostics
  let lastSummary = null;
  let lastResults = [];
  let selectedKey = null; // url + '\n' + agent of the selected verdict row
  let highlightLine = 0; // the deciding line, highlighted in the editor
  let groupLines = []; // the User-agent lines of the selected row's group
  let rendered = { n: 0, first: 1, last: 0 }; // lines drawn in gutter and backdrop
  let fetched = null; // {site, robotsUrl} of the last live fetch
  let controller = null;
  let timer = 0;
  let timerPending = false; // a refresh is scheduled and has not started
  let generation = 0;

  // el builds an element; strings become text nodes, never HTML.
  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === 'class') e.className = v;
      else if (k === 'text') e.textContent = v;
      else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
      else e.setAttribute(k, v);
    }
    for (const c of children) if (c !== null && c !== undefined) e.append(c);
    return e;
  }

  function list(ta) {
    return ta.value.split('\n').map((s) => s.trim()).filter((s) => s !== '');
  }

  // api posts body to the API and returns its answer; an answer that is
  // not 2xx is thrown as an error, unless withState and it holds a state
  // (/api/fetch answers 502 or 403 for a robots.txt it could not fetch).
  async function api(path, body, signal, withState) {
    const resp = await fetch(path, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
      signal,
    });
    let data;
    try {
      data = await resp.json();
    } catch (e) {
      data = { error: `${resp.status} ${resp.statusText}` };
    }
    if (!resp.ok && !(withState && data.state)) throw new Error(data.error || `${resp.status} ${resp.statusText}`);
    return data;
  }

  // ---- The shareable link: the draft, site, URLs and agents travel in
  // the URL's fragment (#...), which the browser never sends to the
  // server, so what is typed stays out of server logs.

  const SHARED = ['site', 'draft', 'urls', 'agents'];

  function shareLink() {
    const p = new URLSearchParams();
    p.set('site', site.value.trim());
    p.set('draft', robots.value);
    p.set('urls', urls.value);
    p.set('agents', agents.value);
    return `${location.origin}${location.pathname}#${p.toString()}`;
  }

  // applyFragment fills the page in from a link's fragment; it reports
  // whether the fragment held any of the shared fields.
  function applyFragment() {
    const p = new URLSearchParams(location.hash.replace(/^#/, ''));
    if (!SHARED.some((k) => p.has(k))) return false;
    if (p.has('site')) site.value = p.get('site');
    if (p.has('draft')) robots.value = p.get('draft');
    if (p.has('urls')) urls.value = p.get('urls');
    if (p.has('agents')) agents.value = p.get('agents');
    fetched = null;
    setStatus('fetch-status', 'Opened from a link: the draft, site, URLs and agents it carries.');
    return true;
  }

  function setStatus(id, text, isError) {
    const p = $(id);
    p.textContent = text;
    p.classList.toggle('error', !!isError);
  }

  function plural(n, word, words) {
    return `${n} ${n === 1 ? word : words || `${word}s`}`;
  }

  // siteBase is the URL the draft stands for: the live file fetched for
  // the site typed, or the site typed; '' when there is none.
  function siteBase() {
    const s = site.value.trim();
    if (fetched && fetched.site === s) return fetched.robotsUrl;
    return /^https?:\/\/[^/]/i.test(s) ? s : '';
  }

  // ---- The editor: gutter and backdrop follow the textarea.

  // lineCount counts the editor's lines without splitting its text.
  function lineCount() {
    const v = robots.value;
    let n = 1;
    for (let i = v.indexOf('\n'); i >= 0; i = v.indexOf('\n', i + 1)) n++;
    return n;
  }

  // renderEditor draws the gutter and the backdrop for the lines in view
  // (and a margin), so that a file of 30,000 lines costs what a short one
  // does; scrolling draws again.
  function renderEditor() {
    const n = lineCount();
    const margin = 30;
    const first = Math.max(1, Math.floor(robots.scrollTop / LINE_HEIGHT) + 1 - margin);
    const last = Math.min(n, first + Math.ceil(robots.clientHeight / LINE_HEIGHT) + 2 * margin);
    const gutter = document.createDocumentFragment();
    const back = document.createDocumentFragment();
    for (let i = first; i <= last; i++) {
      const diags = diagsByLine.get(i);
      let sev = '';
      if (diags) sev = diags.some((d) => d.severity === 'error') ? 'error' : 'warning';
      const mark = el('span', { class: sev ? `mark ${sev}` : 'mark' });
      if (sev) {
        mark.textContent = sev === 'error' ? '✖' : '▲';
        mark.title = diags.map((d) => `${d.severity}: ${d.message}`).join('\n');
      }
      const ln = el('div', { class: 'ln', 'data-line': String(i) }, mark, String(i));
      const bl = el('div', { class: 'bl', 'data-line': String(i) });
      if (sev) bl.classList.add(`lint-${sev}`);
      if (groupLines.includes(i)) bl.classList.add('group');
      if (i === highlightLine) {
        ln.classList.add('hl');
        bl.classList.add('hl');
      }
      gutter.append(ln);
      back.append(bl);
    }
    $('gutter-inner').replaceChildren(gutter);
    $('backdrop-inner').replaceChildren(back);
    rendered = { n, first, last };
    syncScroll();
  }

  function syncScroll() {
    const y = `translateY(${(rendered.first - 1) * LINE_HEIGHT - robots.scrollTop}px)`;
    $('gutter-inner').style.transform = y;
    $('backdrop-inner').style.transform = y;
  }

  function onScroll() {
    const top = Math.floor(robots.scrollTop / LINE_HEIGHT) + 1;
    const bottom = top + Math.ceil(robots.clientHeight / LINE_HEIGHT);
    if ((top < rendered.first && rendered.first > 1) || (bottom > rendered.last && rendered.last < rendered.n)) renderEditor();
    else syncScroll();
  }

  // jumpTo scrolls the editor to a line and, with focus, selects it.
  function jumpTo(line, focus) {
    const ls = robots.value.split('\n');
    if (line < 1 || line > ls.length) return;
    let start = 0;
    for (let i = 0; i < line - 1; i++) start += ls[i].length + 1;
    if (focus) {
      robots.focus({ preventScroll: true });
      robots.setSelectionRange(start, start + ls[line - 1].length);
      renderLineInfo();
    }
    const top = (line - 1) * LINE_HEIGHT;
    if (top < robots.scrollTop || top + LINE_HEIGHT > robots.scrollTop + robots.clientHeight - 16) {
      robots.scrollTop = Math.max(0, top - robots.clientHeight / 3);
    }
    onScroll();
  }

  function lineButton(line, label) {
    return el('button', {
      type: 'button', class: 'linklike', 'data-line': String(line),
      onclick: () => jumpTo(line, true),
    }, label || `line ${line}`);
  }

  // caretLine is the line the editor's caret is on.
  function caretLine() {
    const v = robots.value;
    let n = 1;
    for (let i = v.indexOf('\n'); i >= 0 && i < robots.selectionStart; i = v.indexOf('\n', i + 1)) n++;
    return n;
  }

  // renderLineInfo shows, under the editor, what Lint says about the
  // caret's line and how many verdicts it decides.
  function renderLineInfo() {
    const line = caretLine();
    const info = $('line-info');
    const parts = [];
    for (const d of diagsByLine.get(line) || []) {
      parts.push(el('span', { class: `diag ${d.severity}` }, `Line ${line}: `, el('span', { class: 'sev', text: d.severity }),
        ` ${d.message}`, d.hint ? el('span', { class: 'hint', text: ` Fix: ${d.hint}` }) : null));
    }
    const decided = lastResults.filter((v) => v.rule && v.rule.line === line).length;
    if (decided) parts.push(el('span', { class: 'diag', text: `Line ${line} decides ${plural(decided, 'verdict')} of the table.` }));
    info.replaceChildren(...parts);
  }

  // ---- Verdicts.

  const keyOf = (v) => `${v.url}\n${v.agent}`;

  function ruleText(r) {
    return `${r.allow ? 'allow' : 'disallow'}: ${r.pattern}`;
  }

  function renderVerdicts(results) {
    lastResults = results;
    const rows = $('verdict-rows');
    const frag = document.createDocumentFragment();
    for (const v of results) {
      const tr = el('tr', { tabindex: '0', 'data-key': keyOf(v) });
      if (v.rule) tr.dataset.line = String(v.rule.line);
      tr.addEventListener('click', () => selectRow(v, true));
      tr.addEventListener('keydown', (ev) => {
        if (ev.key === 'Enter' || ev.key === ' ') {
          ev.preventDefault();
          selectRow(v, true);
        } else if (ev.key === 'ArrowDown' || ev.key === 'ArrowUp') {
          ev.preventDefault();
          const next = ev.key === 'ArrowDown' ? tr.nextElementSibling : tr.previousElementSibling;
          if (next) next.focus();
        }
      });
      const agentCell = el('td', { class: 'agent' }, v.agent);
      if (v.token && v.token !== v.agent) agentCell.append(el('span', { class: 'token', text: `token ${v.token}` }));
      let verdict;
      let group = '';
      let rule;
      if (v.error) {
        verdict = el('span', { class: 'badge invalid', text: 'INVALID URL' });
        rule = el('td', { class: 'rule' }, v.error);
      } else {
        verdict = el('span', { class: `badge ${v.allowed ? 'allowed' : 'disallowed'}`, text: v.allowed ? 'ALLOWED' : 'DISALLOWED' });
        group = v.group === 'none' ? 'none applies' : v.groupAgent === '*' ? '* (global)' : v.groupAgent;
        if (v.rule) {
          rule = el('td', { class: 'rule' }, `line ${v.rule.line}: ${ruleText(v.rule)}`);
        } else if (v.exempt) {
          rule = el('td', { class: 'rule' }, '/robots.txt is always allowed');
        } else {
          rule = el('td', { class: 'rule' }, v.group === 'none' ? 'no group: everything allowed' : 'no rule matched');
        }
      }
      tr.append(el('td', { class: 'url' }, v.url), agentCell, el('td', null, verdict), el('td', { class: 'group' }, group), rule);
      frag.append(tr);
    }
    rows.replaceChildren(frag);
    let sel = results.find((v) => keyOf(v) === selectedKey);
    if (!sel) sel = results.find((v) => v.rule) || results[0];
    if (sel) selectRow(sel, false);
    else {
      selectedKey = null;
      highlightLine = 0;
      groupLines = [];
      renderEditor();
    }
    const n = results.length;
    const denied = results.filter((v) => !v.error && !v.allowed).length;
    const origins = new Set();
    for (const u of list(urls)) {
      try {
        if (/^https?:\/\//i.test(u)) origins.add(new URL(u).origin);
      } catch (e) { /* the server says why it is not a URL */ }
    }
    const note = origins.size > 1
      ? ` Note: these URLs are on ${origins.size} sites; a robots.txt applies to one scheme, host and port, yet each is checked against this file.`
      : '';
    setStatus('check-status', n ? `${plural(n, 'verdict')}: ${denied} disallowed.${note}` : 'Add URLs and agents to test.');
  }

  function selectRow(v, focusEditor) {
    selectedKey = keyOf(v);
    for (const tr of $('verdict-rows').children) {
      const on = tr.dataset.key === selectedKey;
      tr.classList.toggle('selected', on);
      if (on) tr.setAttribute('aria-current', 'true');
      else tr.removeAttribute('aria-current');
    }
    highlightLine = v.rule ? v.rule.line : 0;
    groupLines = [];
    if (lastSummary && v.groupAgent) {
      const g = lastSummary.groups.find((x) => x.agent === v.groupAgent);
      if (g) groupLines = g.lines;
    }
    renderEditor();
    const target = highlightLine || groupLines[0] || 0;
    if (target) jumpTo(target, focusEditor);
  }

  // ---- Lint.

  function renderLint(lint) {
    diagsByLine = new Map();
    const frag = document.createDocumentFragment();
    for (const [i, d] of lint.diagnostics.entries()) {
      if (d.line > 0) {
        if (!diagsByLine.has(d.line)) diagsByLine.set(d.line, []);
        diagsByLine.get(d.line).push(d);
      }
      if (i === MAX_LISTED) frag.append(el('li', { text: `… and ${lint.diagnostics.length - MAX_LISTED} more, marked in the editor's margin` }));
      if (i >= MAX_LISTED) continue;
      const li = el('li', { class: d.severity, 'data-line': String(d.line) },
        d.line > 0 ? lineButton(d.line) : el('strong', { text: 'whole file' }), ' ',
        el('span', { class: 'sev', text: d.severity }), ' ', d.message, ' ',
        el('code', { text: `[${d.code}]` }));
      if (d.hint) li.append(el('span', { class: 'hint', text: `Fix: ${d.hint}` }));
      frag.append(li);
    }
    $('lint-list').replaceChildren(frag);
    $('lint-counts').textContent = lint.errors + lint.warnings === 0
      ? 'Lint: no problems found.'
      : `Lint: ${plural(lint.errors, 'error')}, ${plural(lint.warnings, 'warning')}.`;
  }

  // ---- Summary.

  function renderSummary(s) {
    lastSummary = s;
    const rows = document.createDocumentFragment();
    for (const g of s.groups.slice(0, MAX_LISTED)) {
      const rules = el('ul', { class: 'plain' });
      for (const r of g.rules.slice(0, MAX_RULES)) rules.append(el('li', null, lineButton(r.line), ` ${ruleText(r)}`));
      if (g.rules.length > MAX_RULES) rules.append(el('li', { text: `… and ${g.rules.length - MAX_RULES} more` }));
      if (!g.rules.length) rules.append(el('li', { text: 'no rules: everything allowed' }));
      const uaLines = el('td');
      g.lines.forEach((l, i) => uaLines.append(i ? ', ' : '', lineButton(l, String(l))));
      const delay = el('td', null, g.crawlDelay === undefined ? 'none' : `${g.crawlDelay} s`,
        el('span', { class: 'guard', text: g.guard }));
      rows.append(el('tr', null, el('td', { text: g.agent === '*' ? '* (global)' : g.agent }), uaLines, el('td', null, rules), delay));
    }
    if (s.groups.length > MAX_LISTED) rows.append(el('tr', null, el('td', { colspan: '4', text: `… and ${s.groups.length - MAX_LISTED} more groups` })));
    if (!s.groups.length) rows.append(el('tr', null, el('td', { colspan: '4', text: 'No User-agent line: every URL is allowed for every agent.' })));
    $('group-rows').replaceChildren(rows);

    const ag = document.createDocumentFragment();
    for (const a of s.agents) {
      const token = a.token !== a.agent ? ` (token ${a.token || 'empty'})` : '';
      ag.append(el('li', { text: `${a.agent}${token} → ${a.group ? (a.group === '*' ? 'the * group' : `group ${a.group}`) : 'no group: everything allowed'}` }));
    }
    $('agent-groups').replaceChildren(ag);

    $('clean-note').textContent = !s.cleanParams.length ? 'No Clean-param lines.'
      : s.canonicals.length ? 'Test URLs and their canonical form (the parameters these lines name removed):'
        : 'No test URL has a parameter these lines remove.';
    const cps = document.createDocumentFragment();
    for (const c of s.cleanParams) {
      cps.append(el('li', null, lineButton(c.line), ` ${c.params.join(' & ')} ${c.path ? `on paths starting with ${c.path}` : 'on every path'}`));
    }
    for (const c of s.canonicals) {
      cps.append(el('li', { class: 'canonical' }, el('code', { text: c.url }), ' → ', el('code', { text: c.canonical })));
    }
    $('clean-params').replaceChildren(cps);

    const sms = document.createDocumentFragment();
    for (const m of s.sitemaps) {
      if (m.resolved) sms.append(el('li', null, el('code', { text: m.resolved }), m.resolved !== m.value ? ` (written ${m.value})` : ''));
      else sms.append(el('li', null, el('code', { text: m.value }), ' ', el('span', { class: 'problem', text: m.problem })));
    }
    if (!s.sitemaps.length) sms.append(el('li', { text: 'No Sitemap lines.' }));
    $('sitemap-lines').replaceChildren(sms);
  }

  // ---- Diff.

  async function refreshDiff(signal) {
    if (current.value === '') {
      $('diff-summary').textContent = 'Fetch the live file, or paste the current version, to see which URLs change verdict.';
      $('diff-rows').replaceChildren();
      $('diff').hidden = true;
      return;
    }
    const d = await api('/api/diff', { current: current.value, draft: robots.value, urls: list(urls), agents: list(agents) }, signal);
    $('diff-summary').textContent = d.changes.length
      ? `${plural(d.changes.length, 'verdict')} of ${d.compared} change${d.changes.length === 1 ? 's' : ''} from the current version to the draft.`
      : `No verdict changes (${d.compared} compared).`;
    const frag = document.createDocumentFragment();
    const badge = (v) => el('span', { class: `badge ${v.allowed ? 'allowed' : 'disallowed'}`, text: v.allowed ? 'ALLOWED' : 'DISALLOWED' });
    const why = (v) => el('span', { class: 'token', text: v.rule ? `line ${v.rule.line}: ${ruleText(v.rule)}` : v.why });
    for (const c of d.changes) {
      frag.append(el('tr', null, el('td', { class: 'url', text: c.url }), el('td', { text: c.agent }),
        el('td', null, badge(c.before), why(c.before)), el('td', null, badge(c.after), why(c.after))));
    }
    $('diff-rows').replaceChildren(frag);
    $('diff').hidden = !d.changes.length;
  }

  // ---- Updates.

  function schedule() {
    clearTimeout(timer);
    document.body.dataset.busy = 'true';
    timerPending = true;
    timer = setTimeout(refresh, DEBOUNCE_MS);
  }

  async function refresh() {
    timerPending = false;
    if (controller) controller.abort();
    controller = new AbortController();
    const { signal } = controller;
    const gen = ++generation;
    const body = { robots: robots.value, urls: list(urls), agents: list(agents) };
    try {
      const [lint, summary, check] = await Promise.all([
        api('/api/lint', { robots: body.robots }, signal),
        api('/api/summary', { ...body, base: siteBase() }, signal),
        api('/api/check', body, signal),
      ]);
      renderLint(lint);
      renderSummary(summary);
      renderVerdicts(check.results);
      if (document.activeElement === robots) renderLineInfo();
      await refreshDiff(signal);
    } catch (e) {
      if (e.name === 'AbortError') return;
      setStatus('check-status', e.message, true);
    }
    if (gen === generation && !timerPending) {
      // What the page shows answers what is typed now.
      document.body.dataset.busy = 'false';
      document.body.dataset.generation = String(gen);
    }
  }

  robots.addEventListener('input', () => {
    if (lineCount() !== rendered.n) renderEditor();
    schedule();
  });
  robots.addEventListener('scroll', onScroll);
  for (const ev of ['keyup', 'click', 'focus']) robots.addEventListener(ev, renderLineInfo);
  for (const ta of [urls, agents, current]) ta.addEventListener('input', schedule);
  site.addEventListener('change', schedule);

  $('fetch-form').addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const s = site.value.trim();
    if (!s) {
      setStatus('fetch-status', 'Type a site first, such as https://example.com.', true);
      site.focus();
      return;
    }
    const button = $('fetch-button');
    button.disabled = true;
    setStatus('fetch-status', `Fetching the robots.txt of ${s}…`);
    try {
      const f = await api('/api/fetch', { url: s }, undefined, true);
      fetched = { site: s, robotsUrl: f.finalUrl || f.robotsUrl };
      const status = f.status ? ` (HTTP ${f.status})` : '';
      setStatus('fetch-status', `${f.finalUrl || f.robotsUrl}${status}: ${f.meaning}`, f.allows === 'nothing');
      if (f.allows === 'rules') {
        robots.value = f.robots;
        current.value = f.robots;
      } else if (f.allows === 'everything') {
        current.value = '';
      }
      renderEditor();
      schedule();
    } catch (e) {
      setStatus('fetch-status', e.message, true);
    } finally {
      button.disabled = false;
    }
  });

  $('upload').addEventListener('change', async (ev) => {
    const file = ev.target.files[0];
    if (!file) return;
    robots.value = await file.text();
    setStatus('fetch-status', `Loaded ${file.name} (${plural(file.size, 'byte')}).`);
    ev.target.value = '';
    renderEditor();
    schedule();
  });

  $('keep-current').addEventListener('click', () => {
    current.value = robots.value;
    schedule();
  });

  $('sitemaps-button').addEventListener('click', async () => {
    let base = siteBase();
    if (!base) {
      const abs = list(urls).find((u) => /^https?:\/\/[^/]/i.test(u));
      if (abs) base = abs;
    }
    if (!base) {
      setStatus('sitemaps-status', 'Type the site above (or an absolute test URL) so the sitemaps can be found.', true);
      return;
    }
    const button = $('sitemaps-button');
    button.disabled = true;
    setStatus('sitemaps-status', 'Fetching the sitemaps…');
    try {
      const r = await api('/api/sitemaps', { robots: robots.value, base });
      const dropped = Object.entries(r.dropped).map(([k, n]) => `${k} ${n}`).join(', ');
      setStatus('sitemaps-status',
        `${plural(r.sitemaps, 'sitemap file')} read (${plural(r.indexes, 'index', 'indexes')}), ${plural(r.urls, 'page URL')}, ${r.failed} failed` +
        (dropped ? `; dropped: ${dropped}` : '') + (r.error ? `; ${r.error}` : ''), r.failed > 0 || !!r.error);
      const ul = el('ul', { class: 'plain' });
      for (const rep of r.reports) {
        let what = rep.index ? `index of ${plural(rep.children, 'sitemap')}` : plural(rep.pages, 'page');
        if (rep.disallowed) what = 'disallowed by robots.txt: not fetched';
        if (rep.error) what = rep.error;
        ul.append(el('li', null, el('code', { text: rep.url }), ' ', el('span', { class: rep.error ? 'problem' : '', text: what })));
      }
      if (r.moreReports) ul.append(el('li', { text: `and ${r.moreReports} more` }));
      $('sitemaps-result').replaceChildren(ul);
    } catch (e) {
      setStatus('sitemaps-status', e.message, true);
    } finally {
      button.disabled = false;
    }
  });

  $('share-button').addEventListener('click', async () => {
    const link = shareLink();
    const out = $('share-link');
    out.value = link;
    out.hidden = false;
    history.replaceState(null, '', link);
    out.select();
    let copied = false;
    try {
      await navigator.clipboard.writeText(link);
      copied = true;
    } catch (e) { /* no clipboard here: the link is selected to copy by hand */ }
    setStatus('share-status', `${copied ? 'Link copied' : 'Link ready: copy it'} (${plural(link.length, 'character')}). What you typed is in the part after #, which is never sent to a server.`);
  });

  window.addEventListener('hashchange', () => {
    if (applyFragment()) {
      renderEditor();
      schedule();
    }
  });

  robots.value = exampleRobots;
  urls.value = exampleURLs;
  agents.value = exampleAgents;
  applyFragment();
  renderEditor();
  refresh();
})();
