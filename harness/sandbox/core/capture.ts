import { constants as osc } from 'node:os';
import { CappedOutput, DEFAULT_MAX_OUTPUT_BYTES } from './output.js';
import type { ExecResult, OutputStream } from './types.js';

const SIGNAL_NAMES = new Map<number, NodeJS.Signals>(Object.entries(osc.signals).map(([name, n]) => [n, name as NodeJS.Signals]));

/**
 * One command's stdout and stderr as it runs: capped, counted and hashed captures, passed on to
 * `onOutput` as they arrive, and the result in the local backend's shape once the command ended.
 */
export class OutputCapture {
  private readonly out: Record<OutputStream, CappedOutput>;

  constructor(
    maxOutputBytes: number | undefined,
    private readonly onOutput?: (stream: OutputStream, chunk: Buffer) => void,
    /** When the command was asked for (creating the exec or container counts as its time). */
    private readonly started = performance.now(),
  ) {
    const cap = maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES;
    this.out = { stdout: new CappedOutput(cap), stderr: new CappedOutput(cap) };
  }

  push(name: OutputStream, chunk: Buffer): void {
    this.out[name].push(chunk);
    this.onOutput?.(name, chunk);
  }

  /**
   * The result in the local backend's shape. A command killed by signal N is reported as exit
   * 128+N, as a shell reports it, so that is read back as the signal.
   */
  result(exitCode: number, flags: { timedOut: boolean; aborted: boolean }): ExecResult {
    const stdoutInfo = this.out.stdout.finish();
    const stderrInfo = this.out.stderr.finish();
    const signal = exitCode > 128 ? (SIGNAL_NAMES.get(exitCode - 128) ?? null) : null;
    return {
      exitCode,
      signal,
      stdout: stdoutInfo.text,
      stderr: stderrInfo.text,
      stdoutInfo,
      stderrInfo,
      timedOut: flags.timedOut,
      aborted: flags.aborted,
      truncated: stdoutInfo.truncated || stderrInfo.truncated,
      durationMs: Math.round(performance.now() - this.started),
    };
  }
}

/**
 * The functions waiting on each signal, called by its one 'abort' listener: an EventTarget's
 * addEventListener and removeEventListener cost tens of µs a command on a busy machine, a Set's
 * add and delete next to nothing.
 */
const waiting = new WeakMap<AbortSignal, Set<() => void>>();

/** Calls `fn` once `signal` aborts (soon, if it has); the function returned forgets it. `fn` must not throw. */
export function onAbort(signal: AbortSignal, fn: () => void): () => void {
  if (signal.aborted) {
    queueMicrotask(fn);
    return () => undefined;
  }
  let fns = waiting.get(signal);
  if (!fns) {
    const all = (fns = new Set());
    waiting.set(signal, all);
    signal.addEventListener('abort', () => [...all].forEach((f) => (all.delete(f), f())), { once: true });
  }
  fns.add(fn);
  const own = fns;
  return () => void own.delete(fn);
}

/** Calls `stop` once, on timeout or abort, and says which happened; `dispose` when done. */
export function stopper(o: { timeoutMs?: number; signal?: AbortSignal }, stop: () => void) {
  const state = { timedOut: false, aborted: false };
  const fire = (reason: 'timeout' | 'abort') => {
    if (state.timedOut || state.aborted) return;
    if (reason === 'timeout') state.timedOut = true;
    else state.aborted = true;
    stop();
  };
  const timer = o.timeoutMs ? setTimeout(() => fire('timeout'), o.timeoutMs) : undefined;
  const forget = o.signal ? onAbort(o.signal, () => fire('abort')) : undefined;
  return {
    state,
    dispose() {
      clearTimeout(timer);
      forget?.();
    },
  };
}
