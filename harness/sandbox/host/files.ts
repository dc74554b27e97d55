import { chmodSync, constants as fsc, createReadStream, createWriteStream, mkdirSync, rmSync } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import { copyFile, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { findInside, type FoundInside } from '../core/paths.js';
import { rewriteSync } from '../core/rewrite.js';
import { copyTree, uploadEntries } from '../core/tree.js';
import type { FileToWrite, UploadOptions, UploadStats } from '../core/types.js';

/**
 * File operations for backends whose workspace is a host folder (local, bwrap). Paths are
 * relative to the workspace, or absolute as the sandbox sees them (`inside`), and are mapped to
 * host paths; anything resolving outside the workspace or scratch folder is refused.
 */
export class HostFiles {
  constructor(
    /** Host folders, keyed by the path a command inside the sandbox sees them at. */
    private readonly mounts: { inside: string; host: string }[],
    readonly workspaceHost: string,
    /** A spare file for an upload to rewrite instead of creating one (host/roots.ts Spares). */
    private readonly spare?: () => string | undefined,
  ) {}

  /** Maps a sandbox path to its host path (refusing escapes and symlinks). */
  async toHost(p: string): Promise<string> {
    return this.locate(p).path;
  }

  /** toHost, with what it found there (core/paths.ts findInside). */
  private locate(p: string): FoundInside {
    let hostPath = p;
    if (path.isAbsolute(p)) {
      const m = this.mounts.find((x) => p === x.inside || p.startsWith(`${x.inside}/`));
      if (m) hostPath = path.join(m.host, path.relative(m.inside, p));
    }
    return findInside(
      this.mounts.map((m) => m.host),
      hostPath,
      this.workspaceHost,
    );
  }

  async uploadDir(hostDir: string, options: UploadOptions = {}): Promise<UploadStats> {
    const { entries, contents } = await uploadEntries(hostDir, options);
    return copyTree(entries, hostDir, this.workspaceHost, contents, this.spare);
  }

  /**
   * The harness writes few, small files (a patch's, a reporter): synchronously, cheaper than a
   * promise per call. A file is replaced as git replaces it (a new file, so another link to the
   * old one keeps the old content), or, when it has no other link, rewritten in place, which
   * nothing can tell apart and which makes no new inode.
   */
  async writeFiles(files: readonly FileToWrite[]): Promise<void> {
    for (const f of files) {
      const { path: dest, stat: st, folderExists } = this.locate(f.path);
      if (!folderExists) mkdirSync(path.dirname(dest), { recursive: true });
      if (st && !(st.isFile() && st.nlink === 1)) rmSync(dest, { force: true });
      rewriteSync(dest, f.content, f.mode ?? 0o644);
    }
  }

  async removeFiles(paths: readonly string[]): Promise<void> {
    for (const p of paths) await rm(await this.toHost(p), { force: true, recursive: true });
  }

  async readFile(p: string): Promise<Buffer> {
    return readFile(await this.toHost(p));
  }

  /** The host's own copy (copy_file_range): nothing passes through memory. */
  async downloadFile(p: string, hostFile: string): Promise<void> {
    await copyFile(await this.toHost(p), hostFile);
  }

  async uploadFile(hostFile: string, p: string, options: { start?: number; mode?: number } = {}): Promise<void> {
    const dest = await this.toHost(p);
    mkdirSync(path.dirname(dest), { recursive: true });
    rmSync(dest, { force: true });
    if (options.start) await pipeline(createReadStream(hostFile, { start: options.start }), createWriteStream(dest, { flags: 'wx' }));
    else await copyFile(hostFile, dest, fsc.COPYFILE_EXCL);
    chmodSync(dest, options.mode ?? 0o644);
  }
}
