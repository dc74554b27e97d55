import { RedgreenError } from '../../errors.js';
import { OutputCapture, stopper } from './capture.js';
import { FramedStream, newToken } from './frames.js';
import type { ExecResult, OutputStream } from './types.js';

/** What a command needs, however the backend runs it (the server, an exec, or a container of its own). */
export interface CommandRequest {
  argv: readonly string[];
  env: Record<string, string>;
  cwd: string;
  timeoutMs?: number;
  maxOutputBytes?: number;
  onOutput?: (stream: OutputStream, chunk: Buffer) => void;
  signal?: AbortSignal;
  /**
   * The harness's own commands (files, checks, the reset): argv as it is, in the server's
   * environment and folder, without env's one more program start; `env` and `cwd` are ignored.
   */
  internal?: boolean;
}

/** ok: nothing the command started is left; dirty: something could not be killed; nostart: it could not be forked. */
export type ServerState = 'ok' | 'dirty' | 'nostart';
const STATES: readonly string[] = ['ok', 'dirty', 'nostart'];

/** Counters of a sandbox's cgroup that only grow: what a command added tells what it ran into. */
export interface LimitCounters {
  oomKills: number;
  pidsMax: number;
}

/** What the sandbox says after a command: its counters, and a folder left full (its mount point). */
export interface LimitReading {
  counters: LimitCounters;
  fullMount: string | null;
}

export interface ServerOutcome {
  result: ExecResult;
  state: ServerState;
  /** The sandbox's limit counters after the command (null when the server does not read them). */
  limits: LimitReading | null;
}

export interface CommandServerOptions {
  /** Stops the command being run (timeout, abort). Default: ask the server (`kill <id>`), which then frames it. */
  stop?: (id: string) => void;
  /**
   * The server and every command die together (a namespace of their own): when it dies while a
   * command runs, that command was killed (SIGKILL, exit 137) with everything else, by a stop or
   * by the command itself. Otherwise the command fails with the server.
   */
  diesWithCommand?: boolean;
  /** The request's words as this server reads them (default: requestWords). */
  words?: (req: CommandRequest) => string;
}

/** The server's first line: what it is, and whether the sandbox's folders were empty when it started. */
const HELLO = 'redgreen-server';
/** Input goes to the server in chunks of at most this size (each costs the server a `head`). */
const INPUT_CHUNK = 1024 * 1024;

/** A command's input: bytes in memory, or a stream of them (a tar archive being packed). */
export type CommandInput = Buffer | AsyncIterable<Buffer>;

