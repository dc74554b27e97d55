import { randomUUID } from 'node:crypto';
import { constants as osc } from 'node:os';
import { sandboxFailure } from './errors.js';
import { EXEC_MARKER_VAR } from '../core/kill-script.js';
import { CappedOutput } from '../core/output.js';
import { DEFAULT_MAX_OUTPUT_BYTES } from '../core/output.js';
import type { ExecOptions, ExecResult } from '../core/types.js';
import { stopper } from '../core/capture.js';
import type { Envd, ProcessEnd, RemoteProcess } from './wire/envd.js';

/** After a confirmed kill, the end of the stream is due at once; this long without it, the sandbox is given up. */
export const KILL_GRACE_MS = 10_000;

export interface RemoteExecDeps {
  envd: Envd;
  user: string | undefined;
  requestTimeoutMs: number;
  /** Kills every process carrying `marker` in the sandbox; true once none is left. Never throws. */
  killMarked(marker: string): Promise<boolean>;
  /** A kill could not be confirmed: the sandbox is destroyed so nothing keeps running unseen. */
  abandon(reason: string): Promise<void>;
  /** Keeps the local end of the stream known to the sandbox, so destroy() can tear it down. */
  track(controller: AbortController, done: Promise<unknown>): void;
}

type End = { exitCode: number } | { error: unknown };

/** Takes the start of stdout before the command's own output (a prelude's outcome line, see prelude.ts). */
export interface StdoutFilter {
  /** Whole lines as they arrive; returns the part that is the command's own output. */
  feed(text: string): string;
  /** The stream ended: text it still held. */
  end(): string;
  /** Set once the outcome line was read; `ok`: everything after it is the command's own. */
  readonly outcome: { ok: boolean } | null;
}

/**
 * Stdout through a filter line by line until it has read its outcome, then the bytes as they
 * come: the command's own output is never decoded and encoded again (invalid UTF-8 stays as it was).
 */
function filtered(filter: StdoutFilter, keep: (chunk: Buffer) => void) {
  let held: Buffer | null = null;
  return {
    write(chunk: Buffer): void {
      if (filter.outcome?.ok) return keep(chunk);
      let buf = held ? Buffer.concat([held, chunk]) : chunk;
      held = null;
      for (let nl = buf.indexOf(10); nl >= 0 && !filter.outcome?.ok; nl = buf.indexOf(10)) {
        keep(Buffer.from(filter.feed(buf.toString('utf8', 0, nl + 1))));
        buf = buf.subarray(nl + 1);
      }
      if (filter.outcome?.ok) keep(buf);
      else if (buf.length) held = buf;
    },
    end(): void {
      keep(Buffer.from((held ? filter.feed(held.toString('utf8')) : '') + filter.end()));
    },
  };
}

const SIGNAL_NAMES = new Map(Object.entries(osc.signals).map(([name, n]) => [n, name]));

function withDeadline<T>(p: Promise<T>, ms: number): Promise<T | undefined> {
  let t: NodeJS.Timeout | undefined;
  const deadline = new Promise<undefined>((resolve) => (t = setTimeout(() => resolve(undefined), ms)));
  return Promise.race([p, deadline]).finally(() => clearTimeout(t));
}

/**
 * Runs one command line through envd (wire/envd.ts) with output kept like the local backend's:
 * capped, counted and hashed per stream. Aborting the request would not stop the remote process,
 * so a timeout or an abort kills it by its marker inside the sandbox and waits for the stream to
 * end; when that cannot be confirmed, the sandbox is destroyed. A stream lost for any other reason
 * is an infrastructure failure (SANDBOX_FAILED): the output is incomplete and must not be scored.
 */
export async function remoteExec(
  deps: RemoteExecDeps,
  commandLine: string,
  envs: Record<string, string>,
  o: ExecOptions,
  stdoutFilter?: StdoutFilter,
): Promise<ExecResult> {
  const started = performance.now();
  const cap = o.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES;
  const out = { stdout: new CappedOutput(cap), stderr: new CappedOutput(cap) };
  const keep = (name: 'stdout' | 'stderr', chunk: Buffer) => {
    if (!chunk.length) return;
    out[name].push(chunk);
    o.onOutput?.(name, chunk);
  };
  const stdout = stdoutFilter ? filtered(stdoutFilter, (chunk) => keep('stdout', chunk)) : null;
  const onStdout = (chunk: Buffer) => (stdout ? stdout.write(chunk) : keep('stdout', chunk));
  const onStderr = (chunk: Buffer) => keep('stderr', chunk);
  const marker = randomUUID();
  const local = new AbortController();
  /** What stopped the command: the run's abort before it started, else its stopper's state (core/capture.ts). */
  let stoppedBy = { timedOut: false, aborted: Boolean(o.signal?.aborted) };
  let end: End;
  if (stoppedBy.aborted) {
    end = { exitCode: 128 + osc.signals.SIGKILL };
  } else {
    let settle!: () => void;
    const stopped = new Promise<'stopped'>((resolve) => (settle = () => resolve('stopped')));
    let proc: RemoteProcess;
    try {
      proc = await deps.envd.start(commandLine, {
        envs: { ...envs, [EXEC_MARKER_VAR]: marker },
        ...(deps.user ? { user: deps.user } : {}),
        timeoutMs: 0,
        requestTimeoutMs: deps.requestTimeoutMs,
        signal: local.signal,
        onStdout,
        onStderr,
      });
    } catch (e) {
      throw sandboxFailure('the command could not start', e);
    }
    const ended: Promise<End> = proc.ended.then(
      (r: ProcessEnd) => ({ exitCode: r.exitCode }),
      (e: unknown) => ({ error: e }),
    );
    deps.track(local, ended);
    // An abort while the command was starting (before this) stops it soon too.
    const stop = stopper(o, settle);
    stoppedBy = stop.state;
    try {
      const first = await Promise.race([ended, stopped]);
      if (first === 'stopped') {
        const confirmed = await deps.killMarked(marker);
        const after = confirmed ? await withDeadline(ended, KILL_GRACE_MS) : undefined;
        if (!after) {
          await deps.abandon(`the ${stop.state.timedOut ? 'timeout' : 'abort'} kill of a command could not be confirmed`);
          local.abort();
        }
        end = after && 'exitCode' in after ? after : { exitCode: 128 + osc.signals.SIGKILL };
      } else {
        end = first;
      }
    } finally {
      stop.dispose();
    }
    if ('error' in end) {
      // The stream broke (cut, sandbox gone) while the command may still run: stop it, then fail.
      if (!(await deps.killMarked(marker))) await deps.abandon('lost a command stream and could not kill the command');
      local.abort();
      throw sandboxFailure('lost the output stream of a running command', end.error);
    }
  }
  stdout?.end();
  // envd reports a process killed by a signal as -1; only a SIGKILL (ours, or the OOM killer's) does that here.
  const exitCode = end.exitCode < 0 ? 128 + osc.signals.SIGKILL : end.exitCode;
  const stdoutInfo = out.stdout.finish();
  const stderrInfo = out.stderr.finish();
  return {
    exitCode,
    signal: exitCode > 128 ? (SIGNAL_NAMES.get(exitCode - 128) ?? null) : null,
    stdout: stdoutInfo.text,
    stderr: stderrInfo.text,
    stdoutInfo,
    stderrInfo,
    timedOut: stoppedBy.timedOut,
    aborted: stoppedBy.aborted,
    truncated: stdoutInfo.truncated || stderrInfo.truncated,
    durationMs: Math.round(performance.now() - started),
  };
}
