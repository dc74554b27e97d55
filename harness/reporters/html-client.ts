/**
 * The page script of report.html, inline (the file must open from disk with no network). It builds
 * a fixture's details only when they are opened, filters the matrix, and answers hovering over the
 * timeline from the embedded data. Every piece of recorded text goes in through textContent.
 * ASCII only (a middle dot is `\u00b7`, a dash `\u2014`): the CLI's bundle stays ASCII (scripts/bundle.mjs).
 */
export const CLIENT_SCRIPT = String.raw`(() => {
  'use strict';
  const data = JSON.parse(document.getElementById('rg-data').textContent);
  const byId = data.runs.map((r) => new Map(r.fixtures.map((f) => [f.id, f])));
  const expected = new Set(data.expected);

  function h(tag, attrs, ...kids) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k === 'class') e.className = v;
      else e.setAttribute(k, String(v));
    }
    for (const k of kids.flat()) if (k !== null && k !== undefined && k !== false) e.append(k instanceof Node ? k : String(k));
    return e;
  }
  const secs = (ms) => (ms < 1000 ? Math.round(ms) + ' ms' : (ms / 1000).toFixed(2) + 's');
  const chip = (v) => h('span', { class: 'v v-' + v + (expected.has(v) ? ' ok' : '') }, v);
  const muted = (text) => h('p', { class: 'muted' }, text);

  function diff(text) {
    const pre = h('pre', { class: 'diff' });
    for (const line of text.replace(/\n$/, '').split('\n')) {
      const c = /^(diff |index |\+\+\+ |--- )/.test(line) ? 'file' : line[0] === '+' ? 'add' : line[0] === '-' ? 'del' : line.startsWith('@@') ? 'hunk' : null;
      pre.append(h('span', { class: c }, line + '\n'));
    }
    return pre;
  }

  function phaseLine(name, p) {
    if (!p) return h('p', { class: 'phase' }, h('b', {}, name), ' did not run');
    return h('p', { class: 'phase' }, h('b', {}, name), ' ' + p.state + ' \u00b7 exit ' + p.exit + ' \u00b7 ' + secs(p.ms) + ' \u00b7 from ' + p.source,
      p.problems.length ? h('span', { class: 'warn' }, ' \u00b7 ' + p.problems.join('; ')) : null,
      p.flaky.length ? h('span', { class: 'warn' }, ' \u00b7 flaky: ' + p.flaky.join(', ')) : null);
  }

  function tests(f) {
    const red = new Map((f.red ? f.red.tests : []).map((t) => [t[0], t]));
    const green = new Map((f.green ? f.green.tests : []).map((t) => [t[0], t]));
    const ids = [...new Set([...red.keys(), ...green.keys()])];
    if (!ids.length) return muted('no test results');
    const cell = (t, ran) => {
      const s = t ? t[1] : ran ? 'absent' : 'none';
      return h('td', { class: 's s-' + s }, t ? t[1] : ran ? 'absent' : '\u2014');
    };
    const body = h('tbody');
    for (const id of ids) {
      const r = red.get(id), g = green.get(id);
      const msg = (g && g[2]) || (r && r[2]);
      const name = h('td', {}, id, msg ? h('details', { class: 'msg' }, h('summary', {}, 'message'), h('pre', {}, msg)) : null);
      body.append(h('tr', { class: r && g && r[1] !== g[1] ? 'changed' : null }, name, cell(r, f.red), cell(g, f.green)));
    }
    return h('table', { class: 'tests' }, h('thead', {}, h('tr', {}, h('th', {}, 'test'), h('th', {}, 'RED'), h('th', {}, 'GREEN'))), body);
  }

  function phaseBar(f) {
    const total = f.spans.reduce((a, s) => a + s[2], 0);
    if (!total) return null;
    return h('div', { class: 'bar' }, f.spans.map((s) => h('i', { style: 'flex-grow:' + s[2] + ';background:' + data.colors[s[0]], title: data.phases[s[0]] + ' ' + secs(s[2]) })));
  }

  function logs(run, f) {
    if (!f.logs) return muted(run.transcript ? 'no commands recorded' : 'transcript not found: logs are not included');
    if (!f.logs.length) return muted('no commands ran');
    return f.logs.map((l) => h('details', { class: 'log' },
      h('summary', {}, h('code', {}, '$ ' + l.command), ' ' + l.label + ' \u00b7 ' + l.phase + ' \u00b7 cwd ' + l.cwd + ' \u00b7 ' + (l.timedOut ? 'timed out' : 'exit ' + l.exitCode) + ' \u00b7 ' + secs(l.durationMs)),
      l.out ? [h('div', { class: 'stream' }, 'stdout \u00b7 ' + l.outBytes + ' bytes'), h('pre', {}, l.out)] : null,
      l.err ? [h('div', { class: 'stream' }, 'stderr \u00b7 ' + l.errBytes + ' bytes'), h('pre', {}, l.err)] : null,
      !l.out && !l.err ? muted('no output') : null));
  }

  function patch(run, f) {
    if (!f.patch) return muted('no patch stage');
    const p = f.patch;
    const line = h('p', {}, 'status ', h('b', {}, p.status), p.fuzzy ? ' (fuzzy)' : '', ' \u00b7 from ' + p.source, p.files.length ? ' \u00b7 files ' + p.files.join(', ') : '',
      p.reason ? h('span', { class: 'warn' }, ' \u00b7 ' + p.reason) : null, p.tampered.length ? h('span', { class: 'warn' }, ' \u00b7 protected files kept: ' + p.tampered.join(', ')) : null);
    const audit = p.audit && p.audit.length
      ? h('ul', { class: 'audit warn' }, h('b', {}, 'reaches into test-framework internals:'),
          p.audit.map((a) => h('li', {}, h('code', {}, a.file + ':' + a.line), ' [' + a.rule + '] ', h('code', {}, a.text))))
      : null;
    const text = p.text === undefined ? muted(run.transcript ? 'patch text not recorded' : 'transcript not found: the patch text is not included') : p.text.trim() ? diff(p.text) : muted('empty patch');
    return [line, audit, text];
  }

  function body(i) {
    const id = data.ids[i];
    const parts = [];
    data.runs.forEach((run, r) => {
      const f = byId[r].get(id);
      if (!f) return;
      const meta = [f.graded, f.error, f.attempts ? f.attempts + ' attempts' : null, run.backend, secs(f.ms)].filter(Boolean).join(' \u00b7 ');
      parts.push(h('div', { class: 'run' },
        data.runs.length > 1 ? h('h4', {}, run.subject + ' ', h('small', {}, run.runId)) : null,
        h('p', { class: 'reason' }, chip(f.verdict), ' ' + f.reason),
        f.title ? h('p', {}, h('b', {}, 'Issue: '), f.title) : null,
        h('p', { class: 'meta' }, meta), phaseBar(f),
        h('h5', {}, 'Patch'), patch(run, f),
        h('h5', {}, 'RED \u2192 GREEN'), phaseLine('RED', f.red), phaseLine('GREEN', f.green), tests(f),
        h('h5', {}, 'Logs'), logs(run, f)));
    });
    return parts;
  }

  document.addEventListener('toggle', (e) => {
    const d = e.target;
    if (!(d instanceof HTMLDetailsElement) || !d.classList.contains('fx') || !d.open || d.dataset.done) return;
    d.dataset.done = '1';
    d.querySelector('.fx-body').append(...body(Number(d.dataset.i)));
  }, true);

  function openFixture(i) {
    const d = document.getElementById('f-' + i);
    if (!d) return;
    d.hidden = false;
    d.open = true;
    d.scrollIntoView({ block: 'start' });
  }
  document.addEventListener('click', (e) => {
    const a = e.target instanceof Element ? e.target.closest('a[href^="#f-"]') : null;
    if (a) openFixture(a.getAttribute('href').slice(3));
  });
  if (/^#f-\d+$/.test(location.hash)) openFixture(location.hash.slice(3));

  const filter = document.getElementById('filter');
  const onlyBad = document.getElementById('only-bad');
  const rows = [...document.querySelectorAll('.matrix tbody tr, details.fx')];
  function applyFilter() {
    const q = filter.value.trim().toLowerCase();
    let shown = 0;
    for (const el of rows) {
      el.hidden = !(el.dataset.k.includes(q) && (!onlyBad.checked || el.dataset.bad));
      if (!el.hidden && el.tagName === 'TR') shown++;
    }
    document.getElementById('shown').textContent = shown + ' of ' + data.ids.length + ' shown';
  }
  filter.addEventListener('input', applyFilter);
  onlyBad.addEventListener('change', applyFilter);

  const tip = document.getElementById('tip');
  for (const svg of document.querySelectorAll('svg.tl-svg')) {
    const run = data.runs[Number(svg.dataset.run)];
    const total = data.totals[Number(svg.dataset.run)];
    const hit = (ev) => {
      const box = svg.getBoundingClientRect();
      const t = ((ev.clientX - box.left) / box.width) * total;
      const lane = Math.floor(((ev.clientY - box.top) / box.height) * run.lanes);
      const slack = (3 / box.width) * total;
      for (const f of run.fixtures) {
        if (f.lane !== lane) continue;
        for (const s of f.spans) if (t >= s[1] - slack && t <= s[1] + s[2] + slack) return { f, s };
      }
      return null;
    };
    svg.addEventListener('mousemove', (ev) => {
      const x = hit(ev);
      tip.hidden = !x;
      if (!x) return;
      tip.textContent = x.f.id + ' \u00b7 ' + data.phases[x.s[0]] + ' ' + secs(x.s[2]) + ' \u00b7 slot ' + x.f.lane + ' \u00b7 ' + x.f.verdict;
      tip.style.left = ev.pageX + 12 + 'px';
      tip.style.top = ev.pageY + 12 + 'px';
    });
    svg.addEventListener('mouseleave', () => (tip.hidden = true));
    svg.addEventListener('click', (ev) => {
      const x = hit(ev);
      if (x) openFixture(data.ids.indexOf(x.f.id));
    });
  }
})();`;
