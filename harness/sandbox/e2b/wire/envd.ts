import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import type { SandboxAccess } from './api.js';
import { connectStatus, END_STREAM, envelope, EnvelopeReader } from './connect.js';
import { ENVD_PORT, envdUrl, USER_AGENT, type E2BConnection } from './connection.js';
import { E2BServiceError, exchange, open, readAll, serviceError } from './http.js';

export interface StartOptions {
  envs?: Record<string, string>;
  cwd?: string;
  user?: string;
  /** envd ends the command after this long (Connect's deadline); 0: never. */
  timeoutMs: number;
  /** How long the start may take (until envd says the process runs). */
  requestTimeoutMs: number;
  signal?: AbortSignal;
  onStdout?(chunk: Buffer): void;
  onStderr?(chunk: Buffer): void;
}

export interface ProcessEnd {
  /** envd's exit code: -1 for a process ended by a signal. */
  exitCode: number;
  error?: string;
}

export interface RemoteProcess {
  pid: number;
  /** Settles when envd reports the end; rejects when the stream breaks first (cut, aborted, the sandbox gone). */
  ended: Promise<ProcessEnd>;
}

export interface RunResult {
  exitCode: number;
  stdout: string;
  stderr: string;
}

type ProcessEvent = {
  event?: {
    start?: { pid?: number };
    data?: { stdout?: string; stderr?: string };
    end?: { exitCode?: number; error?: string };
  };
};

function versionAtLeast(v: string, min: string): boolean {
  const a = v.split('.').map((x) => Number.parseInt(x, 10) || 0);
  const b = min.split('.').map(Number);
  for (let i = 0; i < 3; i++) if ((a[i] ?? 0) !== (b[i] ?? 0)) return (a[i] ?? 0) > (b[i] ?? 0);
  return true;
}

/** A stream that ended, or failed, before envd said how the process ended. */
class StreamBroken extends Error {
  override readonly name = 'StreamBroken';
}

/**
 * One sandbox's envd, as the SDK reaches it: through E2B's proxy (routing headers), with the
 * sandbox's access token, as the named user. Commands run as `/bin/bash -l -c <line>` (the SDK's
 * `commands.run`), streamed over Connect's `process.Process/Start`; files go through `/files`.
 */
export class Envd {
  readonly sandboxId: string;
  private readonly base: string;
  private readonly headers: Record<string, string>;
  /** An envd before 0.4 has no default user: the SDK names `user` then, and so does this. */
  private readonly defaultUser: string | undefined;
  private readonly octetStream: boolean;

  constructor(c: E2BConnection, access: SandboxAccess) {
    this.sandboxId = access.sandboxId;
    this.base = envdUrl(c, access.sandboxId, access.domain);
    this.headers = {
      'e2b-sandbox-id': access.sandboxId,
      'e2b-sandbox-port': String(ENVD_PORT),
      'user-agent': USER_AGENT(),
      ...(access.envdAccessToken ? { 'x-access-token': access.envdAccessToken } : {}),
    };
    this.defaultUser = versionAtLeast(access.envdVersion, '0.4.0') ? undefined : 'user';
    this.octetStream = versionAtLeast(access.envdVersion, '0.5.7');
  }

  private auth(user: string | undefined): Record<string, string> {
    const u = user ?? this.defaultUser;
    return u ? { authorization: `Basic ${Buffer.from(`${u}:`).toString('base64')}` } : {};
  }

