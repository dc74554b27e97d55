import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, onTestFinished, test, vi } from 'vitest';
import { annotation, GithubReporter } from '../../harness/reporters/github.js';
import { ProgressReporter } from '../../harness/reporters/progress.js';
import type { RunInfo } from '../../harness/reporters/reporter.js';
import { fixture, report } from '../helpers/reports.js';

/** A stream that keeps what is written, with the size of a terminal when asked to be one. */
function stream(tty = false) {
  const out = { text: '', isTTY: tty, columns: 80, rows: 20, write: (s: string) => ((out.text += s), true) };
  return out as unknown as NodeJS.WriteStream & { text: string };
}
const RUN: RunInfo = {
  runId: 'r1',
  mode: 'run',
  subject: 'm',
  backend: 'local',
  concurrency: 2,
  total: 2,
  kept: 0,
  fixturesDir: '/p/fixtures',
};

afterEach(() => vi.useRealTimers());

describe('progress off a TTY', () => {
  test('a start line, one line per finished fixture naming the model, a heartbeat while nothing finishes', () => {
    vi.useFakeTimers();
    const out = stream();
    const p = new ProgressReporter({ out, live: false, heartbeatMs: 30_000 });
    const run = { ...RUN, model: 'gpt-x', shard: { index: 1, count: 2 } };
    p.onRunStart(run);
    expect(out.text).toBe('redgreen run: 2 fixture(s) on local, concurrency 2, model gpt-x, shard 1/2 (run r1)\n');
    p.onFixtureStart(run, 'a');
    p.onFixtureEvent(run, 'a', { type: 'phase', phase: 'red', status: 'start' });
    vi.advanceTimersByTime(29_000);
    expect(out.text.split('\n')).toHaveLength(2);
    vi.advanceTimersByTime(1_000);
    expect(out.text.split('\n')[1]).toMatch(/^… 0\/2 done · 30\.0s elapsed · gpt-x; running: a \(red 30\.0s\)$/);
    p.onFixtureEnd(run, { ...fixture('a', { verdict: 'resolved' }), durationMs: 31_000 });
    expect(out.text.split('\n')[2]).toBe('✔ [gpt-x] a  resolved  31.00s  resolved because of a  [1/2]');
    // A finished fixture starts the wait for the next heartbeat again.
    vi.advanceTimersByTime(29_000);
    expect(out.text.split('\n')).toHaveLength(4);
    p.onFixtureEnd(run, fixture('b', { verdict: 'unresolved' }));
    expect(out.text).toContain('✘ [gpt-x] b  unresolved');
    p.close();
    vi.advanceTimersByTime(120_000);
    expect(out.text.match(/…/g)).toHaveLength(1);
    expect(out.text).not.toContain('\x1b[');
  });
});

describe('progress on a TTY', () => {
  test('live lines: done/total, elapsed, each running fixture with its phase; colour unless NO_COLOR', () => {
    vi.useFakeTimers();
    const out = stream(true);
    const p = new ProgressReporter({ out, live: true, color: true });
    p.onRunStart(RUN);
    p.onFixtureStart(RUN, 'alpha');
    p.onFixtureStart(RUN, 'beta');
    p.onFixtureEvent(RUN, 'beta', { type: 'phase', phase: 'setup', status: 'start' });
    vi.advanceTimersByTime(2_000);
    const plain = out.text.replace(/\x1b\[[0-9;]*[A-Za-z]/g, '');
    expect(plain).toMatch(/0\/2 done · 2\.0s elapsed/);
    expect(plain).toMatch(/▸ alpha +starting 2\.0s/);
    expect(plain).toMatch(/▸ beta +setup 2\.0s/);
    p.onFixtureEnd(RUN, fixture('alpha', { verdict: 'resolved' }));
    vi.advanceTimersByTime(1_000);
    expect(out.text).toContain('\x1b[32m✔\x1b[39m alpha');
    expect(out.text.replace(/\x1b\[[0-9;]*[A-Za-z]/g, '')).toMatch(/1\/2 done · 3\.0s elapsed · ETA ~3\.0s/);
    p.close();
    const noColor = stream(true);
    const q = new ProgressReporter({ out: noColor, live: true, color: false });
    q.onRunStart(RUN);
    q.onFixtureEnd(RUN, fixture('x', { verdict: 'unresolved' }));
    q.close();
    expect(noColor.text.replace(/\x1b\[(\d*A|J)|\r/g, '')).not.toMatch(/\x1b\[\d+m/);
  });
});

describe('GitHub Actions', () => {
  test('an error annotation per fixture that missed, escaped as workflow commands; the summary appended', async () => {
    const r = { ...fixture('bug,1', { verdict: 'not_green' }), reason: 'line one\nline two: 100%' };
    expect(annotation({ ...RUN, fixturesDir: '/p/fixtures' }, r, '/p')).toBe(
      '::error file=fixtures/bug%2C1/fixture.json,title=redgreen run%3A bug%2C1 is not_green::line one%0Aline two: 100%25\n',
    );
    const out = stream();
    const dir = await mkdtemp(path.join(os.tmpdir(), 'rg-gh-'));
    onTestFinished(() => rm(dir, { recursive: true, force: true }));
    const summary = path.join(dir, 'summary.md');
    const gh = new GithubReporter(out, summary);
    gh.onFixtureEnd(RUN, fixture('ok', { verdict: 'resolved' }));
    gh.onFixtureEnd(RUN, fixture('bad', { verdict: 'unresolved' }));
    expect(out.text.trim().split('\n')).toHaveLength(1);
    const rep = report('r1', { ok: { verdict: 'resolved' }, bad: { verdict: 'unresolved' } }, 'run');
    await gh.onEnd([{ run: RUN, report: rep, reportPath: '/x/report.json', transcriptDir: '/t', exitCode: 1 }]);
    await gh.onEnd([{ run: RUN, report: rep, reportPath: '/x/report.json', transcriptDir: '/t', exitCode: 1 }]);
    const md = await readFile(summary, 'utf8');
    expect(md).toContain('| `bad` | `unresolved` |');
    expect(md.match(/## ❌ redgreen run/g)).toHaveLength(2);
  });
});
