import {
  chmodSync,
  existsSync,
  linkSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { HostFiles } from '../../harness/sandbox/host/files.js';
import { HostRoots, MAX_SPARES, SANDBOX_DIRS } from '../../harness/sandbox/host/roots.js';
import { SMALL_FILE } from '../../harness/sandbox/core/tree.js';

const bases: string[] = [];
afterEach(async () => {
  for (const b of bases.splice(0)) await rm(b, { recursive: true, force: true });
});

async function roots(spareFiles = false): Promise<{ roots: HostRoots; base: string }> {
  const base = await mkdtemp(path.join(os.tmpdir(), 'rg-roots-'));
  bases.push(base);
  return { roots: new HostRoots({ base, prefix: 'redgreen-test-', spareFiles }), base };
}

/** A folder beside the roots holding one file: what a symlink a command left points to, which must survive. */
function preciousFolder(base: string): string {
  const outside = path.join(base, 'outside');
  mkdirSync(outside);
  writeFileSync(path.join(outside, 'precious'), 'keep me');
  return outside;
}

describe('HostRoots', () => {
  it('outside a run, a root that comes back is removed', async () => {
    const { roots: r, base } = await roots();
    const { root } = await r.take();
    expect(readdirSync(root).sort()).toEqual([...SANDBOX_DIRS].sort());
    await r.give(root);
    expect(readdirSync(base)).toEqual([]);
  });

  it('within a run, the next sandbox gets the same root back, emptied and with new folder modes', async () => {
    const { roots: r } = await roots();
    r.open();
    const { root } = await r.take();
    writeFileSync(path.join(root, 'workspace/.hidden'), 'x');
    mkdirSync(path.join(root, 'home/ro/deep'), { recursive: true });
    writeFileSync(path.join(root, 'home/ro/deep/f'), 'x');
    chmodSync(path.join(root, 'home/ro'), 0o500);
    chmodSync(path.join(root, 'tmp'), 0o700);
    writeFileSync(path.join(root, 'stray.sock'), '');
    await r.give(root);
    const again = await r.take();
    expect(again.root).toBe(root);
    for (const d of SANDBOX_DIRS) expect(readdirSync(path.join(root, d))).toEqual([]);
    expect(statSync(path.join(root, 'tmp')).mode & 0o777).toBe(statSync(path.join(root, 'workspace')).mode & 0o777);
    expect(existsSync(path.join(root, 'stray.sock'))).toBe(false);
    await r.give(again.root);
    await r.close();
    expect(existsSync(root)).toBe(false);
  });

  it('emptying a big tree lets the event loop run meanwhile, and still empties it all', async () => {
    const { roots: r, base } = await roots();
    const outside = preciousFolder(base);
    r.open();
    const { root } = await r.take();
    for (let d = 0; d < 20; d++) {
      mkdirSync(path.join(root, 'workspace', `d${d}`, 'deep'), { recursive: true });
      for (let f = 0; f < 50; f++) writeFileSync(path.join(root, 'workspace', `d${d}`, 'deep', `f${f}`), 'x');
    }
    symlinkSync(outside, path.join(root, 'workspace', 'd0', 'outside'));
    const order: string[] = [];
    setImmediate(() => order.push('event loop'));
    await r.give(root);
    order.push('emptied');
    expect(order).toEqual(['event loop', 'emptied']);
    const again = await r.take();
    expect(again.root).toBe(root);
    expect(readdirSync(path.join(root, 'workspace'))).toEqual([]);
    expect(readdirSync(outside)).toEqual(['precious']);
    await r.close();
  });

  it('a root one of whose folders a command removed is replaced, not handed out without it', async () => {
    const { roots: r, base } = await roots();
    r.open();
    const { root } = await r.take();
    await rm(path.join(root, 'tmp'), { recursive: true });
    await r.give(root);
    expect(existsSync(root)).toBe(false);
    const next = await r.take();
    expect(next.root).not.toBe(root);
    expect(readdirSync(next.root).sort()).toEqual([...SANDBOX_DIRS].sort());
    await r.close();
    await r.give(next.root);
    expect(readdirSync(base)).toEqual([]);
  });

  it('a root whose folder was replaced by a symlink is removed, and what the link points to is left alone', async () => {
    const { roots: r, base } = await roots();
    const outside = preciousFolder(base);
    r.open();
    const { root } = await r.take();
    await rm(path.join(root, 'workspace'), { recursive: true });
    symlinkSync(outside, path.join(root, 'workspace'));
    await r.give(root);
    expect(existsSync(root)).toBe(false);
    expect(readdirSync(outside)).toEqual(['precious']);
    const next = await r.take();
    expect(next.root).not.toBe(root);
    await r.close();
    await r.give(next.root);
    expect(readdirSync(base)).toEqual(['outside']);
  });

  it('with spare files, the next upload rewrites the small plain files of the sandbox before instead of making new ones, whole', async () => {
    const { roots: r, base } = await roots(true);
    const outside = preciousFolder(base);
    r.open();
    const first = await r.take();
    const ws = path.join(first.root, 'workspace');
    mkdirSync(path.join(ws, 'src'));
    writeFileSync(path.join(ws, 'src/long.txt'), 'x'.repeat(5000));
    writeFileSync(path.join(ws, 'run.sh'), 'echo old\n', { mode: 0o755 });
    linkSync(path.join(outside, 'precious'), path.join(ws, 'linked'));
    writeFileSync(path.join(ws, 'big.bin'), Buffer.alloc(SMALL_FILE + 1));
    symlinkSync(path.join(outside, 'precious'), path.join(ws, 'link'));
    const spareInodes = ['src/long.txt', 'run.sh'].map((f) => lstatSync(path.join(ws, f)).ino).sort();
    await r.give(first.root);

    const next = await r.take();
    expect(next.root).toBe(first.root);
    expect(readdirSync(ws)).toEqual([]);
    // A file with another link, a big file and a symlink are removed, never kept: what they link to is left alone.
    expect(readFileSync(path.join(outside, 'precious'), 'utf8')).toBe('keep me');
    expect(statSync(path.join(outside, 'precious')).nlink).toBe(1);

    const src = path.join(base, 'fixture');
    mkdirSync(src);
    writeFileSync(path.join(src, 'a.txt'), 'short');
    writeFileSync(path.join(src, 'b.py'), 'print(1)\n', { mode: 0o600 });
    writeFileSync(path.join(src, 'c.txt'), 'made new');
    const files = new HostFiles([{ inside: ws, host: ws }], ws, next.spares && (() => next.spares!.take()));
    await files.uploadDir(src);

    expect(readdirSync(ws).sort()).toEqual(['a.txt', 'b.py', 'c.txt']);
    const st = Object.fromEntries(['a.txt', 'b.py', 'c.txt'].map((f) => [f, lstatSync(path.join(ws, f))]));
    // Two spares were kept (the two small plain files): two of the three files are those inodes.
    const reused = Object.values(st).filter((s) => spareInodes.includes(s.ino));
    expect(reused).toHaveLength(2);
    expect(readFileSync(path.join(ws, 'a.txt'), 'utf8')).toBe('short');
    expect(st['a.txt']!.size).toBe(5);
    expect(readFileSync(path.join(ws, 'b.py'), 'utf8')).toBe('print(1)\n');
    expect(st['b.py']!.mode & 0o7777).toBe(0o600);
    expect(readFileSync(path.join(ws, 'c.txt'), 'utf8')).toBe('made new');
    for (const s of Object.values(st)) expect(s.nlink).toBe(1);
    await r.give(next.root);
    await r.close();
    expect(existsSync(first.root)).toBe(false);
  });

  it('a spare something made into a link or a folder meanwhile is removed, never written through: a new file is made instead', async () => {
    const { roots: r, base } = await roots(true);
    const outside = preciousFolder(base);
    r.open();
    const { root } = await r.take();
    for (const f of ['a', 'b', 'c']) writeFileSync(path.join(root, 'workspace', f), 'old');
    await r.give(root);
    const next = await r.take();
    const spareDir = path.join(root, '.spare');
    const [s1, s2, s3] = readdirSync(spareDir).map((f) => path.join(spareDir, f));
    await rm(s1!);
    linkSync(path.join(outside, 'precious'), s1!);
    await rm(s2!);
    symlinkSync(path.join(outside, 'precious'), s2!);
    await rm(s3!);
    mkdirSync(s3!);
    const src = path.join(base, 'fixture');
    mkdirSync(src);
    for (const f of ['x', 'y', 'z']) writeFileSync(path.join(src, f), `new ${f}`);
    const ws = path.join(root, 'workspace');
    await new HostFiles([{ inside: ws, host: ws }], ws, () => next.spares!.take()).uploadDir(src);
    for (const f of ['x', 'y', 'z']) {
      expect(readFileSync(path.join(ws, f), 'utf8')).toBe(`new ${f}`);
      expect(lstatSync(path.join(ws, f)).isFile()).toBe(true);
    }
    expect(readFileSync(path.join(outside, 'precious'), 'utf8')).toBe('keep me');
    expect(statSync(path.join(outside, 'precious')).nlink).toBe(1);
    expect(readdirSync(spareDir)).toEqual([]);
    await r.give(next.root);
    await r.close();
  });

  it(`a root keeps at most ${MAX_SPARES} spare files; the rest are removed`, async () => {
    const { roots: r } = await roots(true);
    r.open();
    const { root } = await r.take();
    for (let i = 0; i < MAX_SPARES + 10; i++) writeFileSync(path.join(root, 'workspace', `f${i}`), 'x');
    await r.give(root);
    const again = await r.take();
    expect(readdirSync(path.join(root, 'workspace'))).toEqual([]);
    expect(readdirSync(path.join(root, '.spare'))).toHaveLength(MAX_SPARES);
    let taken = 0;
    while (again.spares?.take()) taken++;
    expect(taken).toBe(MAX_SPARES);
    await r.give(again.root);
    await r.close();
  });

  it('without spare files (bwrap), nothing of the sandbox before is kept', async () => {
    const { roots: r } = await roots();
    r.open();
    const { root } = await r.take();
    writeFileSync(path.join(root, 'workspace', 'f'), 'x');
    await r.give(root);
    const again = await r.take();
    expect(again.spares).toBeUndefined();
    expect(readdirSync(root).sort()).toEqual([...SANDBOX_DIRS].sort());
    await r.close();
    await r.give(again.root);
  });
});
