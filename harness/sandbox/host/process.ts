import { spawn } from 'node:child_process';
import { constants as osc } from 'node:os';
import { onAbort } from '../core/capture.js';
import { CappedOutput, DEFAULT_MAX_OUTPUT_BYTES } from '../core/output.js';
import type { ExecResult, OutputStream } from '../core/types.js';

export interface RunProcessOptions {
  cwd: string;
  env: Record<string, string>;
  timeoutMs?: number;
  maxOutputBytes?: number;
  onOutput?: (stream: OutputStream, chunk: Buffer) => void;
  signal?: AbortSignal;
  /** Kills everything the command started; called on timeout, abort and exit. */
  killTree: (pgid: number | undefined) => Promise<unknown>;
  /** Stops a running command on timeout or abort (default: killTree). */
  stop?: (pgid: number | undefined) => Promise<unknown>;
  /** The process group of the command, as soon as it exists (for a kill from outside: destroy). */
  onSpawn?: (pgid: number | undefined) => void;
}

/**
 * Runs one host process in its own session (so its group can be killed as a whole) with exactly
 * the environment given. Never rejects for a non-zero exit. When the main process exits, whatever
 * it left behind is killed too: no process outlives the command that started it, and pipes held
 * open by a stray daemon cannot hang the harness. Plain `child_process.spawn`: a spawn blocks the
 * event loop until the child has exec'd, and a wrapper's own work per command adds up over
 * thousands of small fixtures.
 */
export async function runProcess(file: string, args: readonly string[], o: RunProcessOptions): Promise<ExecResult> {
  const started = performance.now();
  const cap = o.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES;
  const out = { stdout: new CappedOutput(cap), stderr: new CappedOutput(cap) };
  let timedOut = false;
  let aborted = false;
  let spawnError: Error | null = null;

  const child = spawn(file, args, { cwd: o.cwd, env: o.env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  const pgid = child.pid;
  o.onSpawn?.(pgid);
  for (const name of ['stdout', 'stderr'] as const) {
    child[name].on('data', (chunk: Buffer) => {
      out[name].push(chunk);
      o.onOutput?.(name, chunk);
    });
  }
  // Both pipes at their end: every byte the command (and anything still holding them) wrote is in.
  const drained = Promise.all(['stdout', 'stderr'].map((n) => new Promise((r) => child[n as 'stdout'].once('close', r))));

  const stop = (reason: 'timeout' | 'abort') => {
    if (reason === 'timeout') timedOut = true;
    else aborted = true;
    void (o.stop ?? o.killTree)(pgid);
  };
  const timer = o.timeoutMs ? setTimeout(() => stop('timeout'), o.timeoutMs) : undefined;
  const forget = o.signal ? onAbort(o.signal, () => stop('abort')) : undefined;

  try {
    const { code, sig } = await new Promise<{ code: number | null; sig: NodeJS.Signals | null }>((resolve) => {
      child.once('exit', (code, sig) => resolve({ code, sig }));
      child.once('error', (e) => {
        spawnError = e;
        resolve({ code: null, sig: null });
      });
    });
    await o.killTree(pgid);
    await drained;
    const exitCode = code ?? (sig ? 128 + (osc.signals[sig] ?? 0) : 127);
    const stdoutInfo = out.stdout.finish();
    const stderrInfo = out.stderr.finish();
    let stderr = stderrInfo.text;
    if (spawnError) {
      // The process never started (ENOENT, EACCES): say why, like a shell would.
      stderr += `${stderr && !stderr.endsWith('\n') ? '\n' : ''}${(spawnError as Error).message}\n`;
    }
    return {
      exitCode,
      signal: sig,
      stdout: stdoutInfo.text,
      stderr,
      stdoutInfo,
      stderrInfo,
      timedOut,
      aborted,
      truncated: stdoutInfo.truncated || stderrInfo.truncated,
      durationMs: Math.round(performance.now() - started),
    };
  } finally {
    clearTimeout(timer);
    forget?.();
  }
}
