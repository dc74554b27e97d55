import { closeSync, createReadStream, openSync, unlinkSync, writeSync } from 'node:fs';
import { stat, writeFile } from 'node:fs/promises';
import { buffer } from 'node:stream/consumers';
import type Docker from 'dockerode';
import tar from 'tar-stream';
import { RedgreenError } from '../../errors.js';
import { OWNER, readSingleFile } from './archive.js';
import { engineFailure, statusOf } from './client.js';
import { SCRATCH_DIR, WORKDIR } from './config.js';
import { checkPaths, EXTRACT_ARGV, fsError, insideRoots, pathsArgv, readKinds, type InsidePath, type PathCheck } from './paths.js';
import type { CommandInput } from '../core/command-server.js';
import { packFiles, packUpload, streamEntry } from '../core/tar.js';
import { uploadEntries } from '../core/tree.js';
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

/** Up to this size a tree's archive is made in memory at once (packUpload), else streamed. */
const SMALL_ARCHIVE_BYTES = 1024 * 1024;

export async function uploadTree(ctx: FilesContext, hostDir: string, options: UploadOptions): Promise<UploadStats> {
  const { entries, contents } = await uploadEntries(hostDir, options);
  const how = { ...(ctx.server ? { prefix: fromRoot(WORKDIR) } : { owner: OWNER }), contents };
  const { archive, done, stop } = packUpload(hostDir, entries, SMALL_ARCHIVE_BYTES, how);
  try {
    if (ctx.server) {
      const r = await ctx.run(EXTRACT_ARGV, { input: Buffer.isBuffer(archive) ? archive : (archive as unknown as AsyncIterable<Buffer>) });
      if (r.exitCode !== 0) throw failed(`upload ${hostDir}`, r);
      return await done;
    }
    const body = Buffer.isBuffer(archive) ? archive : (archive as unknown as NodeJS.ReadableStream);
    const [stats] = await Promise.all([done, ctx.container.putArchive(body, { path: WORKDIR })]);
    return stats;
  } catch (e) {
    // If the engine or the server failed first, a streamed archive must stop reading files (and release them).
    stop();
    throw engineFailure(`upload ${hostDir}`, e, ctx.docker);
  }
}

/** Extracting a file over a folder would delete the folder and all it holds: refused. */
function refuseFolders(checks: PathCheck[], paths: readonly string[]): void {
  const at = checks.findIndex((c) => c.final.dir);
  if (at >= 0) throw fsError('EISDIR', `cannot write ${paths[at]}: it is a folder in the sandbox`);
}

export async function writeFiles(ctx: FilesContext, files: readonly FileToWrite[]): Promise<void> {
  const paths = files.map((f) => f.path);
  const mode = (f: FileToWrite) => (f.mode ?? 0o644) & 0o777;
  const isDir = (checks: PathCheck[]) => refuseFolders(checks, paths);
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

/** What a server's read said about the path and how it ended; throws as the local backend's fs would. */
function checkRead(p: string, r: ExecResult, stderr: Buffer[]): void {
  const target = insideRoots(ROOTS, p, WORKDIR);
  const { checks, rest } = readKinds(Buffer.concat(stderr).toString('utf8'), [target], [p]);
  if (!checks[0]!.final.exists) throw fsError('ENOENT', `no such file in the sandbox: ${p}`);
  if (checks[0]!.final.dir || r.exitCode === 4) throw fsError('EISDIR', `not a regular file in the sandbox: ${p}`);
  if (r.exitCode !== 0) throw failed(`read ${p}`, r, rest);
}

/** Stderr kept of a file transfer: the path checks and what tar or cat said, never a flood. */
const TRANSFER_STDERR_BYTES = 64 * 1024;

export async function readFile(ctx: FilesContext, p: string): Promise<Buffer> {
  const missing = () => fsError('ENOENT', `no such file in the sandbox: ${p}`);
  const notFile = () => fsError('EISDIR', `not a regular file in the sandbox: ${p}`);
  if (ctx.server) {
    const target = insideRoots(ROOTS, p, WORKDIR);
    // The content is kept as bytes, not as the capped text of a command's output.
    const out: Record<OutputStream, Buffer[]> = { stdout: [], stderr: [] };
    const r = await ctx.run(pathsArgv('read', [target]), { onOutput: (s, c) => void out[s].push(c), maxOutputBytes: 0 });
    checkRead(p, r, out.stderr);
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

/**
 * A sandbox file into a host file, streamed through the server (its output written to the file as
 * it comes: a big setup archive is never whole in memory); through memory without the server.
 */
export async function downloadFile(ctx: FilesContext, p: string, hostFile: string): Promise<void> {
  if (!ctx.server) return writeFile(hostFile, await readFile(ctx, p));
  const target = insideRoots(ROOTS, p, WORKDIR);
  const fd = openSync(hostFile, 'w');
  const stderr: Buffer[] = [];
  let kept = 0;
  let writeError: unknown;
  let ok = false;
  try {
    const r = await ctx.run(pathsArgv('read', [target]), {
      maxOutputBytes: 0,
      onOutput: (s, c) => {
        if (s === 'stderr') {
          if (kept < TRANSFER_STDERR_BYTES) stderr.push(c.subarray(0, TRANSFER_STDERR_BYTES - kept));
          kept += c.length;
        } else if (!writeError) {
          try {
            for (let off = 0; off < c.length;) off += writeSync(fd, c, off);
          } catch (e) {
            writeError = e; // the host's disk: said once the command has ended
          }
        }
      },
    });
    checkRead(p, r, stderr);
    if (writeError) throw writeError;
    ok = true;
  } finally {
    closeSync(fd);
    if (!ok) unlinkSync(hostFile);
  }
}

/**
 * A host file (from an offset) into the sandbox, streamed through the server as a one-file archive
 * (never whole in memory); through memory without the server. Replaces the file; refuses a folder.
 */
export async function uploadFile(ctx: FilesContext, hostFile: string, p: string, o: { start?: number; mode?: number } = {}): Promise<void> {
  const mode = (o.mode ?? 0o644) & 0o777;
  const start = o.start ?? 0;
  if (!ctx.server) return writeFiles(ctx, [{ path: p, content: await buffer(createReadStream(hostFile, { start })), mode }]);
  const target = insideRoots(ROOTS, p, WORKDIR);
  const size = (await stat(hostFile)).size - start;
  const pack = tar.pack();
  const packed = (async () => {
    await streamEntry(pack, { name: fromRoot(target.abs), type: 'file', mode, size }, createReadStream(hostFile, { start }));
    pack.finalize();
  })();
  packed.catch((e: unknown) => pack.destroy(e as Error));
  let r: ExecResult;
  try {
    r = await ctx.run(pathsArgv('write', [target]), { input: pack as unknown as AsyncIterable<Buffer> });
    await packed;
  } catch (e) {
    pack.destroy(); // the server failed first: the archive stops reading the file
    throw engineFailure(`write ${p}`, e, ctx.docker);
  }
  const { checks, rest } = readKinds(r.stderr, [target], [p]);
  refuseFolders(checks, [p]);
  if (r.exitCode !== 0) throw failed(`write ${p}`, r, rest);
}

export async function removeFiles(ctx: FilesContext, paths: readonly string[]): Promise<void> {
  if (!paths.length) return;
  const targets = paths.map((p) => insideRoots(ROOTS, p, WORKDIR));
  const r = await ctx.run(pathsArgv('remove', targets));
  const { rest } = readKinds(r.stderr, targets, paths);
  if (r.exitCode !== 0) throw failed(`remove ${paths.join(', ')}`, r, rest);
}
