import { constants as osc } from 'node:os';
import { execa } from 'execa';
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
}

/**
 * Runs one host process in its own session (so its group can be killed as a whole) with a
 * cleared environment. Never rejects for a non-zero exit. When the main process exits, whatever
 * it left behind is killed too: no process outlives the command that started it, and pipes
 * held open by a stray daemon cannot hang the harness.
 */
export async function runProcess(file: string, args: readonly string[], o: RunProcessOptions): Promise<ExecResult> {
  const started = performance.now();
  const cap = o.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES;
  const out = { stdout: new CappedOutput(cap), stderr: new CappedOutput(cap) };
  let timedOut = false;
  let aborted = false;

  const child = execa(file, args, {
    cwd: o.cwd,
    env: o.env,
    extendEnv: false,
    detached: true,
    buffer: false,
    stdin: 'ignore',
    reject: false,
    cleanup: false,
    encoding: 'buffer',
  });
  const pgid = child.pid;
  for (const name of ['stdout', 'stderr'] as const) {
    child[name]?.on('data', (chunk: Buffer) => {
      out[name].push(chunk);
      o.onOutput?.(name, chunk);
    });
  }

  const stop = (reason: 'timeout' | 'abort') => {
    if (reason === 'timeout') timedOut = true;
    else aborted = true;
    void o.killTree(pgid);
  };
  const timer = o.timeoutMs ? setTimeout(() => stop('timeout'), o.timeoutMs) : undefined;
  const onAbort = () => stop('abort');
  if (o.signal?.aborted) onAbort();
  o.signal?.addEventListener('abort', onAbort, { once: true });

  const exited = new Promise<{ code: number | null; sig: NodeJS.Signals | null }>((resolve) => {
    child.once('exit', (code, sig) => resolve({ code, sig }));
    child.once('error', () => resolve({ code: null, sig: null }));
  });
  let result: Awaited<typeof child> | undefined;
  try {
    const { code, sig } = await exited;
    await o.killTree(pgid);
    result = await child;
    const exitCode = code ?? (sig ? 128 + (osc.signals[sig] ?? 0) : (result.exitCode ?? 127));
    const stdoutInfo = out.stdout.finish();
    const stderrInfo = out.stderr.finish();
    let stderr = stderrInfo.text;
    if (result.failed && code === null && !sig && result.originalMessage) {
      // The process never started (ENOENT, EACCES): say why, like a shell would.
      stderr += `${stderr && !stderr.endsWith('\n') ? '\n' : ''}${result.originalMessage}\n`;
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
    o.signal?.removeEventListener('abort', onAbort);
  }
}
