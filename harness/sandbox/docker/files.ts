import type Docker from 'dockerode';
import { RedgreenError } from '../../errors.js';
import { OWNER, readSingleFile } from './archive.js';
import { engineFailure, statusOf } from './client.js';
import { SCRATCH_DIR, WORKDIR } from './config.js';
import { checkPaths, fsError, insideRoots, pathsArgv, readKinds, type InsidePath, type PathCheck } from './paths.js';
import type { CommandInput } from '../core/command-server.js';
import { packFiles, packTree } from '../core/tar.js';
import { walkTree } from '../core/tree.js';
import type { ExecResult, FileToWrite, OutputStream, UploadOptions, UploadStats } from '../core/types.js';

export const ROOTS = [WORKDIR, SCRATCH_DIR];

/** How a sandbox's files reach its current container. */
export interface FilesContext {
  /** A short internal command as the sandbox user, with input when given. */
  run: (
    argv: string[],
    o?: { input?: CommandInput; onOutput?: (stream: OutputStream, chunk: Buffer) => void; maxOutputBytes?: number },
  ) => Promise<ExecResult>;
  docker: Docker;
  container: Docker.Container;
  /**
   * Files travel through the command server (tar and cat as the sandbox user, no engine call),
   * else through the archive API (an image without the server's tools).
   */
  server: boolean;
}

/** The sandbox user's tar extracts at /: names are absolute paths without their slash. */
const fromRoot = (abs: string) => abs.slice(1);

function failed(what: string, r: ExecResult, rest = r.stderr): RedgreenError {
  return new RedgreenError('SANDBOX_FAILED', `could not ${what}: ${rest.trim() || `exit ${r.exitCode}`}`);
}

/** Paths inside the workspace or scratch folder, with no symlink on the way (checked in the container, all at once). */
export async function resolvePaths(ctx: FilesContext, paths: readonly string[]): Promise<({ target: InsidePath } & PathCheck)[]> {
  const targets = paths.map((p) => insideRoots(ROOTS, p, WORKDIR));
  const checks = await checkPaths((argv) => ctx.run(argv), targets, paths);
  return targets.map((target, i) => ({ target, ...checks[i]! }));
}

export async function uploadTree(ctx: FilesContext, hostDir: string, options: UploadOptions): Promise<UploadStats> {
  const entries = await walkTree(hostDir, options);
  const { pack, done } = packTree(hostDir, entries, ctx.server ? { prefix: fromRoot(WORKDIR) } : { owner: OWNER });
  try {
    if (ctx.server) {
      const r = await ctx.run(['tar', '-x', '-p', '-f', '-', '-C', '/'], { input: pack as unknown as AsyncIterable<Buffer> });
      if (r.exitCode !== 0) throw failed(`upload ${hostDir}`, r);
      return await done;
    }
    const [stats] = await Promise.all([done, ctx.container.putArchive(pack as unknown as NodeJS.ReadableStream, { path: WORKDIR })]);
    return stats;
  } catch (e) {
    // If the engine or the server failed first, the archive must stop reading files (and release them).
    pack.destroy();
    throw engineFailure(`upload ${hostDir}`, e, ctx.docker);
  }
}

export async function writeFiles(ctx: FilesContext, files: readonly FileToWrite[]): Promise<void> {
  const paths = files.map((f) => f.path);
  const mode = (f: FileToWrite) => (f.mode ?? 0o644) & 0o777;
  const isDir = (checks: PathCheck[]) => {
    const at = checks.findIndex((c) => c.final.dir);
    // Extracting a file over a folder would delete the folder and all it holds.
    if (at >= 0) throw fsError('EISDIR', `cannot write ${paths[at]}: it is a folder in the sandbox`);
  };
  if (ctx.server) {
    const targets = paths.map((p) => insideRoots(ROOTS, p, WORKDIR));
    const archive = await packFiles(files.map((f, i) => ({ name: fromRoot(targets[i]!.abs), content: f.content, mode: mode(f) })));
    const r = await ctx.run(pathsArgv('write', targets), { input: archive });
    const { checks, rest } = readKinds(r.stderr, targets, paths);
    isDir(checks);
    if (r.exitCode !== 0) throw failed(`write ${paths.join(', ')}`, r, rest);
    return;
  }
  const resolved = await resolvePaths(ctx, paths);
  isDir(resolved);
  // One archive per root (workspace, scratch): each is extracted where its paths are relative to.
  for (const root of ROOTS) {
    const mine = resolved.map((r, i) => ({ ...r, f: files[i]! })).filter((r) => r.target.root === root);
    if (!mine.length) continue;
    // The engine would create missing parents as root: listing them makes them the sandbox user's.
    const dirs = [...new Set(mine.flatMap((r) => r.missing))].sort((a, b) => a.split('/').length - b.split('/').length);
    const archive = await packFiles(
      mine.map((r) => ({ name: r.target.rel, content: r.f.content, mode: mode(r.f) })),
      { owner: OWNER, dirs },
    );
    try {
      await ctx.container.putArchive(archive, { path: root });
    } catch (e) {
      throw engineFailure(`write ${mine.map((r) => r.f.path).join(', ')}`, e, ctx.docker);
    }
  }
}

export async function readFile(ctx: FilesContext, p: string): Promise<Buffer> {
  const missing = () => fsError('ENOENT', `no such file in the sandbox: ${p}`);
  const notFile = () => fsError('EISDIR', `not a regular file in the sandbox: ${p}`);
  if (ctx.server) {
    const target = insideRoots(ROOTS, p, WORKDIR);
    // The content is kept as bytes, not as the capped text of a command's output.
    const out: Record<OutputStream, Buffer[]> = { stdout: [], stderr: [] };
    const r = await ctx.run(pathsArgv('read', [target]), { onOutput: (s, c) => void out[s].push(c), maxOutputBytes: 0 });
    const { checks, rest } = readKinds(Buffer.concat(out.stderr).toString('utf8'), [target], [p]);
    if (!checks[0]!.final.exists) throw missing();
    if (checks[0]!.final.dir || r.exitCode === 4) throw notFile();
    if (r.exitCode !== 0) throw failed(`read ${p}`, r, rest);
    return Buffer.concat(out.stdout);
  }
  const { target, final } = (await resolvePaths(ctx, [p]))[0]!;
  if (!final.exists) throw missing();
  if (final.dir) throw notFile();
  let archive: NodeJS.ReadableStream;
  try {
    archive = (await ctx.container.getArchive({ path: target.abs })) as NodeJS.ReadableStream;
  } catch (e) {
    if (statusOf(e) === 404) throw missing();
    throw engineFailure(`read ${p}`, e, ctx.docker);
  }
  const content = await readSingleFile(archive);
  if (!content) throw notFile();
  return content;
}

export async function removeFiles(ctx: FilesContext, paths: readonly string[]): Promise<void> {
  if (!paths.length) return;
  const targets = paths.map((p) => insideRoots(ROOTS, p, WORKDIR));
  const r = await ctx.run(pathsArgv('remove', targets));
  const { rest } = readKinds(r.stderr, targets, paths);
  if (r.exitCode !== 0) throw failed(`remove ${paths.join(', ')}`, r, rest);
}
