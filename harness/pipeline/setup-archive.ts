import { createReadStream } from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { RedgreenError, tailOf } from '../errors.js';
import { downloadFile, uploadFile } from '../sandbox/core/transfer.js';
import type { Sandbox } from '../sandbox/core/types.js';
import { runTimeImport } from '../config/run-time-import.js';

// The setup cache moves what setup changed with GNU tar inside the sandbox, the same on every
// backend: it archives exactly the listed entries (files, folders without their contents,
// symlinks, hard links, modes) and, unpacking, replaces what is in the way. The backends' own
// archive/extract take whole folders and refuse symlinked paths, which cannot express "this one
// file in an existing folder".

const TAR = 'setup-cache.tar';
const LIST = 'setup-cache.list';
const TAR_TIMEOUT_MS = 1_800_000;

/** `./` first: a name starting with `-` is never read as an option. */
const nulList = (paths: readonly string[]) => Buffer.from(paths.map((p) => `./${p}\0`).join(''));

/** Where a setup's archive is: a host file (an entry holds it after its description line). */
export interface ArchiveFile {
  file: string;
  start: number;
  bytes: number;
}

/**
 * A tar of the given workspace entries, made inside the sandbox (in 512-byte records, not 10 KiB
 * ones: small setups stay small) and streamed into `hostFile`, never whole in memory.
 */
export async function archiveEntries(sb: Sandbox, paths: readonly string[], hostFile: string): Promise<void> {
  const [file, list] = [`${sb.scratchDir}/${TAR}`, `${sb.scratchDir}/${LIST}`];
  try {
    await sb.writeFiles([{ path: list, content: nulList(paths) }]);
    const r = await sb.exec(['tar', '-cf', file, '-b1', '--no-recursion', '--null', '-T', list], { timeoutMs: TAR_TIMEOUT_MS });
    if (r.exitCode !== 0) throw new RedgreenError('SANDBOX_FAILED', `tar failed: ${tailOf(r.stderr || r.stdout)}`);
    await downloadFile(sb, file, hostFile);
  } finally {
    await sb.removeFiles([file, list]).catch(() => undefined);
  }
}

/**
 * Puts a cached setup back: removes what setup removed, then unpacks. Modes are restored exactly
 * (-p, not through the umask), owners are the sandbox user's, and times are now (-m) as in an
 * uncached run, where what setup wrote is newer than the freshly uploaded sources (make and the
 * like compare them).
 */
export async function restoreEntries(sb: Sandbox, archive: ArchiveFile, removed: readonly string[]): Promise<void> {
  await checkArchive(createReadStream(archive.file, { start: archive.start }), removed);
  const [file, list] = [`${sb.scratchDir}/${TAR}`, `${sb.scratchDir}/${LIST}`];
  try {
    await uploadFile(sb, archive.file, file, { start: archive.start });
    await sb.writeFiles([{ path: list, content: nulList(removed) }]);
    const script = 'if [ -s "$2" ]; then xargs -0 rm -rf -- < "$2"; fi && tar -xpmf "$1" --no-same-owner';
    const r = await sb.exec(['sh', '-c', script, 'sh', file, list], { timeoutMs: TAR_TIMEOUT_MS });
    if (r.exitCode !== 0) throw new RedgreenError('SANDBOX_FAILED', `could not unpack the cached setup: ${tailOf(r.stderr || r.stdout)}`);
  } finally {
    await sb.removeFiles([file, list]).catch(() => undefined);
  }
}

/** A relative, normalised path that stays inside the workspace, or null. */
function inside(name: string): string | null {
  const n = path.posix.normalize(name.replace(/\/+$/, ''));
  return n === '.' || path.posix.isAbsolute(n) || n === '..' || n.startsWith('../') ? null : n;
}

/**
 * A cache entry is as untrusted as a patch (what a setup made, possibly in another sandbox), and
 * the local backend unpacks it with no confinement: every name and every path to remove must stay
 * inside the workspace, and nothing may be written through a symlink the archive itself creates.
 * A symlink's target is not checked: unpacking creates the link without following it, and setup
 * could have made the same link in an uncached run (a venv's `bin/python -> /usr/bin/python3`).
 */
export async function checkArchive(archive: Readable | Buffer, removed: readonly string[]): Promise<void> {
  const refuse = (name: string, why: string): never => {
    throw new RedgreenError('SANDBOX_PATH_UNSAFE', `setup cache entry ${JSON.stringify(name)} ${why}`);
  };
  for (const p of removed) if (!inside(p)) refuse(p, 'is outside the workspace');
  const symlinks = new Set<string>();
  // Loaded here, by a run that restores a cached setup: every other run starts without tar-stream (20 ms).
  const { default: tar } = await runTimeImport<{ default: typeof import('tar-stream') }>('tar-stream');
  const extract = tar.extract();
  (Buffer.isBuffer(archive) ? Readable.from([archive]) : archive).pipe(extract);
  for await (const e of extract) {
    const { name, type, linkname } = e.header;
    e.resume();
    const rel = inside(name) ?? refuse(name, 'is outside the workspace');
    const parts = rel.split('/');
    if (parts.some((_, i) => i > 0 && symlinks.has(parts.slice(0, i).join('/')))) refuse(name, 'goes through a symlink');
    if (type === 'symlink') symlinks.add(rel);
    if (type === 'link' && !(linkname && inside(linkname))) refuse(name, 'links outside the workspace');
  }
}