  /** Starts a command; resolves once envd says it runs (its pid), with its output going to the callbacks. */
  async start(line: string, o: StartOptions): Promise<RemoteProcess> {
    const what = `starting a command in sandbox ${this.sandboxId}`;
    const body = envelope({
      // Empty fields left out, as protobuf's JSON leaves them.
      process: {
        cmd: '/bin/bash',
        args: ['-l', '-c', line],
        ...(o.envs && Object.keys(o.envs).length ? { envs: o.envs } : {}),
        ...(o.cwd ? { cwd: o.cwd } : {}),
      },
      stdin: false,
    });
    const { res, settled } = await open({
      method: 'POST',
      url: `${this.base}/process.Process/Start`,
      headers: {
        ...this.headers,
        ...this.auth(o.user),
        'content-type': 'application/connect+json',
        'connect-protocol-version': '1',
        'keepalive-ping-interval': '50',
        ...(o.timeoutMs > 0 ? { 'connect-timeout-ms': String(o.timeoutMs) } : {}),
      },
      body,
      timeoutMs: o.requestTimeoutMs,
      ...(o.signal ? { signal: o.signal } : {}),
    });
    if (res.statusCode !== 200) {
      settled();
      throw serviceError(what, res.statusCode ?? 0, await readAll(res), res.statusMessage);
    }
    return new Promise<RemoteProcess>((resolveStart, rejectStart) => {
      let started = false;
      let end: ProcessEnd | null = null;
      let failure: Error | null = null;
      let settle!: { resolve: (e: ProcessEnd) => void; reject: (e: Error) => void };
      const ended = new Promise<ProcessEnd>((resolve, reject) => (settle = { resolve, reject }));
      // Nobody may be waiting yet (the start failed): the rejection is the start's.
      ended.catch(() => undefined);
      const fail = (e: Error) => {
        failure ??= e;
        settled();
        if (started) settle.reject(failure);
        else rejectStart(failure);
      };
      const reader = new EnvelopeReader();
      const onMessage = (flags: number, m: unknown) => {
        if (flags & END_STREAM) {
          const err = (m as { error?: { code?: string; message?: string } }).error;
          if (err && !end)
            failure ??= new E2BServiceError(connectStatus(err.code), `${what}: ${err.code ?? 'error'}: ${err.message ?? ''}`);
          return;
        }
        const ev = (m as ProcessEvent).event;
        if (!ev) return;
        if (ev.start && !started) {
          started = true;
          settled();
          resolveStart({ pid: Number(ev.start.pid ?? 0), ended });
        } else if (ev.data) {
          if (ev.data.stdout) o.onStdout?.(Buffer.from(ev.data.stdout, 'base64'));
          if (ev.data.stderr) o.onStderr?.(Buffer.from(ev.data.stderr, 'base64'));
        } else if (ev.end) {
          end = { exitCode: ev.end.exitCode ?? 0, ...(ev.end.error ? { error: ev.end.error } : {}) };
        }
      };
      res.on('data', (chunk: Buffer) => {
        let messages;
        try {
          messages = [...reader.feed(chunk)];
        } catch (e) {
          res.destroy();
          return fail(new StreamBroken(`${what}: envd sent a message that is not JSON (${(e as Error).message})`));
        }
        for (const { flags, message } of messages) onMessage(flags, message);
      });
      res.on('error', (e) => fail(e));
      let done = false;
      const finish = () => {
        if (done) return;
        done = true;
        if (failure) return fail(failure);
        if (!started) return fail(new StreamBroken(`${what}: the stream ended before the process started`));
        if (!end) return fail(new StreamBroken(`${what}: the stream ended without the process's end`));
        settle.resolve(end);
      };
      res.on('end', finish);
      // Aborted or cut without an error event: what arrived decides (an end event, or a break).
      res.on('close', finish);
    });
  }

  /** A command to its end, its output collected; a non-zero exit is a result. */
  async run(line: string, o: Omit<StartOptions, 'onStdout' | 'onStderr'>): Promise<RunResult> {
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    const p = await this.start(line, { ...o, onStdout: (b) => out.push(b), onStderr: (b) => err.push(b) });
    const end = await p.ended;
    return { exitCode: end.exitCode, stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8') };
  }

  private filesUrl(p: string, user: string | undefined): string {
    const u = user ?? this.defaultUser;
    return `${this.base}/files?path=${encodeURIComponent(p)}${u ? `&username=${encodeURIComponent(u)}` : ''}`;
  }

  /**
   * Writes a file (its folders made as needed); returns the path envd wrote, which envd 0.5 and
   * later give absolute. The body is streamed; an envd before 0.5.7 takes multipart only.
   */
  async writeFile(p: string, body: Buffer | Readable, o: { user?: string; requestTimeoutMs: number }): Promise<string> {
    const what = `writing ${p} in sandbox ${this.sandboxId}`;
    let payload: Buffer | Readable = body;
    let type = 'application/octet-stream';
    if (!this.octetStream) {
      const boundary = `redgreen${randomBytes(12).toString('hex')}`;
      type = `multipart/form-data; boundary=${boundary}`;
      const head = Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${p.replace(/["\r\n]/g, '_')}"\r\n` +
          'Content-Type: application/octet-stream\r\n\r\n',
      );
      const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
      payload = Buffer.isBuffer(body) ? Buffer.concat([head, body, tail]) : Readable.from(framed(head, body, tail));
    }
    const a = await exchange(what, {
      method: 'POST',
      url: this.filesUrl(p, o.user),
      headers: { ...this.headers, 'content-type': type },
      body: payload,
      // A streamed body takes as long as it takes; a buffer is one request.
      timeoutMs: Buffer.isBuffer(body) ? o.requestTimeoutMs : 0,
    });
    const written = JSON.parse(a.body.toString('utf8') || '[]') as { path?: string }[];
    if (!written[0]?.path) throw new E2BServiceError(a.status, `${what}: envd did not say what it wrote`);
    return written[0].path;
  }

  /** A file's bytes as a stream. */
  async readFile(p: string, o: { user?: string; requestTimeoutMs: number }): Promise<IncomingMessage> {
    const { res, settled } = await open({
      method: 'GET',
      url: this.filesUrl(p, o.user),
      headers: this.headers,
      timeoutMs: o.requestTimeoutMs,
    });
    settled();
    if (res.statusCode !== 200)
      throw serviceError(`reading ${p} in sandbox ${this.sandboxId}`, res.statusCode ?? 0, await readAll(res), res.statusMessage);
    return res;
  }
}

async function* framed(head: Buffer, body: Readable, tail: Buffer): AsyncGenerator<Buffer> {
  yield head;
  for await (const c of body) yield c as Buffer;
  yield tail;
}