/** A word for the server's `eval "set -- …"`: single-quoted, a newline as "$NL" (a request is one line). */
export function shellWord(s: string): string {
  return `'${s.replace(/'/g, `'\\''`).replace(/\n/g, `'"$NL"'`)}'`;
}

/**
 * The argv the server runs as the sandbox user: env with only the given variables, in the cwd,
 * with default signal handling. A program whose name holds "=" would be taken for a variable by
 * env: it is run through sh's exec instead.
 */
export function requestWords(r: Pick<CommandRequest, 'argv' | 'env' | 'cwd' | 'internal'>): string {
  if (r.internal) return r.argv.map(shellWord).join(' ');
  const argv = r.argv[0]?.includes('=') ? ['/bin/sh', '-c', 'exec "$@"', 'sh', ...r.argv] : r.argv;
  const vars = Object.entries(r.env).map(([k, v]) => `${k}=${v}`);
  return ['env', '-i', `--chdir=${r.cwd}`, '--default-signal', ...vars, ...argv].map(shellWord).join(' ');
}

/**
 * The harness's end of a command server in a sandbox (Docker's server-script.ts, bwrap's
 * server.ts): a long-lived shell that runs one command at a time and frames each one's output and
 * outcome (frames.ts). One connection for the sandbox's life, one command at a time (a second one
 * waits for the first: their output shares the connection), each read up to its frames. Once the
 * server dies or breaks the protocol, `failure` says how and every command fails with it: the
 * owner retires the server.
 */
export class CommandServer {
  private readonly out = new FramedStream('the command server (stdout)');
  private readonly err = new FramedStream('the command server (stderr)');
  private tail: Promise<unknown> = Promise.resolve();
  private seq = 0;
  failure: Error | null = null;
  /** Settles when the server becomes unusable (it ended, failed or was closed): a write waiting for the connection to drain stops waiting. */
  readonly dead: Promise<void>;
  private die!: () => void;
  /** Commands asked for and not yet settled. */
  pending = 0;
  /** The server's output ended (it died, its connection closed), not a protocol error. */
  private gone = false;

  /** `stream`: the server's input (its output comes in through `push`, however the transport splits it). */
  constructor(
    private readonly stream: NodeJS.WritableStream,
    private readonly options: CommandServerOptions = {},
  ) {
    this.dead = new Promise<void>((resolve) => (this.die = resolve));
  }

  /** Output of the server, as the transport delivers it. */
  push(name: OutputStream, chunk: Buffer): void {
    (name === 'stdout' ? this.out : this.err).push(chunk);
  }

  /**
   * The server's hello, once it comes: `ready <fresh>` (fresh: 1 when the sandbox's folders were
   * empty at its start), or `keeper` (its host lacks what it needs). Ends the line the server
   * discards first (Podman starts a container's input with the attach request's body).
   */
  hello(): Promise<string[]> {
    const hello = this.out.expect(HELLO, (b) => this.fail(new Error(`the sandbox wrote before its server started: ${b}`)));
    this.stream.write('\n');
    return hello;
  }

  /**
   * Runs a command once the ones before it are done, with `input` as its stdin (else /dev/null;
   * a command with input is never killed: it gets no timeout). Rejects only when the server is
   * unusable (`failure`), or with the error reading `input` threw.
   */
  run(req: CommandRequest, input?: CommandInput): Promise<ServerOutcome> {
    this.pending++;
    const p = this.tail.then(() => this.runNow(req, input)).finally(() => this.pending--);
    this.tail = p.catch(() => undefined);
    return p;
  }

  private async runNow(req: CommandRequest, input?: CommandInput): Promise<ServerOutcome> {
    if (this.failure) throw this.failure;
    const id = String(++this.seq);
    const token = newToken();
    const capture = new OutputCapture(req.maxOutputBytes, req.onOutput);
    const frames = Promise.all([
      this.out.expect(token, (c) => capture.push('stdout', c)),
      this.err.expect(token, (c) => capture.push('stderr', c)),
    ]);
    frames.catch(() => undefined); // awaited below, unless sending the input failed first
    let inputError: unknown;
    const words = (this.options.words ?? requestWords)(req);
    if (input) inputError = await this.send(`put ${id} ${token} ${words}\n`, input);
    else this.stream.write(`run ${id} ${token} ${words}\n`);
    const stop = stopper(input ? {} : req, () => (this.options.stop ? this.options.stop(id) : void this.stream.write(`kill ${id}\n`)));
    try {
      const framed = await frames.catch((e: unknown) => {
        if (this.options.diesWithCommand && this.gone && !inputError) return null;
        throw e;
      });
      if (!framed) return { result: capture.result(137, stop.state), state: 'ok', limits: null };
      const [[outId, code, state, oom, pids, full], [errId]] = framed;
      if (inputError) throw inputError;
      if (outId !== id || errId !== id || !/^\d+$/.test(code ?? '') || !STATES.includes(state ?? '')) {
        this.fail(new Error(`the command server sent a frame that does not end command ${id}`));
        throw this.failure!;
      }
      const limits =
        /^\d+$/.test(oom ?? '') && /^\d+$/.test(pids ?? '')
          ? { counters: { oomKills: Number(oom), pidsMax: Number(pids) }, fullMount: full && full !== '-' ? full : null }
          : null;
      return { result: capture.result(Number(code), stop.state), state: state as ServerState, limits };
    } finally {
      stop.dispose();
    }
  }

  /**
   * Sends a request and its input in chunks, then the end of it, in as few writes as it can (all
   * in one for a small input). A read error of the input ends it early (the command sees a
   * truncated input and fails) and is returned, not thrown: the server must still be told the
   * input ended.
   */
  private async send(request: string, input: CommandInput): Promise<unknown> {
    const parts: Buffer[] = [Buffer.from(request)];
    let held: Buffer[] = [];
    let size = 0;
    const flush = async (last: boolean) => {
      if (size) parts.push(Buffer.from(`${size}\n`), ...held);
      if (last) parts.push(Buffer.from('0\n'));
      held = [];
      size = 0;
      await this.write(Buffer.concat(parts.splice(0)));
    };
    let error: unknown;
    try {
      for await (const c of Buffer.isBuffer(input) ? [input] : input) {
        held.push(c);
        size += c.length;
        if (size >= INPUT_CHUNK) await flush(false);
      }
    } catch (e) {
      error = e;
    }
    await flush(true);
    return error;
  }

  /** Writes to the server, waiting while the connection is full (or until the server is gone). */
  private async write(data: string | Buffer): Promise<void> {
    if (this.failure) throw this.failure;
    if (!this.stream.write(data)) await Promise.race([new Promise((resolve) => this.stream.once('drain', resolve)), this.dead]);
    if (this.failure) throw this.failure;
  }

  /** The server's output ended, every byte of it pushed: the server is gone. */
  ended(message: string): void {
    if (!this.failure) this.gone = true;
    this.fail(new Error(message));
  }

  /** Marks the server unusable: a command being read fails, later ones too. */
  fail(e: Error): void {
    if (this.failure) return;
    this.failure = new RedgreenError('SANDBOX_FAILED', e.message, undefined, { cause: e });
    this.die();
    this.out.fail(this.failure);
    this.err.fail(this.failure);
  }

  /** Closes the connection: the server reads the end of its input and exits. */
  close(): void {
    this.fail(new Error('the command server was closed'));
    (this.stream as NodeJS.ReadWriteStream & { destroy?: () => void }).end();
    (this.stream as NodeJS.ReadWriteStream & { destroy?: () => void }).destroy?.();
  }
}
