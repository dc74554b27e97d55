import { statfs } from 'node:fs/promises';
import { FULL_BELOW_BYTES, MIB } from '../core/limits.js';
import { runTool } from '../core/tool.js';

/**
 * A host sandbox's size limit: its folder (workspace, scratch, HOME, /tmp) becomes a tmpfs of
 * that size, so the kernel refuses a write past it (ENOSPC) whatever writes it. Mounting needs
 * root (CAP_SYS_ADMIN); anywhere else this says so and the folder stays a plain one: only
 * RLIMIT_FSIZE then caps a single file.
 */
export async function mountSizeLimit(dir: string, mb: number): Promise<{ ok: true } | { ok: false; why: string }> {
  if (process.getuid?.() !== 0) return { ok: false, why: 'mounting a size-limited tmpfs needs root' };
  const r = await run('mount', ['-t', 'tmpfs', '-o', `size=${mb * MIB},mode=0700`, 'tmpfs', dir]);
  return r.ok ? { ok: true } : { ok: false, why: `mount failed: ${r.error}` };
}

/** Never throws: a lazy unmount, so a file still held open cannot keep it. */
export async function unmountSizeLimit(dir: string): Promise<void> {
  await run('umount', ['-l', dir]);
}

async function run(cmd: string, args: string[]): Promise<{ ok: boolean; error: string }> {
  const r = await runTool(cmd, args);
  return { ok: r.code === 0, error: (r.stderr || r.error || '').trim() };
}

/** Whether the filesystem holding `dir` is full (a write failed there for lack of room). */
export async function isFull(dir: string): Promise<boolean> {
  const s = await statfs(dir).catch(() => null);
  return s !== null && s.bavail * s.bsize < FULL_BELOW_BYTES;
}
