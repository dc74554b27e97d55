import { existsSync, mkdirSync, readdirSync, statSync, symlinkSync, writeFileSync, chmodSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { HostRoots, SANDBOX_DIRS } from '../../harness/sandbox/host/roots.js';

const bases: string[] = [];
afterEach(async () => {
  for (const b of bases.splice(0)) await rm(b, { recursive: true, force: true });
});

async function roots(): Promise<{ roots: HostRoots; base: string }> {
  const base = await mkdtemp(path.join(os.tmpdir(), 'rg-roots-'));
  bases.push(base);
  return { roots: new HostRoots({ base, prefix: 'redgreen-test-' }), base };
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
});
