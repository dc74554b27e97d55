import { randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import path from 'node:path';
import { RedgreenError } from '../../errors.js';
import { isGone, sandboxFailure } from './errors.js';
import { remoteExec } from './exec.js';
import { HelperCalls } from './calls.js';
import type { Step } from './prelude.js';
import { HELPER_NO_SUCH_FILE, ROOT_IN_HOME } from './script.js';
import { packFiles, packUpload, uploadBuffer } from '../core/tar.js';
import { uploadEntries } from '../core/tree.js';
import type { ExecOptions, ExecResult, FileToWrite, Sandbox, UploadOptions, UploadStats } from '../core/types.js';
import type { Envd } from './wire/envd.js';

/** Archives up to this size go inline, base64 in the command (well under Linux's 128 KiB per argument). */
export const INLINE_ARCHIVE_BYTES = 64 * 1024;

export interface E2BSandboxContext {
  user: string | undefined;
  requestTimeoutMs: number;
  /** The sandbox's E2B timeout; renewed every third of it while the sandbox is in use. */
  lifetimeMs: number;
  /** The allowlisted environment every command gets (see e2b-env.ts). */
  env: Record<string, string>;
  /** Kills the sandbox through the API, retrying; never throws. */
  kill(sandboxId: string): Promise<void>;
  /** Renews the sandbox's E2B timeout to `lifetimeMs` from now. */
  renew(sandboxId: string): Promise<void>;
  onDestroyed(sb: E2BSandbox): void;
  /** The sandbox's home is not where its root was assumed to be (see creator.ts): stop assuming it. */
  onRootMismatch(): void;
}

/**
 * One E2B sandbox behind the Sandbox contract. The workspace and scratch folders live under
 * `<home>/redgreen` inside it; every path the harness names is checked here (lexically) and by
 * the helper inside the sandbox (no symlinked component), so writes stay in those two folders.
 */
export class E2BSandbox implements Sandbox {
  readonly backend = 'e2b';
  readonly id: string;
  readonly workdir: string;
  readonly scratchDir: string;
  private destroyed = false;
  /** Why the sandbox cannot be used any more (it died, or a kill could not be confirmed). */
  private lost: unknown = null;
  private readonly streams = new Map<AbortController, Promise<unknown>>();
  private readonly keepAlive: NodeJS.Timeout;
  private readonly env: Record<string, string>;
  private readonly calls: HelperCalls;

  /** `installed`: the helper is in place (the creator installed it); else the first call installs it. */
  constructor(
    readonly envd: Envd,
    private readonly root: string,
    private readonly ctx: E2BSandboxContext,
    installed: boolean,
  ) {
    this.id = envd.sandboxId;
    this.calls = new HelperCalls(
      {
        envd,
        root,
        user: ctx.user,
        requestTimeoutMs: ctx.requestTimeoutMs,
        assertUsable: () => this.assertUsable(),
        lose: (why) => void (this.lost ??= why),
        onRootMismatch: () => ctx.onRootMismatch(),
      },
      installed,
    );
    this.workdir = `${root}/workspace`;
    this.scratchDir = `${root}/scratch`;
    this.env = { ...ctx.env, REDGREEN_WORKSPACE: this.workdir, REDGREEN_SCRATCH: this.scratchDir };
    // Long setups and agent phases outlive the E2B timeout unless it is renewed.
    this.keepAlive = setInterval(() => void this.renew(), Math.max(1000, Math.floor(ctx.lifetimeMs / 3)));
    this.keepAlive.unref();
  }

  private async renew(): Promise<void> {
    try {
      await this.ctx.renew(this.id);
    } catch (e) {
      if (isGone(e)) this.lost ??= e;
    }
  }

  private assertUsable(): void {
    if (this.destroyed) throw new RedgreenError('SANDBOX_DESTROYED', `sandbox ${this.id} was destroyed`);
    if (this.lost) throw sandboxFailure(`sandbox ${this.id} is gone`, this.lost);
  }

  /** A sandbox path (absolute, or relative to the workspace) as a path relative to the root. */
  private rel(p: string, allowFolder = false): string {
    const abs = path.posix.resolve(this.workdir, p);
    for (const dir of [this.workdir, this.scratchDir]) {
      if ((allowFolder && abs === dir) || (abs.startsWith(`${dir}/`) && !/[\n\0]/.test(abs))) return path.posix.relative(this.root, abs);
    }
    throw new RedgreenError('SANDBOX_PATH_UNSAFE', `path ${JSON.stringify(p)} is outside the sandbox workspace`);
  }

  /** Streams a body to a new file beside the folders; returns its path. Named from home: the root may not be checked yet. */
  private async upload(body: Buffer | Readable, suffix = ''): Promise<string> {
    const name = `.upload-${randomUUID()}${suffix}`;
    try {
      await this.envd.writeFile(`${ROOT_IN_HOME}/${name}`, body, {
        ...(this.ctx.user ? { user: this.ctx.user } : {}),
        requestTimeoutMs: this.ctx.requestTimeoutMs,
      });
    } catch (e) {
      throw sandboxFailure(`uploading to sandbox ${this.id}`, e);
    }
    return `${this.root}/${name}`;
  }

  async exec(command: string | readonly string[], options: ExecOptions = {}): Promise<ExecResult> {
    this.assertUsable();
    const argv = typeof command === 'string' ? ['/bin/sh', '-c', command] : [...command];
    if (!argv.length) throw new RedgreenError('USAGE', 'exec needs a command');
    let cwd = this.workdir;
    const own: Step[] = [];
    if (options.cwd) {
      const rel = this.rel(options.cwd, true);
      own.push({ args: ['check', rel], what: 'checking the working directory' });
      cwd = `${this.root}/${rel}`;
    }
    const call = await this.calls.prepare(['run', cwd, ...argv], own);
    const deps = {
      envd: this.envd,
      user: this.ctx.user,
      requestTimeoutMs: this.ctx.requestTimeoutMs,
      killMarked: (marker: string) =>
        this.calls.run(['kill', marker], [], true).then(
          (r) => r.exitCode === 0,
          () => false,
        ),
      abandon: async (reason: string) => {
        this.lost ??= new Error(reason);
        await this.ctx.kill(this.id);
      },
      track: (c: AbortController, done: Promise<unknown>) => {
        this.streams.set(c, done);
        void done.finally(() => this.streams.delete(c));
      },
    };
    let result: ExecResult;
    try {
      result = await remoteExec(deps, call.line, { ...this.env, ...options.env }, options, call.reader ?? undefined);
    } catch (e) {
      call.finish();
      throw e;
    }
    call.finish();
    return result;
  }

  /**
   * Unpacks one archive inside the sandbox, so an upload costs one request or none of its own
   * whatever the number of files; the helper refuses symlinked paths. Member names are relative to
   * the sandbox's root folder (`workspace/…`, `scratch/…`), the only places the helper unpacks to.
   * A small archive travels inside the command itself; a bigger one is uploaded first.
   */
  private async put(archive: Buffer): Promise<void> {
    const what = 'unpacking an upload';
    if (archive.length <= INLINE_ARCHIVE_BYTES) return this.calls.step({ args: ['put64', archive.toString('base64')], what });
    await this.calls.step({ args: ['put', await this.upload(archive, '.tar')], what });
  }

  async uploadDir(hostDir: string, options: UploadOptions = {}): Promise<UploadStats> {
    this.assertUsable();
    const { entries, contents } = await uploadEntries(hostDir, options);
    const { archive, stats } = await uploadBuffer(packUpload(hostDir, entries, INLINE_ARCHIVE_BYTES, { prefix: 'workspace', contents }));
    await this.put(archive);
    return stats;
  }

  async writeFiles(files: readonly FileToWrite[]): Promise<void> {
    this.assertUsable();
    if (!files.length) return;
    const entries = files.map((f) => ({ name: this.rel(f.path), content: Buffer.from(f.content), mode: f.mode ?? 0o644 }));
    await this.put(await packFiles(entries));
  }

  async removeFiles(paths: readonly string[]): Promise<void> {
    this.assertUsable();
    if (!paths.length) return;
    await this.calls.step({ args: ['rm', ...paths.map((p) => this.rel(p))], what: 'removing files' });
  }

  async readFile(p: string): Promise<Buffer> {
    this.assertUsable();
    const r = await this.calls.run(['cat', this.rel(p)]);
    if (r.exitCode === HELPER_NO_SUCH_FILE)
      throw Object.assign(new Error(`ENOENT: no such file in sandbox ${this.id}: ${p}`), { code: 'ENOENT' });
    this.calls.expectOk(r, `reading ${p}`);
    return Buffer.from(r.stdout, 'base64');
  }

  /** Checked by the helper (no symlink on the way), then streamed by envd: never whole in memory. */
  async downloadFile(p: string, hostFile: string): Promise<void> {
    this.assertUsable();
    const rel = this.rel(p);
    const r = await this.calls.run(['file', rel]);
    if (r.exitCode === HELPER_NO_SUCH_FILE)
      throw Object.assign(new Error(`ENOENT: no such file in sandbox ${this.id}: ${p}`), { code: 'ENOENT' });
    this.calls.expectOk(r, `reading ${p}`);
    try {
      const stream = await this.envd.readFile(`${this.root}/${rel}`, {
        ...(this.ctx.user ? { user: this.ctx.user } : {}),
        requestTimeoutMs: this.ctx.requestTimeoutMs,
      });
      await pipeline(stream, createWriteStream(hostFile));
    } catch (e) {
      throw sandboxFailure(`downloading ${p} from sandbox ${this.id}`, e);
    }
  }

  /** Streamed to a new name beside the folders, then moved onto the checked path by the helper. */
  async uploadFile(hostFile: string, p: string, options: { start?: number; mode?: number } = {}): Promise<void> {
    this.assertUsable();
    const rel = this.rel(p);
    const body = createReadStream(hostFile, { start: options.start ?? 0 });
    await this.calls.step({ args: ['place', await this.upload(body), rel, (options.mode ?? 0o644).toString(8)], what: `writing ${p}` });
  }

  async destroy(): Promise<void> {
    if (this.destroyed) return;
    this.destroyed = true;
    clearInterval(this.keepAlive);
    // The kill ends every remote process; then the local ends of their streams are torn down.
    await this.ctx.kill(this.id);
    for (const c of this.streams.keys()) c.abort();
    await Promise.allSettled([...this.streams.values()]);
    this.ctx.onDestroyed(this);
  }
}
