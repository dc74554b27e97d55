import { execFileSync } from 'node:child_process';
import { chmod, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rng } from '../../harness/bench/stats.js';
import { Staging } from '../../harness/patch/apply.js';
import { applyExactly } from '../../harness/patch/exact.js';
import { parsePatch, touchedPaths } from '../../harness/patch/parse.js';

const META = ['fixture.json', 'ISSUE.md'];

type Files = Record<string, { text: string; exec: boolean }>;

/** Lines from a tiny alphabet, so that repeated lines (where a hunk could fit twice) are common. */
function randomFile(r: () => number): { text: string; exec: boolean } {
  const eol = r() < 0.2 ? '\r\n' : '\n';
  const lines = Array.from({ length: Math.floor(r() * 12) }, () => ['a', 'b', 'c', 'x = 1', '', 'ü'][Math.floor(r() * 6)]!);
  const last = r() < 0.2 ? '' : eol;
  return { text: lines.length ? lines.join(eol) + last : '', exec: r() < 0.2 };
}

function edit(r: () => number, f: { text: string; exec: boolean }): { text: string; exec: boolean } {
  const lines = f.text.split('\n');
  for (let n = 1 + Math.floor(r() * 3); n > 0; n--) {
    const at = Math.floor(r() * (lines.length + 1));
    const op = r();
    if (op < 0.4) lines.splice(at, 0, ['new', 'b', 'y = 2'][Math.floor(r() * 3)]!);
    else if (op < 0.7 && lines.length) lines.splice(Math.min(at, lines.length - 1), 1);
    else if (lines.length) lines[Math.min(at, lines.length - 1)] = 'changed';
  }
  return { text: lines.join('\n'), exec: r() < 0.1 ? !f.exec : f.exec };
}

let repo: string;
const git = (...args: string[]) =>
  execFileSync('git', ['-c', 'core.autocrlf=false', '-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], {
    cwd: repo,
    encoding: 'utf8',
    env: { PATH: process.env.PATH, HOME: repo, GIT_CONFIG_NOSYSTEM: '1', LANG: 'C' },
  });

async function writeFiles(dir: string, files: Files): Promise<void> {
  for (const name of (await readdir(dir)).filter((n) => n !== '.git')) await rm(path.join(dir, name), { recursive: true });
  for (const [name, f] of Object.entries(files)) {
    await writeFile(path.join(dir, name), f.text);
    await chmod(path.join(dir, name), f.exec ? 0o755 : 0o644);
  }
}

beforeAll(async () => {
  repo = await mkdtemp(path.join(os.tmpdir(), 'rg-exact-'));
  git('init', '-q');
});
afterAll(() => rm(repo, { recursive: true, force: true }));

describe('the exact in-memory apply agrees with git apply', () => {
  // 60 rounds of some ten git processes each: 6 s alone, past the unit budget of 15 s beside busy loops.
  it('on random files, edits and context sizes, including bases that moved since the diff', { timeout: 120_000 }, async () => {
    const r = rng(20261124);
    let accepted = 0;
    let declined = 0;
    for (let round = 0; round < 60; round++) {
      const base: Files = {};
      for (let i = 0; i < 1 + Math.floor(r() * 3); i++) base[`f${i}.txt`] = randomFile(r);
      const next: Files = {};
      for (const [name, f] of Object.entries(base)) if (r() > 0.15) next[name] = r() < 0.8 ? edit(r, f) : f;
      if (r() < 0.3) next['added.txt'] = randomFile(r);
      await writeFiles(repo, base);
      git('add', '-A');
      git('commit', '-qm', 'base', '--allow-empty');
      await writeFiles(repo, next);
      git('add', '-A');
      const text = git('diff', '--cached', '--binary', `-U${Math.floor(r() * 4)}`);
      if (!text.trim()) continue;
      // Sometimes the tree moved on since the diff was made: a line more at the top of a file.
      await writeFiles(repo, base);
      const moved = Object.keys(base).find(() => r() < 0.25);
      if (moved) await writeFile(path.join(repo, moved), `top\n${base[moved]!.text}`);

      const parsed = parsePatch(text);
      const exact = applyExactly(text, parsed, repo, META);
      const staging = await Staging.create(repo, META, parsed);
      try {
        const byGit = await staging.apply(text, parsed);
        if (!exact) {
          declined++;
          continue;
        }
        accepted++;
        expect(byGit.status, `round ${round}: git refused what the exact path applied\n${text}`).toBe('applied');
        const fromGit = await staging.read(touchedPaths(parsed));
        expect([...exact.keys()].sort()).toEqual([...fromGit.keys()].sort());
        for (const [p, file] of exact) {
          const other = fromGit.get(p)!;
          expect(file === null, `round ${round} ${p}: deleted by one only`).toBe(other === null);
          if (!file || !other) continue;
          expect(file.content.toString('latin1'), `round ${round} ${p}\n${text}`).toBe(other.content.toString('latin1'));
          expect(file.mode.toString(8), `round ${round} ${p}: mode`).toBe(other.mode.toString(8));
        }
      } finally {
        await staging.dispose();
      }
    }
    // Both paths are exercised: most plain diffs go in memory, moved bases and -U0 go to git.
    expect(accepted).toBeGreaterThan(20);
    expect(declined).toBeGreaterThan(5);
  });

  it('declines what only git can do: binary, renames, a hunk that is not at its place', async () => {
    await writeFiles(repo, { 'a.txt': { text: 'one\ntwo\n', exec: false } });
    git('add', '-A');
    git('commit', '-qm', 'base');
    git('mv', 'a.txt', 'b.txt');
    const rename = git('diff', '--cached', '-M');
    expect(applyExactly(rename, parsePatch(rename), repo, META)).toBeNull();
    git('reset', '-q', '--hard');
    await writeFile(path.join(repo, 'a.txt'), Buffer.from([0, 1, 2, 0xff]));
    const binary = git('diff', '--binary');
    expect(applyExactly(binary, parsePatch(binary), repo, META)).toBeNull();
    git('reset', '-q', '--hard');
    await writeFile(path.join(repo, 'a.txt'), 'one\nTWO\n');
    const plain = git('diff');
    git('reset', '-q', '--hard');
    expect(applyExactly(plain, parsePatch(plain), repo, META)?.get('a.txt')?.content.toString()).toBe('one\nTWO\n');
    await writeFile(path.join(repo, 'a.txt'), 'zero\none\ntwo\n');
    expect(applyExactly(plain, parsePatch(plain), repo, META)).toBeNull();
    expect((await stat(path.join(repo, 'a.txt'))).size).toBe('zero\none\ntwo\n'.length);
    expect(await readFile(path.join(repo, 'a.txt'), 'utf8')).toBe('zero\none\ntwo\n');
  });

  it('takes a file’s bytes from what the caller read (a fingerprint’s tree) instead of reading it again', async () => {
    await writeFiles(repo, { 'c.txt': { text: 'one\ntwo\n', exec: false } });
    git('add', '-A');
    git('commit', '-qm', 'base');
    await writeFile(path.join(repo, 'c.txt'), 'one\nTWO\n');
    const plain = git('diff', '--', 'c.txt');
    // The file on disk no longer fits the patch; the bytes read before it changed do.
    await writeFile(path.join(repo, 'c.txt'), 'zero\none\ntwo\n');
    expect(applyExactly(plain, parsePatch(plain), repo, META)).toBeNull();
    const read = new Map([['c.txt', Buffer.from('one\ntwo\n')]]);
    expect(applyExactly(plain, parsePatch(plain), repo, META, read)?.get('c.txt')?.content.toString()).toBe('one\nTWO\n');
  });
});
