import { runTool } from '../core/tool.js';

/**
 * A copy-on-write workspace for host sandboxes: the kernel's overlay filesystem, a prepared tree
 * as its read-only lower layer and the sandbox's own folder as its upper one, so a sandbox over a
 * tree of any size is ready at once and never changes the tree. Mounting it needs root
 * (CAP_SYS_ADMIN in the host's namespaces); elsewhere the caller uploads instead.
 */
export function overlayAllowed(): boolean {
  return process.platform === 'linux' && process.getuid?.() === 0;
}

/** overlayfs reads its options split at ',' and ':' (a backslash escapes them). */
const escape = (p: string) => p.replace(/[\\,:]/g, (c) => `\\${c}`);

export async function mountOverlay(o: {
  lower: string;
  upper: string;
  work: string;
  target: string;
}): Promise<{ ok: boolean; why?: string }> {
  const options = `lowerdir=${escape(o.lower)},upperdir=${escape(o.upper)},workdir=${escape(o.work)}`;
  const r = await runTool('mount', ['-t', 'overlay', 'overlay', '-o', options, o.target]);
  return r.code === 0 ? { ok: true } : { ok: false, why: (r.stderr || r.error || `mount exited ${r.code}`).trim() };
}

/** Never throws; lazy, so a file still held open cannot keep the mount. */
export async function unmountOverlay(target: string): Promise<void> {
  await runTool('umount', ['-l', target]);
}

/** `cp -a`: a tree with its modes, times, links and hard links, into a new folder. */
export async function copyTreeExactly(from: string, to: string): Promise<{ ok: boolean; why?: string }> {
  const r = await runTool('cp', ['-a', '--', `${from}/.`, to]);
  return r.code === 0 ? { ok: true } : { ok: false, why: (r.stderr || r.error || `cp exited ${r.code}`).trim() };
}
