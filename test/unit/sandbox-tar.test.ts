import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readlinkSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import tar from 'tar-stream';
import { describe, expect, test } from 'vitest';
import { TarWriter, type MemoryTarHeader } from '../../harness/sandbox/core/tar.js';

const long = (n: number) => 'd'.repeat(60) + '/' + 'e'.repeat(60) + '/' + 'f'.repeat(n);
const ENTRIES: [MemoryTarHeader, Buffer?][] = [
  [{ name: 'workspace', type: 'directory', mode: 0o755 }],
  [{ name: 'workspace/a.txt', type: 'file', mode: 0o644 }, Buffer.from('hello\n')],
  [{ name: 'workspace/run.sh', type: 'file', mode: 0o755, uid: 1000, gid: 1000, uname: 'sandbox', gname: 'sandbox' }, Buffer.alloc(513, 7)],
  [{ name: 'workspace/empty', type: 'file', mode: 0o600 }, Buffer.alloc(0)],
  [{ name: 'workspace/zero-mode', type: 'file', mode: 0 }, Buffer.from('x')],
  [{ name: 'workspace/link', type: 'symlink', mode: 0o777, linkname: 'a.txt' }],
  // Long, but split into USTAR's prefix and name; then one component too long to split; then not ASCII.
  [{ name: long(30), type: 'file', mode: 0o644 }, Buffer.from('split\n')],
  [{ name: `workspace/${'g'.repeat(150)}`, type: 'file', mode: 0o644 }, Buffer.from('pax\n')],
  [{ name: 'workspace/ünïcødé/名前.txt', type: 'file', mode: 0o644 }, Buffer.from('utf-8\n')],
  [{ name: 'workspace/far', type: 'symlink', mode: 0o777, linkname: 'h'.repeat(120) }],
];

/** The same entries through tar-stream's pack, the archive TarWriter must equal. */
async function viaTarStream(mtime: number): Promise<Buffer> {
  const pack = tar.pack();
  const chunks: Buffer[] = [];
  const collected = (async () => {
    for await (const c of pack) chunks.push(c as Buffer);
  })();
  for (const [h, body] of ENTRIES) {
    await new Promise<void>((resolve, reject) => {
      const done = (e?: Error | null) => (e ? reject(e) : resolve());
      if (body) pack.entry({ ...h, mtime: new Date(mtime) }, body, done);
      else pack.entry({ ...h, mtime: new Date(mtime) }, done);
    });
  }
  pack.finalize();
  await collected;
  return Buffer.concat(chunks);
}

describe('TarWriter', () => {
  test('writes the archive tar-stream writes, byte for byte: modes, owners, symlinks, long and non-ASCII names', async () => {
    const mtime = Date.UTC(2026, 10, 29, 12, 0, 0);
    const writer = new TarWriter(mtime);
    for (const [h, body] of ENTRIES) writer.add(h, body);
    expect(writer.finish().equals(await viaTarStream(mtime))).toBe(true);
  });

  test('GNU tar extracts it as written', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'rg-tar-'));
    try {
      const writer = new TarWriter();
      for (const [h, body] of ENTRIES) writer.add(h, body);
      writeFileSync(path.join(dir, 'a.tar'), writer.finish());
      execFileSync('tar', ['-xf', 'a.tar', '--no-same-owner'], { cwd: dir });
      expect(readFileSync(path.join(dir, 'workspace/a.txt'), 'utf8')).toBe('hello\n');
      expect(statSync(path.join(dir, 'workspace/run.sh')).mode & 0o777).toBe(0o755);
      expect(readFileSync(path.join(dir, 'workspace/run.sh'))).toEqual(Buffer.alloc(513, 7));
      expect(readFileSync(path.join(dir, long(30)), 'utf8')).toBe('split\n');
      expect(readFileSync(path.join(dir, `workspace/${'g'.repeat(150)}`), 'utf8')).toBe('pax\n');
      expect(readFileSync(path.join(dir, 'workspace/ünïcødé/名前.txt'), 'utf8')).toBe('utf-8\n');
      expect(readlinkSync(path.join(dir, 'workspace/far'))).toBe('h'.repeat(120));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
